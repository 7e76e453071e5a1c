package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// costColumn is one figure of the lock-cost table, read from each run. A
// column is one entry of costColumns (or faultColumns): a figure added there
// appears in the table, its ratio against the first lock, and the JSON.
type costColumn struct {
	// name heads the column; key names the figure in JSON (a metric path
	// where results has one).
	name, key string
	read      func(r *results.Result) (float64, bool)
	format    func(float64) string
}

// metricColumn is a column of one figure of the catalogue, formatted in its unit.
func metricColumn(name, metric string) costColumn {
	format := func(v float64) string { return fmt.Sprintf("%.4g", v) }
	if f, err := results.LookupFigure(metric); err == nil {
		format = f.Format
		if f.Unit == results.UnitRatio {
			format = func(v float64) string { return fmt.Sprintf("%.2f", v) }
		}
	}
	return costColumn{name: name, key: metric, format: format, read: func(r *results.Result) (float64, bool) {
		v, err := results.Metric(r, metric)
		return v, err == nil
	}}
}

var costColumns = []costColumn{
	metricColumn("acq/s", "throughput"),
	metricColumn("p50", "acquire.p50"),
	metricColumn("p95", "acquire.p95"),
	metricColumn("p99", "acquire.p99"),
	metricColumn("p99.9", "acquire.p999"),
	metricColumn("client/acq", "client.cpu_us_per_acquire"),
	metricColumn("cmds/acq", "servers.commands_per_acquire"),
	metricColumn("server/acq", "servers.cpu_us_per_acquire"),
	metricColumn("jain", "fairness.jain"),
}

// faultColumns are read from the runs under the lock's fault; "kept" is
// their throughput over the lock's own healthy throughput.
var faultColumns = []costColumn{
	metricColumn("fault acq/s", "throughput"),
	metricColumn("fault p99", "acquire.p99"),
	{name: "available", key: "availability", format: percent, read: func(r *results.Result) (float64, bool) {
		return AvailabilityOf(r), r.Contention.Attempts > 0
	}},
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// AvailabilityOf is 1 − errors/attempts of a run: the share of acquire
// attempts that did not fail (contended ones count as answered).
func AvailabilityOf(r *results.Result) float64 {
	if r == nil || r.Contention.Attempts == 0 {
		return 0
	}
	return 1 - float64(r.TotalErrors())/float64(r.Contention.Attempts)
}

// figure is one column's median over a lock's runs and its range; ok is
// false when any run lacks it (a partial median would pass for a measured one).
type figure struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	ok     bool
}

func figureOf(c costColumn, runs []*results.Result) figure {
	var xs []float64
	for _, r := range runs {
		if v, ok := c.read(r); ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 || len(xs) < len(runs) {
		return figure{}
	}
	lo, hi := minMax(xs)
	return figure{Median: results.Median(xs), Min: lo, Max: hi, ok: true}
}

// cell is the median, with [min–max] when repeats differ as shown, or "-".
func (f figure) cell(c costColumn, runs int) string {
	if !f.ok {
		return "-"
	}
	lo, hi := c.format(f.Min), c.format(f.Max)
	if runs > 1 && lo != hi {
		return fmt.Sprintf("%s [%s–%s]", c.format(f.Median), lo, hi)
	}
	return c.format(f.Median)
}

// ratioTo is the medians' ratio, or "-" when either is missing.
func (f figure) ratioTo(base figure) string {
	if !f.ok || !base.ok {
		return "-"
	}
	return ratio(f.Median, base.Median)
}

// CostSummary is one lock's row: medians and ranges of every column, their
// ratios against the first lock, and the runs behind them.
type CostSummary struct {
	Lock     string            `json:"lock"`
	Topology string            `json:"topology"`
	Runs     []string          `json:"runs"`
	Figures  map[string]figure `json:"figures"`
	Ratios   map[string]string `json:"ratios_to_first"`
	Fault    *FaultSummary     `json:"fault,omitempty"`
	figures  []figure
}

// FaultSummary is a lock's figures under its canonical fault.
type FaultSummary struct {
	Spec    string            `json:"spec"`
	Runs    []string          `json:"runs"`
	Figures map[string]figure `json:"figures"`
	// Kept is the faulted throughput's median over the healthy one's.
	Kept    *float64 `json:"throughput_kept,omitempty"`
	figures []figure
}

func runIDs(rs []*results.Result) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// SummarizeCost reduces each lock's runs to its row.
func SummarizeCost(rows []CostRuns) []CostSummary {
	out := make([]CostSummary, len(rows))
	for i, row := range rows {
		s := CostSummary{Lock: row.Spec.Lock, Topology: row.Spec.Topology, Runs: runIDs(row.Runs), Figures: map[string]figure{}, Ratios: map[string]string{}}
		for _, c := range costColumns {
			f := figureOf(c, row.Runs)
			s.figures = append(s.figures, f)
			if f.ok {
				s.Figures[c.key] = f
			}
		}
		if row.Fault != "" {
			s.Fault = faultSummary(row, s.figures[0])
		}
		out[i] = s
	}
	for i := range out {
		for j, c := range costColumns {
			out[i].Ratios[c.key] = out[i].figures[j].ratioTo(out[0].figures[j])
		}
	}
	return out
}

func faultSummary(row CostRuns, healthy figure) *FaultSummary {
	fs := &FaultSummary{Spec: row.Fault, Runs: runIDs(row.Faulted), Figures: map[string]figure{}}
	for _, c := range faultColumns {
		f := figureOf(c, row.Faulted)
		fs.figures = append(fs.figures, f)
		if f.ok {
			fs.Figures[c.key] = f
		}
	}
	if thr := fs.figures[0]; thr.ok && healthy.ok && healthy.Median > 0 {
		kept := thr.Median / healthy.Median
		fs.Kept = &kept
	}
	return fs
}

// WriteLockCost prints one row per lock: each figure's median (with its
// range over repeats) and its ratio against the first lock, then, where
// faults were run, the lock's throughput, p99 and availability under its
// fault and the share of its own throughput it kept.
func WriteLockCost(w io.Writer, rows []CostRuns) error {
	if len(rows) == 0 {
		return nil
	}
	sums := SummarizeCost(rows)
	faulted := slices.ContainsFunc(rows, func(r CostRuns) bool { return r.Fault != "" })
	header := []any{"lock", "topology", "runs"}
	for _, c := range costColumns {
		header = append(header, c.name, "×")
	}
	if faulted {
		for _, c := range faultColumns {
			header = append(header, c.name)
		}
		header = append(header, "kept")
	}
	t := results.NewTable(w, header...)
	for i, s := range sums {
		cells := []any{s.Lock, s.Topology, len(rows[i].Runs)}
		for j, c := range costColumns {
			cells = append(cells, s.figures[j].cell(c, len(rows[i].Runs)), s.figures[j].ratioTo(sums[0].figures[j]))
		}
		if faulted {
			cells = append(cells, faultCells(s.Fault, len(rows[i].Faulted))...)
		}
		_ = t.Append(cells...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render lock-cost table: %w", err)
	}
	writeCostNotes(w, rows)
	return nil
}

func faultCells(fs *FaultSummary, runs int) []any {
	if fs == nil {
		cells := make([]any, len(faultColumns)+1)
		for i := range cells {
			cells[i] = "n/a"
		}
		return cells
	}
	var cells []any
	for j, c := range faultColumns {
		cells = append(cells, fs.figures[j].cell(c, runs))
	}
	kept := "-"
	if fs.Kept != nil {
		kept = percent(*fs.Kept)
	}
	return append(cells, kept)
}

// writeCostNotes names each lock's fault and the machine sharing that
// colours local latency ratios.
func writeCostNotes(w io.Writer, rows []CostRuns) {
	var firsts []*results.Result
	for _, row := range rows {
		if row.Fault != "" {
			window := "-"
			if len(row.Faulted) > 0 {
				window = fmt.Sprintf("%.1fs", row.Faulted[0].DurationS)
			}
			fmt.Fprintf(w, "fault %s: %s (window %s)\n", row.Spec, row.Fault, window)
		}
		// One run per topology: the note is about the servers, not the lock.
		if len(row.Runs) > 0 && !slices.ContainsFunc(firsts, func(r *results.Result) bool { return r.Topology.Spec == row.Runs[0].Topology.Spec }) {
			firsts = append(firsts, row.Runs[0])
		}
	}
	var each []*results.Result
	for _, row := range rows {
		if len(row.Runs) > 0 {
			each = append(each, row.Runs[0])
		}
	}
	if note := results.ResourceNote(each); note != "" {
		fmt.Fprintln(w, note)
	}
	if note := results.SharedCPUNote(firsts); note != "" {
		fmt.Fprintln(w, note)
	}
}

// WriteLockCostJSON prints the rows' summaries as JSON.
func WriteLockCostJSON(w io.Writer, rows []CostRuns) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(SummarizeCost(rows))
}

// ratio renders v/base as "1.00x", or "-" when there is no base to divide by.
func ratio(v, base float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v/base)
}
