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
			fmt.Sprintf("%.0f", row[0]), FormatUS(row[1]), FormatUS(row[2]), FormatUS(row[3]),
			fmt.Sprintf("%.2f", row[4]), fmt.Sprintf("%.1f", row[5]),
			ratio(row[0], base[0]), ratio(row[1], base[1]), ratio(row[2], base[2]), ratio(row[3], base[3]),
			ratio(row[4], base[4]), ratio(row[5], base[5]))
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

// sideBySideRow is throughput, acquire p50/p99/p99.9, commands and CPU per acquire.
func sideBySideRow(r *Result) [6]float64 {
	a := r.Ops[OpAcquire].LatencyUS
	var cmds, cpu float64
	if r.Servers != nil {
		cmds, cpu = r.Servers.CommandsPerAcquire, r.Servers.CPUUSPerAcquire
	}
	return [6]float64{r.Throughput.AcquiredPerS, a.P50, a.P99, a.P999, cmds, cpu}
}

// ratio renders v/base as "1.00x", or "-" when there is no base to divide by.
func ratio(v, base float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v/base)
}
