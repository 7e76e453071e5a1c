package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// The lock-cost table is a view of the catalogue over one comparison (a
// column per lock, its repeats a group): results.LockCostView names the
// figures shown by default, --columns any others, and JSON carries every
// figure the runs have. Under --with-fault a second view of the faulted
// runs adds what only a fault defines: the share of attempts answered and
// the share of its own healthy throughput each lock kept.

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// AvailabilityOf is 1 − errors/attempts of a run: the share of acquire
// attempts that did not fail (contended ones count as answered).
func AvailabilityOf(r *results.Result) float64 {
	if r == nil || r.Contention.Attempts == 0 {
		return 0
	}
	return 1 - float64(r.TotalErrors())/float64(r.Contention.Attempts)
}

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

// ratioText is a cell's ratio to the first lock as the table shows it.
func ratioText(c results.Cell) string {
	switch {
	case !c.Present:
		return "-"
	case c.Same:
		return "same"
	case c.Ratio == nil:
		return "-"
	}
	return results.RatioText(*c.Ratio)
}

// SummarizeCost reduces each lock's runs to its row, over every figure.
func SummarizeCost(rows []CostRuns) []CostSummary {
	cmp := results.CompareFigures(costGroups(rows), results.FiguresFor(allRuns(rows, false)))
	out := make([]CostSummary, len(rows))
	for i, row := range rows {
		s := CostSummary{Lock: row.Spec.Lock, Topology: row.Spec.Topology, Runs: runIDs(row.Runs), Figures: figuresOf(cmp, i), Ratios: map[string]string{}}
		for _, r := range cmp.Rows {
			s.Ratios[r.Figure().Name] = ratioText(r.Cells[i])
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
		fs.Figures["availability"] = availability(rows[i].Faulted)
		fs.Kept = kept(fcmp, j, cmp, i)
		out[i].Fault = fs
	}
	return out
}

// availability is the median share of attempts answered over runs.
func availability(runs []*results.Result) figure {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = AvailabilityOf(r)
	}
	lo, hi := minMax(xs)
	return figure{Median: results.Median(xs), Min: lo, Max: hi}
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
	if err := cmp.WriteRows(w, results.RowsView{Lead: []string{"lock", "topology"}, Names: names, Ratios: true}); err != nil {
		return fmt.Errorf("lock-cost: %w", err)
	}
	if err := writeFaultView(w, rows, cmp); err != nil {
		return err
	}
	writeCostNotes(w, rows)
	return nil
}

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
	v := results.RowsView{Lead: []string{"under fault", "topology"}, Extra: []string{"available", "kept"}}
	for j, i := range idx {
		v.Names = append(v.Names, []string{rows[i].Spec.Lock, rows[i].Spec.Topology})
		k := "-"
		if p := kept(fcmp, j, healthy, i); p != nil {
			k = percent(*p)
		}
		v.Extras = append(v.Extras, []string{percent(availability(rows[i].Faulted).Median), k})
	}
	fmt.Fprintln(w)
	if err := fcmp.WriteRows(w, v); err != nil {
		return fmt.Errorf("lock-cost under fault: %w", err)
	}
	return nil
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
