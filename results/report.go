package results

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Percentile axis: x is log10(1/(1-q)), so 90%, 99%, 99.9% … are evenly
// spaced, as in HdrHistogram's plots. Curves stop where the run had too few
// samples to resolve the tail, and never beyond 99.9999%.
const (
	pctAxisMaxDecades = 6.0
	pctAxisStep       = 0.05
)

// WriteReport writes one self-contained HTML page about runs: latency by
// percentile for every operation, acquisitions/s and acquire p99 over time
// with fault events, contention, incidents, errors and server cost as bars,
// and every run's configuration. It needs no network and no JavaScript: the
// charts are inline SVG. Every chart is an element of class "chart" with
// data-chart naming it; its drawn data are SVG elements of class "data", and
// a chart with nothing to draw says so in text and carries data-empty="true".
func WriteReport(w io.Writer, runs []*Result) error {
	return WriteReportWith(w, runs, ReportExtras{})
}

// WriteReportWith is WriteReport with optional sections drawn above the
// per-run charts: capacity curves and heat maps (see ReportExtras). With
// extras, runs may be empty: the page then holds the extras and a note.
func WriteReportWith(w io.Writer, runs []*Result, extras ReportExtras) error {
	if len(runs) == 0 && extras.empty() {
		return fmt.Errorf("report: no runs given")
	}
	runs = withNames(runs)
	page, err := buildReport(runs)
	if err != nil {
		return err
	}
	page.Checks = checkRows(runs, extras.Checks)
	addExtras(&page, runs, extras)
	t, err := template.New("report").Funcs(template.FuncMap{"f": coord, "join": func(xs []string) string { return strings.Join(xs, " ") }}).Parse(reportTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, page); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

type reportPage struct {
	Title    string
	Notice   string
	Extras   bool
	Runs     []runRow
	Checks   []checkRow
	Sections []section
	Config   configTable
}

// checkRow is one threshold's verdict on one run.
type checkRow struct {
	Expr, Run, Actual, Verdict string
	Failed                     bool
}

func checkRows(runs []*Result, cs []Check) []checkRow {
	names := map[string]string{}
	for _, r := range runs {
		names[r.ID] = RunName(r)
	}
	var out []checkRow
	for _, c := range cs {
		row := checkRow{Expr: c.Assertion.Expr, Run: c.RunID, Actual: c.ActualText(), Verdict: "pass", Failed: !c.Passed}
		if n, ok := names[c.RunID]; ok {
			row.Run = n
		}
		if !c.Passed {
			row.Verdict = "FAIL"
			if c.Err != "" {
				row.Verdict += ": " + c.Err
			}
		}
		out = append(out, row)
	}
	return out
}

type section struct {
	Title  string
	Charts []chart
}

type runRow struct {
	Color, ID, Name, Tags, Started, Headline, Duration, Acquired, Attempts, P50, P99, P999, Incidents, Errors, Rate string
	Partial, Unsafe                                                                                                 bool
}

type configTable struct {
	IDs  []string
	Rows []configRow
}

type configRow struct {
	Key     string
	Values  []string
	Differs bool
}

func buildReport(runs []*Result) (reportPage, error) {
	if len(runs) == 0 {
		return reportPage{Title: "lockbench report"}, nil
	}
	page := reportPage{Title: "lockbench report: " + runsTitle(runs), Config: buildConfigTable(runs)}
	for i, r := range runs {
		page.Runs = append(page.Runs, summaryRow(i, r))
	}
	var latency []chart
	for _, op := range opsPresent(runs) {
		c, err := latencyChart(op, runs)
		if err != nil {
			return reportPage{}, err
		}
		latency = append(latency, c)
	}
	if len(latency) == 0 {
		latency = append(latency, emptyChart("latency", "Latency by percentile", "no latencies recorded"))
	}
	page.Sections = []section{
		{"Latency by percentile", latency},
		{"Over time", []chart{throughputChart(runs), p99Chart(runs)}},
		{"Contention and safety", groupCharts(runs)},
		{"Server cost", append([]chart{serverChart(runs)}, nodeCharts(runs)...)},
	}
	return page, nil
}

// maxTitleNames is how many run names a title lists before it counts the rest.
const maxTitleNames = 3

// runsTitle names the page after its runs: their one label when they share
// it, else their names, the first few of many and how many more.
func runsTitle(runs []*Result) string {
	labels := map[string]bool{}
	for _, r := range runs {
		labels[r.Label] = true
	}
	if len(labels) == 1 && runs[0].Label != "" {
		if len(runs) == 1 {
			return runs[0].Label
		}
		return fmt.Sprintf("%s (%d runs)", runs[0].Label, len(runs))
	}
	var names []string
	for _, r := range runs {
		names = append(names, RunName(r))
	}
	if len(names) > maxTitleNames {
		return fmt.Sprintf("%s and %d more runs", strings.Join(names[:maxTitleNames-1], ", "), len(names)-maxTitleNames+1)
	}
	return strings.Join(names, ", ")
}

func summaryRow(i int, r *Result) runRow {
	row := runRow{
		Color: runColor(i), ID: r.ID, Name: RunName(r), Tags: formatTags(r.Tags), Started: r.StartedAt.Format(time.RFC3339), Headline: label(r),
		Duration: FigureText("duration_s", r.DurationS), Acquired: FigureText("throughput.acquired_per_s", r.Throughput.AcquiredPerS),
		Attempts: FigureText("throughput.attempts_per_s", r.Throughput.AttemptsPerS),
		P50:      NotApplicable, P99: NotApplicable, P999: NotApplicable, Incidents: fmt.Sprint(r.Incidents.Total()), Errors: fmt.Sprint(r.TotalErrors()),
		Rate: FigureText("contention.rate", r.Contention.Rate), Partial: r.Partial, Unsafe: r.Lock.Unsafe,
	}
	if s, ok := r.Ops[OpAcquire]; ok && s.Count > 0 {
		row.P50, row.P99, row.P999 = FormatUS(s.LatencyUS.P50), FormatUS(s.LatencyUS.P99), FormatUS(s.LatencyUS.P999)
	}
	return row
}

func emptyChart(name, title, why string) chart {
	return chart{Name: name, Title: title, Empty: why}
}

// opTable lists each run's exact figures of one operation under its chart.
func opTable(op string, runs []*Result) ([]string, *figureTable) {
	figs := opFigures(op)
	t := &figureTable{Header: []figureHeader{{Label: "run"}}}
	for _, f := range figs {
		t.Header = append(t.Header, figureHeader{Label: strings.TrimPrefix(f.Label, op+" "), Key: f.Key})
	}
	for _, r := range runs {
		row := []string{RunName(r)}
		for _, f := range figs {
			v, err := f.Value(r)
			cell := "-"
			if err == nil {
				cell = f.Format(v)
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return figureKeys(figs), t
}

// percentileCurve samples h along the percentile axis up to the tail its
// sample count can resolve (1 in n), at least to 90% so that even a
// one-sample histogram draws a line.
func percentileCurve(h *hdr.Histogram) (xs, ys []float64) {
	end := math.Min(math.Max(math.Log10(float64(h.TotalCount())), 1), pctAxisMaxDecades)
	steps := int(math.Floor(end/pctAxisStep + 1e-9))
	for k := 0; k <= steps; k++ {
		xs = append(xs, float64(k)*pctAxisStep)
	}
	if xs[len(xs)-1] < end {
		xs = append(xs, end)
	}
	for _, x := range xs {
		ys = append(ys, float64(h.ValueAtQuantile(100*(1-math.Pow(10, -x)))))
	}
	return xs, ys
}

func percentileTicks(end float64) []tick {
	ts := []tick{{0, "0%"}, {math.Log10(2), "50%"}}
	labels := []string{"90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}
	for d := 1; d <= int(math.Round(end)) && d <= len(labels); d++ {
		ts = append(ts, tick{float64(d), labels[d-1]})
	}
	return ts
}

// latencyChart draws op's latency by percentile, one line per run that
// recorded it, on a log latency axis: tails span orders of magnitude.
func latencyChart(op string, runs []*Result) (chart, error) {
	c := chart{Name: "latency-" + op, Title: op + " latency by percentile",
		Note: "x: percentile (log scale of 1/(1-p)); y: latency (log scale); from the HDR histograms"}
	c.Figures, c.Table = opTable(op, runs)
	type curve struct {
		xs, ys []float64
		run    int
	}
	var curves []curve
	lo, hi, end := math.Inf(1), 0.0, 1.0
	for i, r := range runs {
		s, ok := r.Ops[op]
		if !ok || s.Count == 0 {
			continue
		}
		h, err := DecodeHistogram(s.HDR)
		if err != nil {
			return chart{}, fmt.Errorf("report: run %s op %s: %w", r.ID, op, err)
		}
		if h.TotalCount() == 0 {
			continue
		}
		xs, ys := percentileCurve(h)
		curves = append(curves, curve{xs, ys, i})
		lo, hi, end = math.Min(lo, ys[0]), math.Max(hi, ys[len(ys)-1]), math.Max(end, xs[len(xs)-1])
	}
	if len(curves) == 0 {
		c.Empty = "no " + op + " latencies recorded (histograms empty)"
		return c, nil
	}
	ylo, yhi := logRange(lo, hi)
	p := newPlot(scale{d0: 0, d1: math.Ceil(end - 1e-9)}, scale{d0: ylo, d1: yhi, log: true})
	p.frame(&c, percentileTicks(math.Ceil(end-1e-9)), logTicks(ylo, yhi, FormatUS), "percentile", "latency")
	for _, cv := range curves {
		r := runs[cv.run]
		c.Lines = append(c.Lines, svgPoly{p.points(cv.xs, cv.ys), runColor(cv.run),
			fmt.Sprintf("%s %s: p50 %s, p99 %s, max %s", RunName(r), op, FormatUS(r.Ops[op].LatencyUS.P50), FormatUS(r.Ops[op].LatencyUS.P99), FormatUS(r.Ops[op].LatencyUS.Max))})
		c.Legend = append(c.Legend, legendItem{runColor(cv.run), RunName(r)})
	}
	return c, nil
}

// step is one second of a series as a horizontal segment, from the previous
// point's end to this one's: a point counts what happened in that interval.
type step struct {
	from, to, v float64
}

// seriesSteps turns r's series into runs of contiguous steps; value says
// whether a second has a figure at all (a second with no acquisition has no
// p99), and a missing second breaks the line rather than drawing a zero.
func seriesSteps(r *Result, value func(p SeriesPoint, dt float64) (float64, bool)) [][]step {
	var out [][]step
	var cur []step
	prev := 0.0
	for _, p := range r.Series {
		dt := p.ElapsedS - prev
		v, ok := 0.0, false
		if dt > 0 {
			v, ok = value(p, dt)
			v = clampData(v)
		}
		if ok {
			cur = append(cur, step{prev, p.ElapsedS, v})
		} else if len(cur) > 0 {
			out, cur = append(out, cur), nil
		}
		prev = math.Max(prev, p.ElapsedS)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func stepPoints(p plot, steps []step) string {
	var xs, ys []float64
	for _, s := range steps {
		xs = append(xs, s.from, s.to)
		ys = append(ys, s.v, s.v)
	}
	return p.points(xs, ys)
}

type seriesSpec struct {
	name, title, yLabel, empty string
	logY                       bool
	format                     func(float64) string
	value                      func(p SeriesPoint, dt float64) (float64, bool)
	// offered, when set, is what was offered in a second, drawn dotted
	// beside value for the runs that record it; offeredNote explains it.
	offered     func(p SeriesPoint, dt float64) (float64, bool)
	offeredNote string
}

// seriesChart draws one per-second figure of every run over time, with the
// faults each run injected marked on the time axis.
func seriesChart(spec seriesSpec, runs []*Result) chart {
	c := chart{Name: spec.name, Title: spec.title, Note: "per second; dashed lines and shaded spans mark injected faults"}
	segs := make([][][]step, len(runs))
	offered := make([][][]step, len(runs))
	lo, hi, tmax := math.Inf(1), 0.0, 0.0
	widen := func(seg []step) {
		for _, s := range seg {
			lo, hi, tmax = math.Min(lo, s.v), math.Max(hi, s.v), math.Max(tmax, s.to)
		}
	}
	for i, r := range runs {
		segs[i] = seriesSteps(r, spec.value)
		if spec.offered != nil {
			offered[i] = seriesSteps(r, spec.offered)
		}
		for _, seg := range append(append([][]step(nil), segs[i]...), offered[i]...) {
			widen(seg)
		}
		for _, f := range faultMarks(r) {
			tmax = math.Max(tmax, clampData(math.Max(f.AtS, f.EndS)))
		}
	}
	if math.IsInf(lo, 1) {
		c.Empty = spec.empty
		return c
	}
	xt, xtop := linearTicks(tmax, func(v float64) string { return fmt.Sprintf("%gs", v) })
	var p plot
	if spec.logY {
		ylo, yhi := logRange(lo, hi)
		p = newPlot(scale{d0: 0, d1: xtop}, scale{d0: ylo, d1: yhi, log: true})
		p.frame(&c, xt, logTicks(ylo, yhi, spec.format), "elapsed", spec.yLabel)
	} else {
		yt, ytop := linearTicks(hi, spec.format)
		p = newPlot(scale{d0: 0, d1: xtop}, scale{d0: 0, d1: ytop})
		p.frame(&c, xt, yt, "elapsed", spec.yLabel)
	}
	for i, r := range runs {
		for _, seg := range segs[i] {
			c.Lines = append(c.Lines, svgPoly{stepPoints(p, seg), runColor(i), RunName(r)})
		}
		for _, seg := range offered[i] {
			c.Offered = append(c.Offered, svgPoly{stepPoints(p, seg), runColor(i), RunName(r) + " (offered)"})
		}
		if len(segs[i]) > 0 || len(offered[i]) > 0 {
			c.Legend = append(c.Legend, legendItem{runColor(i), RunName(r)})
		}
	}
	if len(c.Offered) > 0 {
		c.Note = "per second; " + spec.offeredNote + "; dashed lines and shaded spans mark injected faults"
	}
	markFaults(&c, p, runs)
	return c
}

// faultMarks returns r's faults: the recorded events with their times, or,
// for a run that kept only the per-second names, one event per mention.
func faultMarks(r *Result) []FaultEvent {
	if len(r.Faults) > 0 {
		return r.Faults
	}
	var out []FaultEvent
	for _, p := range r.Series {
		for _, f := range p.Faults {
			out = append(out, FaultEvent{Spec: f, AtS: p.ElapsedS})
		}
	}
	return out
}

// markFaults marks every distinct fault once: runs of one scenario share
// their faults, and one label naming all of them reads better than a stack.
func markFaults(c *chart, p plot, runs []*Result) {
	type mark struct {
		f   FaultEvent
		ids []string
	}
	var marks []mark
	index := map[FaultEvent]int{}
	for _, r := range runs {
		for _, f := range faultMarks(r) {
			// Runs that shared a fault share its mark, whatever each had at stake.
			key := f
			key.Exposure = nil
			i, ok := index[key]
			if !ok {
				i = len(marks)
				index[key] = i
				marks = append(marks, mark{f: f})
			}
			marks[i].ids = append(marks[i].ids, r.ID)
		}
	}
	for n, m := range marks {
		f, x := m.f, p.x.at(clampData(m.f.AtS))
		if f.EndS > f.AtS {
			c.Bands = append(c.Bands, svgRect{x, p.y.r1, p.x.at(clampData(f.EndS)) - x, p.y.r0 - p.y.r1, "", f.Spec})
		}
		c.Marks = append(c.Marks, svgLine{x, p.y.r1, x, p.y.r0, "fault"})
		text := f.Spec
		if len(runs) > 1 {
			text = strings.Join(m.ids, ", ") + ": " + text
		}
		if f.Error != "" {
			text += " (failed: " + f.Error + ")"
		} else if x := f.Exposure; x != nil && len(m.ids) == 1 {
			text += fmt.Sprintf(" (%d inside, %d valid leases)", x.Inside, x.ValidLeases)
		}
		c.Texts = append(c.Texts, svgText{x + 3, p.y.r1 + 10 + 11*float64(n%4), "start", "fault-label", text})
	}
}

func throughputChart(runs []*Result) chart {
	return seriesChart(seriesSpec{
		name: "throughput", title: "Acquisitions per second over time", yLabel: "acquisitions/s",
		empty:  "no per-second series recorded",
		format: func(v float64) string { return FigureText("throughput.acquired_per_s", v) },
		value:  func(p SeriesPoint, dt float64) (float64, bool) { return float64(p.Acquired) / dt, true },
		offered: func(p SeriesPoint, dt float64) (float64, bool) {
			if p.Offered == nil {
				return 0, false
			}
			return float64(*p.Offered) / dt, true
		},
		offeredNote: "dotted lines: requests offered per second (open loop), against the acquisitions served",
	}, runs)
}

func p99Chart(runs []*Result) chart {
	return seriesChart(seriesSpec{
		name: "acquire-p99", title: "Acquire p99 over time", yLabel: "acquire p99", logY: true,
		empty:  "no per-second acquire p99 recorded",
		format: FormatUS,
		value:  func(p SeriesPoint, _ float64) (float64, bool) { return p.P99US, p.P99US > 0 },
	}, runs)
}

// figureRow builds a bar row of one figure; a run without it shows n/a.
func figureRow(f Figure, runs []*Result) barRow {
	row := barRow{label: f.Label, key: f.Key, format: f.Format}
	for _, r := range runs {
		v, err := f.Value(r)
		row.values = append(row.values, clampData(v))
		row.has = append(row.has, err == nil)
	}
	return row
}

// figureChart draws figs as bar rows, or says why when no run has any of
// them non-zero (or at all).
func figureChart(name, title string, runs []*Result, figs []Figure, empty string) chart {
	return figureChartOf(name, title, runs, figs, empty, func(*Result) bool { return true })
}

// figureChartOf is figureChart over the runs that measure figs at all
// (measured says which): the others are left out, not drawn as zeros.
func figureChartOf(name, title string, runs []*Result, figs []Figure, empty string, measured func(*Result) bool) chart {
	var rows []barRow
	nonZero := false
	for _, f := range figs {
		row := figureRow(f, runs)
		for i, r := range runs {
			row.has[i] = row.has[i] && measured(r)
		}
		for i, v := range row.values {
			nonZero = nonZero || (row.has[i] && v != 0)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 || !nonZero {
		c := emptyChart(name, title, empty)
		for _, f := range figs {
			c.Figures = append(c.Figures, f.Key)
		}
		return c
	}
	return barChart(name, title, runs, rows)
}

// groupCharts draws the report's per-run figures, one chart a group of the
// catalogue, for the groups the runs have.
func groupCharts(runs []*Result) []chart {
	figs := FiguresFor(runs)
	var out []chart
	if open := InGroup(figs, GroupOpenLoop); len(open) > 0 {
		c := figureChartOf("open-loop", "Open-loop requests", runs, open, "no open-loop requests", (*Result).OpenLoop)
		c.Note = "dropped requests never started before the window closed; time_to_acquire counts each from its intended start to the window's end, a lower bound"
		out = append(out, c)
	}
	out = append(out,
		figureChart("contention", "Contention", runs, InGroup(figs, GroupContention), "no acquire attempts recorded"),
		figureChart("sections", "How critical sections ended, and other counts", runs, InGroup(figs, GroupCounters), "no critical section recorded"),
		figureChart("incidents", "Incidents", runs, InGroup(figs, GroupIncidents),
			"no incidents recorded: every lease outlived its work, no overlaps, no stale writes"))
	if fair := InGroup(figs, GroupFairness); len(fair) > 0 {
		c := figureChart("fairness", "Fairness across workers", runs, fair, "no per-worker acquisitions recorded")
		c.Note = "Jain's index is 1 when every worker acquired as often, 1/n when one took them all"
		out = append(out, c)
	}
	out = append(out, figureChart("errors", "Errors by kind", runs, InGroup(figs, GroupErrors), "no errors recorded"))
	return out
}

// serverChart shows the servers' commands and CPU per acquisition; a run
// whose servers refused INFO shows n/a rather than a zero that reads as free.
func serverChart(runs []*Result) chart {
	const title = "Server and client cost per acquisition"
	if !anyServers(runs) {
		why := "no server cost recorded"
		for _, r := range runs {
			if r.Servers != nil && r.Servers.Unavailable != "" {
				why += fmt.Sprintf("; %s: %s", RunName(r), r.Servers.Unavailable)
			}
		}
		c := figureChart("server-cost", title, runs, keepSent(runs, clientFigures()), why)
		return c
	}
	c := figureChart("server-cost", title, runs, keepSent(runs, append(serverFigures(), clientFigures()...)), "no server cost recorded")
	c.Note = "all nodes summed; bars scaled per row"
	for _, r := range runs {
		if note := SaturationNote(r); note != "" {
			c.Note += "; " + RunName(r) + ": " + strings.TrimPrefix(note, "note: ")
		}
	}
	for _, r := range runs {
		if r.Servers != nil && len(r.Servers.Unmeasured) > 0 {
			c.Note += fmt.Sprintf("; %s: %s", RunName(r), r.Servers.Scope())
		}
	}
	return c
}

// nodeCharts shows each master on its own, when a run had several: a
// quorum can hide one failing master from every summed figure.
func nodeCharts(runs []*Result) []chart {
	masters := 0
	for _, r := range runs {
		masters = max(masters, len(r.NodeOutcomes))
	}
	if masters < 2 {
		return nil
	}
	var rows []barRow
	for i := range masters {
		for _, f := range []struct {
			name string
			get  func(n NodeOutcome) int64
		}{
			{"acquired", func(n NodeOutcome) int64 { return n.Acquired }},
			{"contended", func(n NodeOutcome) int64 { return n.Contended }},
			{"errors", func(n NodeOutcome) int64 { return n.Errors }},
			{"timeouts", func(n NodeOutcome) int64 { return n.Timeouts }},
		} {
			row := barRow{label: fmt.Sprintf("master %d %s", i, f.name), format: Figure{Unit: UnitCount}.Format} // per-master counts: whole, as every count
			for _, r := range runs {
				has := i < len(r.NodeOutcomes)
				v := 0.0
				if has {
					v = float64(f.get(r.NodeOutcomes[i]))
				}
				row.values, row.has = append(row.values, v), append(row.has, has)
			}
			rows = append(rows, row)
		}
		row := barRow{label: fmt.Sprintf("master %d server cpu", i), format: FormatUS}
		for _, r := range runs {
			// Only runs with masters to tell apart: a single-instance run's
			// server CPU is in the server cost chart.
			has := len(r.NodeOutcomes) > 1 && r.Servers != nil && i < len(r.Servers.Nodes) && r.Servers.Nodes[i].Error == ""
			v := 0.0
			if has {
				v = r.Servers.Nodes[i].CPUUS
			}
			row.values, row.has = append(row.values, clampData(v)), append(row.has, has)
		}
		rows = append(rows, row)
	}
	c := barChart("masters", "Per master: SET outcomes and server CPU over the window", runs, rows)
	c.Note = "errors and timeouts on one master do not fail a quorum acquisition, so only this chart shows them"
	return []chart{c}
}

func figureKeys(fs []Figure) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key
	}
	return out
}

// buildConfigTable lists what each run measured: identity, lock, topology
// and every config field, marking rows where the runs differ.
func buildConfigTable(runs []*Result) configTable {
	t := configTable{}
	fixed := []struct {
		key string
		get func(r *Result) string
	}{
		{"id", func(r *Result) string { return r.ID }},
		{"label", func(r *Result) string { return r.Label }},
		{"tags", func(r *Result) string { return formatTags(r.Tags) }},
		{"started_at", func(r *Result) string { return r.StartedAt.Format(time.RFC3339) }},
		{"duration_s", func(r *Result) string { return num(r.DurationS) }},
		{"partial", func(r *Result) string { return fmt.Sprint(r.Partial) }},
		{"lock.name", func(r *Result) string { return r.Lock.Name }},
		{"lock.fencing", func(r *Result) string { return fmt.Sprint(r.Lock.Fencing) }},
		{"lock.unsafe", func(r *Result) string { return fmt.Sprint(r.Lock.Unsafe) }},
		{"lock.nodes", func(r *Result) string { return fmt.Sprint(r.Lock.Nodes) }},
		{"topology.spec", func(r *Result) string { return r.Topology.Spec }},
		{"topology.provider", func(r *Result) string { return r.Topology.Provider }},
		{"topology.nodes", func(r *Result) string { return strings.Join(r.Topology.Nodes, " ") }},
		{"topology.server_version", func(r *Result) string { return r.Topology.ServerVersion }},
	}
	keys := map[string]bool{}
	for _, r := range runs {
		t.IDs = append(t.IDs, RunName(r))
		for k := range r.Config {
			keys[k] = true
		}
	}
	for _, f := range fixed {
		t.Rows = append(t.Rows, configRowOf(f.key, runs, f.get))
	}
	for _, k := range sortedKeys(keys) {
		t.Rows = append(t.Rows, configRowOf("config."+k, runs, func(r *Result) string {
			v, ok := r.Config[k]
			return jsonText(unsetOr(v, ok))
		}))
	}
	return t
}

func configRowOf(key string, runs []*Result, get func(r *Result) string) configRow {
	row := configRow{Key: key}
	for _, r := range runs {
		v := get(r)
		row.Differs = row.Differs || (len(row.Values) > 0 && v != row.Values[0])
		row.Values = append(row.Values, v)
	}
	return row
}
