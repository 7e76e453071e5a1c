package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteSideBySide prints one row per run (the same workload on several
// topologies) with ratios against the first run.
func WriteSideBySide(w io.Writer, rs []*Result) error {
	groups := make([]Group, len(rs))
	for i, r := range rs {
		groups[i] = Group{Key: r.ID, Runs: []*Result{r}}
	}
	return WriteSideBySideGroups(w, groups, nil)
}

// WriteSideBySideGroups prints the side-by-side view of groups of repeats:
// one row per group, each figure the median over its runs with its ratio to
// the first group; columns names figures other than the view's defaults.
func WriteSideBySideGroups(w io.Writer, groups []Group, columns []string) error {
	return Wrapping(w, func(w io.Writer) error { return writeSideBySideGroupsText(w, groups, columns) })
}

func writeSideBySideGroupsText(w io.Writer, groups []Group, columns []string) error {
	if len(groups) == 0 {
		return nil
	}
	figs, err := SideBySideView().Figures(columns)
	if err != nil {
		return err
	}
	names := make([][]string, len(groups))
	firsts := make([]*Result, 0, len(groups))
	for i, g := range groups {
		r := g.Runs[0]
		names[i] = []string{r.Topology.Spec, r.Lock.Name}
		firsts = append(firsts, r)
	}
	c := CompareFigures(groups, figs)
	if err := c.WriteRows(w, RowsView{Lead: []TableColumn{LabelColumn("topology"), LabelColumn("lock")}, Names: names, Ratios: true}); err != nil {
		return fmt.Errorf("side-by-side: %w", err)
	}
	if note := SharedCPUNote(firsts); note != "" {
		fmt.Fprintln(w, note)
	}
	if note := ResourceNote(firsts); note != "" {
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
