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

// SideBySideFigures are the figures a side-by-side table shows, by name.
func SideBySideFigures() []string {
	return []string{"throughput.acquired_per_s", "acquire.p50", "acquire.p95", "acquire.p99", "acquire.p999",
		"servers.commands_per_acquire", "servers.cpu_us_per_acquire"}
}

// WriteSideBySideGroups prints one row per group of repeats, each figure the
// median over the group's runs, with ratio columns against the first group
// and, where any group has repeats, their number.
func WriteSideBySideGroups(w io.Writer, groups []Group) error {
	if len(groups) == 0 {
		return nil
	}
	figs := figuresNamed(SideBySideFigures()...)
	// A runs column only where there are repeats to count.
	repeats := slices.ContainsFunc(groups, func(g Group) bool { return len(g.Runs) > 1 })
	header := []any{"topology", "lock"}
	if repeats {
		header = append(header, "runs")
	}
	for _, f := range figs {
		header = append(header, shortLabel(f))
	}
	for _, f := range figs {
		header = append(header, shortLabel(f)+" ×")
	}
	t := NewTable(w, header...)
	rows := make([]sideRow, len(groups))
	for i, g := range groups {
		rows[i] = groupRow(figs, g)
	}
	firsts := make([]*Result, 0, len(groups))
	for i, g := range groups {
		r := g.Runs[0]
		firsts = append(firsts, r)
		cells := []any{r.Topology.Spec, r.Lock.Name}
		if repeats {
			cells = append(cells, len(g.Runs))
		}
		for j, f := range figs {
			cells = append(cells, rows[i].cell(j, f))
		}
		for j := range figs {
			cells = append(cells, rows[i].ratio(rows[0], j))
		}
		_ = t.Append(cells...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render side-by-side table: %w", err)
	}
	if note := SharedCPUNote(firsts); note != "" {
		fmt.Fprintln(w, note)
	}
	if note := ResourceNote(firsts); note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}

// shortLabel drops the words a narrow table's header can do without.
func shortLabel(f Figure) string {
	l := strings.TrimPrefix(f.Label, "acquire ")
	return strings.TrimPrefix(l, "server ")
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

// ResourceNote is a line naming where each run kept its protected
// resource when the runs compared did not all keep it in one place, or ""
// when they did: a resource in a database costs its round trips (op
// resource) inside every critical section, so it is part of that row's
// throughput and hold time.
func ResourceNote(rs []*Result) string {
	var order []string
	by := map[string][]string{}
	for _, r := range rs {
		res := r.Resource
		if res == "" {
			res = "in-process"
		}
		if _, ok := by[res]; !ok {
			order = append(order, res)
		}
		by[res] = append(by[res], r.Lock.Name+"@"+r.Topology.Spec)
	}
	if len(order) < 2 {
		return ""
	}
	parts := make([]string, len(order))
	for i, res := range order {
		parts[i] = fmt.Sprintf("%s for %s", res, strings.Join(by[res], ", "))
	}
	return "note: protected resource " + strings.Join(parts, "; ") +
		"; a resource outside the process adds its round trips (op resource) to every critical section, and so to those rows' throughput."
}

// sideRow is one group's figures; a figure missing from any run (server
// cost where INFO was refused on some node) is missing from the row, since
// a partial sum would pass for a measured one.
type sideRow struct {
	v  []float64
	ok []bool
}

// groupRow is each figure's median over the group's runs.
func groupRow(figs []Figure, g Group) sideRow {
	out := sideRow{v: make([]float64, len(figs)), ok: make([]bool, len(figs))}
	for i, f := range figs {
		var vals []float64
		for _, r := range g.Runs {
			if v, err := f.Value(r); err == nil {
				vals = append(vals, v)
			}
		}
		if len(vals) == len(g.Runs) {
			out.v[i], out.ok[i] = Median(vals), true
		}
	}
	return out
}

// cell formats figure i, or "-" when it is missing.
func (r sideRow) cell(i int, f Figure) string {
	if !r.ok[i] {
		return "-"
	}
	return f.Format(r.v[i])
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
