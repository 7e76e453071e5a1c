package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteSideBySide prints one row per run (the same workload on several
// topologies) with ratio columns against the first run.
func WriteSideBySide(w io.Writer, rs []*Result) error {
	groups := make([]Group, len(rs))
	for i, r := range rs {
		groups[i] = Group{Key: r.ID, Runs: []*Result{r}}
	}
	return WriteSideBySideGroups(w, groups)
}

// WriteSideBySideGroups prints one row per group of repeats, each figure the
// median over the group's runs, with ratio columns against the first group
// and, where any group has repeats, their number.
func WriteSideBySideGroups(w io.Writer, groups []Group) error {
	if len(groups) == 0 {
		return nil
	}
	// A runs column only where there are repeats to count.
	repeats := slices.ContainsFunc(groups, func(g Group) bool { return len(g.Runs) > 1 })
	header := []any{"topology", "lock"}
	if repeats {
		header = append(header, "runs")
	}
	header = append(header, "acq/s", "p50", "p99", "p99.9", "cmds/acq", "cpu µs/acq",
		"acq/s ×", "p50 ×", "p99 ×", "p99.9 ×", "cmds ×", "cpu ×")
	t := NewTable(w, header...)
	rows := make([]sideRow, len(groups))
	for i, g := range groups {
		rows[i] = groupRow(g)
	}
	base := rows[0]
	firsts := make([]*Result, 0, len(groups))
	for i, g := range groups {
		r := g.Runs[0]
		firsts = append(firsts, r)
		row := rows[i]
		cells := []any{r.Topology.Spec, r.Lock.Name}
		if repeats {
			cells = append(cells, len(g.Runs))
		}
		cells = append(cells,
			fmt.Sprintf("%.0f", row.v[0]), FormatUS(row.v[1]), FormatUS(row.v[2]), FormatUS(row.v[3]),
			row.cell(4, "%.2f"), row.cell(5, "%.1f"),
			row.ratio(base, 0), row.ratio(base, 1), row.ratio(base, 2), row.ratio(base, 3),
			row.ratio(base, 4), row.ratio(base, 5))
		_ = t.Append(cells...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render side-by-side table: %w", err)
	}
	if note := SharedCPUNote(firsts); note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}

// SharedCPUNote is a line naming the runs that had more servers on the
// generator's own machine than it has CPUs to spare, or "" when none had:
// there every extra master is a process competing with the client and its
// peers, so part of the latency ratio is the machine's, and masters on their
// own hosts would not pay it.
func SharedCPUNote(rs []*Result) string {
	var crowded []string
	cpus := 0
	for _, r := range rs {
		if r.Topology.Provider == "external" || len(r.Hosts) == 0 {
			continue
		}
		if n := len(r.Topology.Nodes); n+1 > r.Hosts[0].CPUs {
			crowded = append(crowded, fmt.Sprintf("%s (%d servers)", r.Topology.Spec, n))
			cpus = r.Hosts[0].CPUs
		}
	}
	if len(crowded) == 0 {
		return ""
	}
	rows := "that row's"
	if len(crowded) > 1 {
		rows = "those rows'"
	}
	return fmt.Sprintf("note: %s shared the generator's %d CPUs with it, so %s latency ratios include that sharing; servers on their own hosts would not.",
		strings.Join(crowded, ", "), cpus, rows)
}

// sideRow is throughput, acquire p50/p99/p99.9, commands and CPU per
// acquire; the server figures are missing (ok false) where INFO was refused
// on some node, since a partial sum would pass for a measured one.
type sideRow struct {
	v  [6]float64
	ok [6]bool
}

func sideBySideRow(r *Result) sideRow {
	a := r.Ops[OpAcquire].LatencyUS
	row := sideRow{v: [6]float64{r.Throughput.AcquiredPerS, a.P50, a.P99, a.P999}, ok: [6]bool{true, true, true, true}}
	if s := r.Servers; s.Measured() {
		row.v[4], row.v[5] = s.CommandsPerAcquire, s.CPUUSPerAcquire
		row.ok[4], row.ok[5] = true, true
	}
	return row
}

// groupRow is each figure's median over the group's runs; a figure missing
// from any run is missing from the row.
func groupRow(g Group) sideRow {
	rows := make([]sideRow, len(g.Runs))
	for j, r := range g.Runs {
		rows[j] = sideBySideRow(r)
	}
	var out sideRow
	vals := make([]float64, 0, len(rows))
	for i := range out.v {
		vals = vals[:0]
		for _, row := range rows {
			if row.ok[i] {
				vals = append(vals, row.v[i])
			}
		}
		if len(vals) == len(rows) {
			out.v[i], out.ok[i] = Median(vals), true
		}
	}
	return out
}

// cell formats figure i, or "-" when it is missing.
func (r sideRow) cell(i int, format string) string {
	if !r.ok[i] {
		return "-"
	}
	return fmt.Sprintf(format, r.v[i])
}

// ratio is figure i against base's, or "-" when either is missing.
func (r sideRow) ratio(base sideRow, i int) string {
	if !r.ok[i] || !base.ok[i] {
		return "-"
	}
	return ratio(r.v[i], base.v[i])
}

// ratio renders v/base as "1.00x", or "-" when there is no base to divide by.
func ratio(v, base float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v/base)
}
