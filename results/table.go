package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/lockbench/lockbench/workloads"
)

// NewTable returns a table writer in lockbench's style: ASCII borders (they
// survive every terminal and log), headers as written, numbers right-aligned.
// Its columns are figures of the catalogue or declared label columns.
func NewTable(w io.Writer, cols ...TableColumn) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignment(tw.AlignRight),
	)
	t.Header(headers(cols)...)
	return t
}

// labelsLeft left-aligns the first column of t: it holds names, which read
// better flush left, while the figures stay right-aligned for comparison.
func labelsLeft(t *tablewriter.Table) *tablewriter.Table {
	return t.Configure(func(cfg *tablewriter.Config) {
		cfg.Row.Alignment.PerColumn = []tw.Align{tw.AlignLeft}
	})
}

// FormatUS renders microseconds with a unit that keeps 3 significant digits.
func FormatUS(us float64) string {
	switch {
	case us == 0:
		return "0µs"
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 10_000:
		return fmt.Sprintf("%.2fms", us/1000)
	case us < 1_000_000:
		return fmt.Sprintf("%.1fms", us/1000)
	}
	return fmt.Sprintf("%.2fs", us/1e6)
}

// Headline is the one-line description of a run.
func Headline(r *Result) string {
	unsafe := ""
	if r.Lock.Unsafe {
		unsafe = " [UNSAFE lock: kept only to measure its hazard]"
	}
	partial := ""
	if r.Partial {
		partial = " [PARTIAL: interrupted]"
	}
	name := "run " + r.ID
	if r.Label != "" {
		name = fmt.Sprintf("run %q (%s)", r.Label, r.ID)
	}
	lock := r.Lock.Name
	if r.Lock.Library != "" {
		lock += fmt.Sprintf(" (%s %s)", r.Lock.Library, r.Lock.Version)
	}
	// An etcd run records "etcd 3.4.23", a postgres one "PostgreSQL 15.x":
	// the product is named. A Redis one records the bare version, which is
	// named here, without asking which kind of topology ran.
	server := r.Topology.ServerVersion
	if server == "" || (server[0] >= '0' && server[0] <= '9') {
		server = "redis " + server
	}
	return fmt.Sprintf("%s  %s  topology %s (%s, %s, %s)  lock %s%s  %s%s",
		name, r.StartedAt.Format(time.RFC3339), r.Topology.Spec, r.Topology.Provider, plural(len(r.Topology.Nodes), "node"),
		server, lock, unsafe, describeConfig(r), partial)
}

// plural renders "1 node", "3 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func describeConfig(r *Result) string {
	var parts []string
	for _, k := range []string{"workload", "concurrency", "keys", "ttl", "hold", "rate"} {
		if v, ok := r.Config[k]; ok && fmt.Sprint(v) != "" && fmt.Sprint(v) != "0" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, " ")
}

// WriteSummary renders one run as the tables `lockbench run` prints, each
// section a group of the catalogue's figures.
func WriteSummary(w io.Writer, r *Result) error {
	return Wrapping(w, func(w io.Writer) error { return writeSummaryText(w, r) })
}

func writeSummaryText(w io.Writer, r *Result) error {
	fmt.Fprintln(w, Headline(r))
	if len(r.Tags) > 0 {
		fmt.Fprintf(w, "tags: %s\n", formatTags(r.Tags))
	}
	if len(r.MergedFrom) > 0 {
		fmt.Fprintf(w, "merged from %d generators: %s\n", len(r.MergedFrom), strings.Join(r.MergedFrom, ", "))
	}
	fmt.Fprintf(w, "%s measured: %s acquisitions/s, %s attempts/s\n", FigureText("duration_s", r.DurationS),
		FigureText("throughput.acquired_per_s", r.Throughput.AcquiredPerS), FigureText("throughput.attempts_per_s", r.Throughput.AttemptsPerS))
	if r.OpenLoop() {
		c := r.Counters
		fmt.Fprintf(w, "open loop: %d requests scheduled in the window, %d served (%d late by over 1ms), %d dropped (never started; in time_to_acquire up to the window's end)\n",
			c.Scheduled, c.Served, c.Late, c.Dropped)
	}
	if configText(r, "pipeline") == "auto" {
		fmt.Fprintln(w, "pipeline auto: the workers' commands were batched into pipelines, so each latency includes the batching delay")
	}
	if r.Counters.Unfinished > 0 {
		fmt.Fprintf(w, "%s cut off unfinished\n", Count(r.Counters.Unfinished, "critical section of the window was|critical sections of the window were"))
	}
	fmt.Fprintln(w)
	if err := writeOps(w, r); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return writeCounts(w, r)
}

// writeOps is one row per operation recorded, one column per latency figure.
func writeOps(w io.Writer, r *Result) error {
	header := []TableColumn{LabelColumn("op"), RowFigureColumn("count"), RowFigureColumn("errors")}
	for _, p := range percentileFields {
		header = append(header, RowFigureColumn(p.label))
	}
	t := NewTable(w, header...)
	for _, op := range opsPresent([]*Result{r}) {
		row := []any{}
		for _, f := range opFigures(op) {
			v, err := f.Value(r)
			cell := NotMeasuredText(err)
			if err == nil {
				cell = f.Format(v)
			}
			row = append(row, cell)
		}
		_ = t.Append(append([]any{op}, row...)...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render ops table: %w", err)
	}
	return nil
}

// writeCounts prints contention beside incidents, then the lines of the
// groups a run may have: counts of how sections ended, fairness, errors by
// kind, per-master outcomes, server cost.
func writeCounts(w io.Writer, r *Result) error {
	figs := FiguresFor([]*Result{r})
	left := append(InGroup(figs, GroupContention), figuresNamed("errors")...)
	right := InGroup(figs, GroupIncidents)
	right = right[:len(right)-1] // the total is the sum of the rows above it
	t := NewTable(w, RowFigureColumn("contention"), RowFigureColumn(""), RowFigureColumn("incidents"), RowFigureColumn(""))
	for i := range max(len(left), len(right)) {
		row := make([]any, 0, 4)
		for _, side := range [][]Figure{left, right} {
			if i < len(side) {
				row = append(row, side[i].Label, figureText(side[i], r))
			} else {
				row = append(row, "", "")
			}
		}
		_ = t.Append(row...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render counts table: %w", err)
	}
	if line := nonZeroLine(InGroup(figs, GroupCounters), r); line != "" {
		fmt.Fprintf(w, "counts: %s\n", line)
	}
	if f := r.Fairness; f != nil && sharedKeys(r) {
		fmt.Fprintf(w, "fairness over %s: Jain's index %s, acquisitions per worker %d to %d, %d starved, worst worker's time_to_acquire p99 %s\n",
			plural(f.Workers, "worker"), FigureText("fairness.jain", f.Jain), f.MinAcquired, f.MaxAcquired, f.Starved, FormatUS(f.WorstTimeToAcquireP99US))
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "errors by kind: %s\n", formatErrors(r.Errors))
	}
	writeNodeOutcomes(w, r)
	if note := SaturationNote(r); note != "" {
		fmt.Fprintln(w, note)
	}
	if note := UnservedNote(r); note != "" {
		fmt.Fprintln(w, note)
	}
	if note := LateWindowNote(r); note != "" {
		fmt.Fprintln(w, note)
	}
	if line := ServerCostLine(r); line != "" {
		fmt.Fprintln(w, line)
	}
	return nil
}

// UnservedNote says so when a closed-loop run with a key per worker left
// workers without a single acquisition in the window (fairness.starved):
// with nobody to contend with, only the generator kept them waiting (its
// connections, its CPUs, or a window too short to reach them all), so the
// run did not serve the concurrency it was asked for. "" otherwise. With
// shared keys the fairness line says how many starved, and contention
// can starve a worker.
func UnservedNote(r *Result) string {
	f := r.Fairness
	if f == nil || f.Starved == 0 || sharedKeys(r) || r.OpenLoop() {
		return ""
	}
	return fmt.Sprintf("note: %d of the %s acquired nothing in the window, each on a key of its own: the generator did not serve them "+
		"(its connections, --pool-size, or its CPUs); fewer workers, --pipeline auto where the lock takes it, or more generators "+
		"(see Beyond one machine) would serve them",
		f.Starved, plural(f.Workers, "worker"))
}

// lateWindowShare is how far past --duration a measured window may run
// before the run table says so: a busy host wakes the window's closer late
// by milliseconds; a tenth more is the generator falling behind.
const lateWindowShare = 0.1

// LateWindowNote says so when the measured window ran more than a tenth
// past the --duration asked for: the generator's host could not close it
// on time (too many workers for its CPUs), so the rates are over the
// longer window measured, not the one asked. "" otherwise, and for a run
// cut short.
func LateWindowNote(r *Result) string {
	asked, ok := r.Config["duration"].(string)
	if !ok || r.Partial {
		return ""
	}
	d, err := time.ParseDuration(asked)
	if err != nil || d <= 0 || r.DurationS <= d.Seconds()*(1+lateWindowShare) {
		return ""
	}
	measured := FigureText("duration_s", r.DurationS)
	return fmt.Sprintf("note: the window ran %s of the %v asked: the generator's host closed it late (too busy for its workers); "+
		"every rate is over the %s measured", measured, d, measured)
}

// SaturationNote warns when the generator used nearly all its CPUs: then
// the figures are the generator's limit, not the servers'. "" otherwise.
func SaturationNote(r *Result) string {
	if !r.Client.Saturated() {
		return ""
	}
	cpus := 0
	if len(r.Hosts) > 0 {
		cpus = r.Hosts[0].GOMAXPROCS
	}
	return fmt.Sprintf("note: the generator used %.0f%% of its %s over the window, so these figures are bounded by the generator; "+
		"--pipeline auto or more generators (see Beyond one machine) would show the servers' limit", 100*r.Client.CPUShare, plural(cpus, "CPU"))
}

// figureText is one figure of r as a table cell at the figure's
// precision, or why r lacks it (n/a, or not measured).
func figureText(f Figure, r *Result) string {
	v, err := f.Value(r)
	if err != nil {
		return NotMeasuredText(err)
	}
	return f.Format(v)
}

// nonZeroLine lists figs that are not zero in r, "label value" each.
func nonZeroLine(figs []Figure, r *Result) string {
	var parts []string
	for _, f := range figs {
		if v, err := f.Value(r); err == nil && v != 0 {
			parts = append(parts, f.Label+" "+f.Format(v))
		}
	}
	return strings.Join(parts, ", ")
}

// sharedKeys reports whether workers shared keys, which is when fairness
// among them means something: with one key each, every worker has its own.
func sharedKeys(r *Result) bool {
	k := fmt.Sprint(r.Config["keys"])
	return k != "unique" && k != "0" && k != "<nil>"
}

// writeNodeOutcomes prints one line per master when any of them had errors
// or timeouts: a quorum can hide a dead master from every other figure.
func writeNodeOutcomes(w io.Writer, r *Result) {
	bad := slices.ContainsFunc(r.NodeOutcomes, func(n NodeOutcome) bool { return n.Errors+n.Timeouts > 0 })
	if !bad {
		return
	}
	for i, n := range r.NodeOutcomes {
		fmt.Fprintf(w, "master %d %s: %d acquired, %d contended, %d errors, %d timeouts\n", i, n.Node, n.Acquired, n.Contended, n.Errors, n.Timeouts)
	}
}

func formatTags(tags map[string]string) string {
	keys := sortedKeys(tags)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + tags[k]
	}
	return strings.Join(parts, " ")
}

// RunName is how lists, legends and titles name a run: its --label, or
// its id when it has none; in a report, the name RunNames set it apart by.
func RunName(r *Result) string {
	if r.shownName != "" {
		return r.shownName
	}
	if r.Label != "" {
		return r.Label
	}
	return r.ID
}

// OpenLoop reports whether the run was open loop (requests at a rate).
func (r *Result) OpenLoop() bool { return r.Counters.Scheduled > 0 }

// TotalErrors is the run's failures of every kind.
func (r *Result) TotalErrors() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

func formatErrors(m map[string]int64) string {
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// WriteList renders runs as `results ls` prints them, one line a run, as a
// plain listing to read and grep: name (the label, in full), id, topology,
// lock, workload (a preset whose flags were changed named with them, as
// long-work+hold), load (concurrency, or rate in open loop), number of
// faults, acquisitions/s, acquire p99, incidents and group. A group of
// several runs listed is shown by a short number, named in full under the
// listing, so the listing fits a terminal; results show takes the full
// name. A group of one run listed is that run, already named. JSON and CSV
// (results ls --format) carry every field in full.
func WriteList(w io.Writer, runs []*Result) error {
	// Label, faults and group only where some run has one.
	labels := slices.ContainsFunc(runs, func(r *Result) bool { return r.Label != "" })
	faults := slices.ContainsFunc(runs, func(r *Result) bool { return len(r.Faults) > 0 })
	groups := listGroups(runs)
	// Repeats are shown as groups; a group with one run here adds nothing
	// to the run's own name.
	groups = slices.DeleteFunc(groups, func(g string) bool {
		n := 0
		for _, r := range runs {
			if k, _ := r.Config["group"].(string); k == g {
				n++
			}
		}
		return n < 2
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(cells ...string) {
		if len(groups) == 0 {
			cells = cells[:len(cells)-1]
		}
		if !faults {
			cells = append(cells[:6], cells[7:]...)
		}
		if !labels {
			cells = cells[1:]
		}
		_, _ = io.WriteString(tw, strings.Join(cells, "\t")+"\n")
	}
	changed := map[string]map[string]bool{}
	row("name", "id", "topology", "lock", "workload", "load", "faults", "acq/s", "p99", "incidents", "group")
	for _, r := range runs {
		p99 := NotMeasured
		if s, ok := r.Ops[OpAcquire]; ok && s.Count > 0 {
			p99 = FormatUS(s.LatencyUS.P99)
		}
		id := r.ID
		if r.Partial {
			id += " (partial)"
		}
		group := NotApplicable
		if g, _ := r.Config["group"].(string); slices.Contains(groups, g) {
			group = fmt.Sprintf("g%d", slices.Index(groups, g)+1)
		}
		row(orDash(r.Label), id, r.Topology.Spec, r.Lock.Name, workloadCell(r, changed), loadOf(r),
			strconv.Itoa(len(r.Faults)), FigureText("throughput.acquired_per_s", r.Throughput.AcquiredPerS), p99, strconv.FormatInt(r.Incidents.Total(), 10), group)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("render list: %w", err)
	}
	for i, g := range groups {
		fmt.Fprintf(w, "g%d: group %s\n", i+1, g)
	}
	for _, name := range sortedKeys(changed) {
		fmt.Fprintf(w, "%s*: %s with its %s changed\n", name, name, strings.Join(sortedKeys(changed[name]), ", "))
	}
	return nil
}

// PresetChanges are the flags of the run's --workload preset that the run
// set otherwise: a run whose hold was not long-work's is not long-work. Flags
// a listing shows in their own columns (lock, load) are left to them.
func PresetChanges(r *Result) []string {
	p, err := workloads.LookupPreset(configText(r, "workload"))
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(p.Flags) {
		switch k {
		case "lock", "concurrency", "rate":
			continue
		}
		if got := configText(r, k); got != "" && got != p.Flags[k] {
			out = append(out, k)
		}
	}
	return out
}

// workloadCell is the listing's workload: the preset, marked * where the run
// changed some of its flags, which a note under the listing names (changed
// collects them by preset).
func workloadCell(r *Result, changed map[string]map[string]bool) string {
	name := configText(r, "workload")
	flags := PresetChanges(r)
	if len(flags) == 0 {
		return orDash(name)
	}
	if changed[name] == nil {
		changed[name] = map[string]bool{}
	}
	for _, f := range flags {
		changed[name][f] = true
	}
	return name + "*"
}

// listGroups are the groups of runs, in the order the listing meets them.
func listGroups(runs []*Result) []string {
	var out []string
	for _, r := range runs {
		if g, _ := r.Config["group"].(string); g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// loadOf is a run's load: its concurrency in closed loop, its request rate
// in open loop.
func loadOf(r *Result) string {
	if rate := configText(r, "rate"); r.OpenLoop() || (rate != "" && rate != "0") {
		return rateText(rate)
	}
	return "c=" + orDash(configText(r, "concurrency"))
}

// rateText is --rate as a load: 500 is 500/s, 50/100ms stays as given, and
// stages (100,2000:30s,2000:1m) are the range they ramp over, 100..2000/s,
// which fits a column where the whole schedule would not. The stages are
// read by workloads.ParseRate, which owns their syntax; text it refuses is
// shown as stored.
func rateText(rate string) string {
	if strings.Contains(rate, "/") {
		return rate
	}
	r, err := workloads.ParseRate("rate", rate)
	switch {
	case err != nil:
		return rate
	case !r.Staged():
		return rate + "/s"
	}
	lo, hi := r.Start, r.Start
	for _, s := range r.Stages {
		lo, hi = min(lo, s.Target), max(hi, s.Target)
	}
	return strconv.FormatFloat(lo, 'f', -1, 64) + ".." + strconv.FormatFloat(hi, 'f', -1, 64) + "/s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ListEntry is one run as results ls --format json|csv gives it: every
// field of the listing in full. A figure the run lacks is null (empty in CSV).
type ListEntry struct {
	ID           string   `json:"id"`
	Label        string   `json:"label,omitempty"`
	StartedAt    string   `json:"started_at"`
	Topology     string   `json:"topology"`
	Lock         string   `json:"lock"`
	Workload     string   `json:"workload,omitempty"`
	Concurrency  string   `json:"concurrency,omitempty"`
	Rate         string   `json:"rate,omitempty"`
	DurationS    float64  `json:"duration_s"`
	Partial      bool     `json:"partial,omitempty"`
	Faults       []string `json:"faults,omitempty"`
	AcquiredPerS float64  `json:"acquired_per_s"`
	AcquireP99US *float64 `json:"acquire_p99_us"`
	Incidents    int64    `json:"incidents"`
	Group        string   `json:"group,omitempty"`
}

// ListEntries are runs as results ls --format json|csv gives them.
func ListEntries(runs []*Result) []ListEntry {
	out := make([]ListEntry, len(runs))
	for i, r := range runs {
		e := ListEntry{ID: r.ID, Label: r.Label, StartedAt: r.StartedAt.Format(time.RFC3339), Topology: r.Topology.Spec, Lock: r.Lock.Name,
			Workload: configText(r, "workload"), Concurrency: configText(r, "concurrency"), Rate: configText(r, "rate"), DurationS: r.DurationS,
			Partial: r.Partial, AcquiredPerS: r.Throughput.AcquiredPerS, Incidents: r.Incidents.Total()}
		e.Group, _ = r.Config["group"].(string)
		for _, f := range r.Faults {
			e.Faults = append(e.Faults, f.Spec)
		}
		if s, ok := r.Ops[OpAcquire]; ok && s.Count > 0 {
			p := s.LatencyUS.P99
			e.AcquireP99US = &p
		}
		out[i] = e
	}
	return out
}

// WriteListCSV renders runs as results ls --format csv prints them.
func WriteListCSV(w io.Writer, runs []*Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "label", "started_at", "topology", "lock", "workload", "concurrency", "rate", "duration_s", "partial",
		"faults", "acquired_per_s", "acquire_p99_us", "incidents", "group"})
	for _, e := range ListEntries(runs) {
		p99 := ""
		if e.AcquireP99US != nil {
			p99 = num(*e.AcquireP99US)
		}
		_ = cw.Write([]string{e.ID, e.Label, e.StartedAt, e.Topology, e.Lock, e.Workload, e.Concurrency, e.Rate, num(e.DurationS),
			strconv.FormatBool(e.Partial), strings.Join(e.Faults, "; "), num(e.AcquiredPerS), p99, strconv.FormatInt(e.Incidents, 10), e.Group})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write list csv: %w", err)
	}
	return nil
}

// configText is a config field as text, "" when absent.
func configText(r *Result, k string) string {
	v, ok := r.Config[k]
	if !ok {
		return ""
	}
	return jsonText(v)
}

// FilterTags keeps the runs that carry every tag of want.
func FilterTags(runs []*Result, want map[string]string) []*Result {
	var out []*Result
	for _, r := range runs {
		ok := true
		for k, v := range want {
			ok = ok && r.Tags[k] == v
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}
