package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteSideBySide prints one row per run (the same workload on several
// topologies) with ratio columns against the first run.
func WriteSideBySide(w io.Writer, rs []*Result) error {
	if len(rs) == 0 {
		return nil
	}
	t := NewTable(w, "topology", "lock", "acq/s", "p50", "p99", "p99.9", "cmds/acq", "cpu µs/acq",
		"acq/s ×", "p50 ×", "p99 ×", "p99.9 ×", "cmds ×", "cpu ×")
	base := sideBySideRow(rs[0])
	for _, r := range rs {
		row := sideBySideRow(r)
		_ = t.Append(r.Topology.Spec, r.Lock.Name,
			fmt.Sprintf("%.0f", row.v[0]), FormatUS(row.v[1]), FormatUS(row.v[2]), FormatUS(row.v[3]),
			row.cell(4, "%.2f"), row.cell(5, "%.1f"),
			row.ratio(base, 0), row.ratio(base, 1), row.ratio(base, 2), row.ratio(base, 3),
			row.ratio(base, 4), row.ratio(base, 5))
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render side-by-side table: %w", err)
	}
	if note := SharedCPUNote(rs); note != "" {
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
	return fmt.Sprintf("note: %s shared the generator's %d CPUs with it; their latency ratios include that sharing, which servers on their own hosts would not have.",
		strings.Join(crowded, ", "), cpus)
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
	if s := r.Servers; s != nil && s.Unavailable == "" {
		row.v[4], row.v[5] = s.CommandsPerAcquire, s.CPUUSPerAcquire
		row.ok[4], row.ok[5] = true, true
	}
	return row
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
