package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// The lock-cost table is a view of the catalogue over one comparison (a
// column per lock, its repeats a group): results.LockCostView names the
// figures shown by default, --columns any others, and JSON carries every
// figure the runs have. Under --with-fault a second view of the faulted
// runs adds what only a fault defines: the share of attempts answered and
// the share of its own healthy throughput each lock kept.

// figure is one figure's median over a lock's runs and its range.
type figure struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// CostSummary is one lock's row: medians and ranges of every figure its runs
// all have, their ratios against the first lock, and the runs behind them.
type CostSummary struct {
	Lock     string            `json:"lock"`
	Topology string            `json:"topology"`
	Runs     []string          `json:"runs"`
	Figures  map[string]figure `json:"figures"`
	Ratios   map[string]string `json:"ratios_to_first"`
	Fault    *FaultSummary     `json:"fault,omitempty"`
	// Limit is what bounded the lock's healthy runs, by the rulebook's one
	// rule (verdict.LimitOf) applied to its median-throughput run; absent
	// without runs.
	Limit *verdict.Limit `json:"limit,omitempty"`
	// Failures are the lock's healthy runs' failures summed (tries failed
	// by kind, give-ups; open loop: served, late, dropped), beside its rate.
	Failures *verdict.Failures `json:"failures,omitempty"`
}

// FaultSummary is a lock's figures under its canonical fault.
type FaultSummary struct {
	Spec    string            `json:"spec"`
	Runs    []string          `json:"runs"`
	Figures map[string]figure `json:"figures"`
	// Kept is the faulted throughput's median over the healthy one's.
	Kept *float64 `json:"throughput_kept,omitempty"`
}

func runIDs(rs []*results.Result) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// costGroups are the locks' healthy runs, one group each.
func costGroups(rows []CostRuns) []results.Group {
	gs := make([]results.Group, len(rows))
	for i, row := range rows {
		gs[i] = results.Group{Key: row.Spec.String(), Runs: row.Runs}
	}
	return gs
}

// faultGroups are the faulted runs of the locks that ran under a fault.
func faultGroups(rows []CostRuns) ([]results.Group, []int) {
	var gs []results.Group
	var idx []int
	for i, row := range rows {
		if row.Fault != "" && len(row.Faulted) > 0 {
			gs = append(gs, results.Group{Key: row.Spec.String(), Runs: row.Faulted})
			idx = append(idx, i)
		}
	}
	return gs, idx
}

func allRuns(rows []CostRuns, faulted bool) []*results.Result {
	var out []*results.Result
	for _, row := range rows {
		if faulted {
			out = append(out, row.Faulted...)
		} else {
			out = append(out, row.Runs...)
		}
	}
	return out
}

// figuresOf are the column's present figures of a comparison, by name.
func figuresOf(cmp results.Comparison, col int) map[string]figure {
	out := map[string]figure{}
	for _, row := range cmp.Rows {
		if c := row.Cells[col]; c.Present {
			out[row.Figure().Name] = figure{Median: c.Value, Min: c.Min, Max: c.Max}
		}
	}
	return out
}

// SummarizeCost reduces each lock's runs to its row, over every figure.
func SummarizeCost(rows []CostRuns) []CostSummary {
	cmp := results.CompareFigures(costGroups(rows), results.FiguresFor(allRuns(rows, false)))
	out := make([]CostSummary, len(rows))
	for i, row := range rows {
		s := CostSummary{Lock: row.Spec.Lock, Topology: row.Spec.Topology, Runs: runIDs(row.Runs), Figures: figuresOf(cmp, i), Ratios: map[string]string{},
			Limit: medianLimit(row.Runs), Failures: failuresOf(row.Runs)}
		for _, r := range cmp.Rows {
			s.Ratios[r.Figure().Name] = results.RatioCell(r.Cells[i])
			if c := r.Cells[i]; i == 0 && c.Present && r.Figure().Shown(c.Value) != 0 {
				// The baseline against itself.
				s.Ratios[r.Figure().Name] = "1.00x"
			}
		}
		out[i] = s
	}
	fgs, idx := faultGroups(rows)
	if len(fgs) == 0 {
		return out
	}
	fcmp := results.CompareFigures(fgs, results.FiguresFor(allRuns(rows, true)))
	for j, i := range idx {
		fs := &FaultSummary{Spec: rows[i].Fault, Runs: runIDs(rows[i].Faulted), Figures: figuresOf(fcmp, j)}
		for name, f := range availabilities(rows[i].Faulted) {
			fs.Figures[name] = f
		}
		fs.Kept = kept(fcmp, j, cmp, i)
		out[i].Fault = fs
	}
	return out
}

// availabilities are the medians over runs of the rulebook's availability
// in time (verdict.AvailabilityOf): the fault span's share of seconds with
// an acquisition, the window's, and the longest gap; a figure no run had is
// absent.
func availabilities(runs []*results.Result) map[string]figure {
	var span, window, gap []float64
	for _, r := range runs {
		a, ok := verdict.AvailabilityOf(r)
		if !ok {
			continue
		}
		if a.FaultShare != nil {
			span = append(span, *a.FaultShare)
		}
		window, gap = append(window, a.WindowShare), append(gap, a.LongestGapS)
	}
	out := map[string]figure{}
	for name, xs := range map[string][]float64{"availability": span, "availability_window": window, "longest_gap_s": gap} {
		if len(xs) > 0 {
			lo, hi := minMax(xs)
			out[name] = figure{Median: results.Median(xs), Min: lo, Max: hi}
		}
	}
	return out
}

// availableText is a fault row's availability cell: the fault span's share
// over the window's; NotMeasured without a series, NotApplicable for the
// span of a run whose fault had none.
func availableText(fs map[string]figure) string {
	window, ok := fs["availability_window"]
	if !ok {
		return results.NotMeasured
	}
	span := results.NotApplicable
	if f, ok := fs["availability"]; ok {
		span = results.FigureText("availability", f.Median)
	}
	return span + "/" + results.FigureText("availability_window", window.Median)
}

// failedP99 is the median p99 of the failed attempts over runs, NotMeasured
// with none: beside the successes' p99, what a failing caller waited.
func failedP99(runs []*results.Result) *float64 {
	var xs []float64
	for _, r := range runs {
		if o := r.Ops[results.OpAcquireFailed]; o.Count > 0 {
			xs = append(xs, o.LatencyUS.P99)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	m := results.Median(xs)
	return &m
}

// kept is faulted throughput over healthy, medians both, or nil when either
// is absent or the healthy one is 0.
func kept(fcmp results.Comparison, fcol int, cmp results.Comparison, col int) *float64 {
	const thr = "throughput.acquired_per_s"
	f, fok := fcmp.Cell(thr, fcol)
	h, hok := cmp.Cell(thr, col)
	if !fok || !hok || !f.Present || !h.Present || h.Value <= 0 {
		return nil
	}
	k := f.Value / h.Value
	return &k
}

// WriteLockCost prints the lock-cost view: one row per lock, each figure's
// median (with its spread over repeats) and its ratio against the first
// lock; then, where faults were run, each lock under its fault with the
// share of attempts answered and of its own throughput kept.
func WriteLockCost(w io.Writer, rows []CostRuns, columns []string) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeLockCostText(w, rows, columns) })
}

func writeLockCostText(w io.Writer, rows []CostRuns, columns []string) error {
	if len(rows) == 0 {
		return nil
	}
	figs, err := results.LockCostView().Figures(columns)
	if err != nil {
		return err
	}
	cmp := results.CompareFigures(costGroups(rows), figs)
	names := make([][]string, len(rows))
	for i, row := range rows {
		names[i] = []string{row.Spec.Lock, row.Spec.Topology}
	}
	lead := []results.TableColumn{results.LabelColumn("lock"), results.LabelColumn("topology")}
	if err := cmp.WriteRows(w, results.RowsView{Lead: lead, Names: names, Ratios: true}); err != nil {
		return fmt.Errorf("lock-cost: %w", err)
	}
	if err := writeFaultView(w, rows, cmp); err != nil {
		return err
	}
	sums := SummarizeCost(rows)
	writeCostNotes(w, rows, sums)
	if bought := redlockBought(sums); bought != "" {
		fmt.Fprintln(w, bought)
	}
	return nil
}

// redlockBought is redlock-cost's last line: what Redlock kept under its
// fault (a master lost) against the single server under its own, at what
// healthy cost; "" without both faulted.
func redlockBought(sums []CostSummary) string {
	var single, redlock *CostSummary
	for i := range sums {
		s := &sums[i]
		switch {
		case s.Fault == nil:
		case IsRedlock(s.Lock) && redlock == nil:
			redlock = s
		case !IsRedlock(s.Lock) && single == nil:
			single = s
		}
	}
	if single == nil || redlock == nil {
		return ""
	}
	kept := func(s *CostSummary) string {
		f, ok := s.Fault.Figures["availability"]
		g := s.Fault.Figures["longest_gap_s"]
		if !ok {
			return results.NotMeasured + " of its fault's span"
		}
		return fmt.Sprintf("%s of its fault's span (longest gap %s)", results.FigureText("availability", f.Median),
			results.FigureText("availability.longest_gap_s", g.Median))
	}
	line := fmt.Sprintf("what Redlock bought: %s@%s kept acquiring in %s under %q; %s@%s in %s under %q",
		redlock.Lock, redlock.Topology, kept(redlock), redlock.Fault.Spec, single.Lock, single.Topology, kept(single), single.Fault.Spec)
	var cost []string
	for _, name := range []string{"throughput.acquired_per_s", "servers.commands_per_acquire"} {
		r, h := redlock.Figures[name], single.Figures[name]
		if h.Median > 0 && r.Median > 0 {
			cost = append(cost, fmt.Sprintf("%s the %s", results.RatioText(r.Median/h.Median), map[string]string{"throughput.acquired_per_s": "acquisitions/s",
				"servers.commands_per_acquire": "server commands per acquisition"}[name]))
		}
	}
	if len(cost) > 0 {
		line += "; at " + strings.Join(cost, " and ") + " of the single server, healthy"
	}
	if redlock.Fault.Spec != single.Fault.Spec {
		line += " (different faults: each row's availability answers its own)"
	}
	return line
}

// IsRedlock reports whether a lock acquires by quorum over several masters
// (redlock, redsync), as the lock registry says.
func IsRedlock(lock string) bool { return lockimpl.IsQuorum(lock) }

// writeFaultView prints each faulted lock's figures under its fault.
func writeFaultView(w io.Writer, rows []CostRuns, healthy results.Comparison) error {
	fgs, idx := faultGroups(rows)
	if len(fgs) == 0 {
		return nil
	}
	figs, err := results.FaultView().Figures(nil)
	if err != nil {
		return err
	}
	fcmp := results.CompareFigures(fgs, figs)
	acquiring := results.FigureColumn("availability", "acquiring\nfault/window")
	gap := results.FigureColumn("availability.longest_gap_s", "longest\ngap")
	failed := results.FigureColumn("acquire_failed.p99", "failed\np99")
	keptCol := results.FigureColumn("throughput_kept", "kept")
	v := results.RowsView{Lead: []results.TableColumn{results.LabelColumn("under fault"), results.LabelColumn("topology")},
		Extra: []results.TableColumn{acquiring, gap, failed, keptCol}}
	for j, i := range idx {
		v.Names = append(v.Names, []string{rows[i].Spec.Lock, rows[i].Spec.Topology})
		// Kept is a ratio: none over a zero or missing baseline, as RatioCell.
		k := results.NotApplicable
		if p := kept(fcmp, j, healthy, i); p != nil {
			k = keptCol.Text(*p)
		}
		av := availabilities(rows[i].Faulted)
		g := results.NotMeasured
		if f, ok := av["longest_gap_s"]; ok {
			g = gap.Text(f.Median)
		}
		v.Extras = append(v.Extras, []string{availableText(av), g, failed.Opt(failedP99(rows[i].Faulted)), k})
	}
	fmt.Fprintln(w)
	if err := fcmp.WriteRows(w, v); err != nil {
		return fmt.Errorf("lock-cost under fault: %w", err)
	}
	fmt.Fprintln(w, "acquiring: the share of the fault's span / of the window whose seconds had an acquisition (a stalled attempt is not available)")
	if faults := distinctFaults(rows, idx); len(faults) > 1 {
		fmt.Fprintf(w, "the rows faced different faults (%s): their figures answer different questions\n", strings.Join(faults, "; "))
	}
	return nil
}

// distinctFaults are the faults the faulted rows faced, each named once.
func distinctFaults(rows []CostRuns, idx []int) []string {
	var out []string
	for _, i := range idx {
		if !slices.Contains(out, rows[i].Fault) {
			out = append(out, rows[i].Fault)
		}
	}
	return out
}

// medianLimit is what bounded a lock's healthy runs: the rulebook's rule on
// the run of median throughput (the row's figures are medians), nil
// without runs.
func medianLimit(runs []*results.Result) *verdict.Limit {
	if len(runs) == 0 {
		return nil
	}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *results.Result) int {
		return cmp.Compare(a.Throughput.AcquiredPerS, b.Throughput.AcquiredPerS)
	})
	l := verdict.LimitOf(sorted[len(sorted)/2])
	return &l
}

// failuresOf sums a lock's runs' failures, nil without runs.
func failuresOf(runs []*results.Result) *verdict.Failures {
	if len(runs) == 0 {
		return nil
	}
	var sum verdict.Failures
	for _, r := range runs {
		sum.Add(verdict.FailuresOf(r, r.OpenLoop()))
	}
	return &sum
}

// writeCostNotes names each lock's fault, the failures of each lock's
// healthy runs and what bounded them (from its summary), and the machine sharing that colours local latency ratios.
func writeCostNotes(w io.Writer, rows []CostRuns, sums []CostSummary) {
	var firsts []*results.Result
	for i, row := range rows {
		if s := sums[i]; s.Limit != nil && s.Failures != nil {
			// No rate without its failures: they stand beside the lock's limit.
			fmt.Fprintf(w, "%s@%s: %s; %s\n", row.Spec.Lock, row.Spec.Topology, s.Failures.Text(), s.Limit.Text())
		}
		if row.Fault != "" {
			window := results.NotApplicable
			if len(row.Faulted) > 0 {
				window = results.FigureText("duration_s", row.Faulted[0].DurationS)
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

// WriteLockCostCSV prints every figure of every lock as CSV, one line per
// lock and, under --with-fault, one more per lock under its fault.
func WriteLockCostCSV(w io.Writer, rows []CostRuns) error {
	groups := costGroups(rows)
	names := make([][]string, len(rows))
	for i, row := range rows {
		names[i] = []string{row.Spec.Lock, row.Spec.Topology, ""}
	}
	fgs, idx := faultGroups(rows)
	groups = append(groups, fgs...)
	for _, i := range idx {
		names = append(names, []string{rows[i].Spec.Lock, rows[i].Spec.Topology, rows[i].Fault})
	}
	all := append(allRuns(rows, false), allRuns(rows, true)...)
	cmp := results.CompareFigures(groups, results.FiguresFor(all))
	return cmp.WriteRowsCSV(w, []string{"lock", "topology", "fault"}, names)
}
