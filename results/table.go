package results

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// NewTable returns a table writer in lockbench's style: ASCII borders (they
// survive every terminal and log), headers as written, numbers right-aligned.
func NewTable(w io.Writer, header ...any) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignment(tw.AlignRight),
	)
	t.Header(header...)
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
		return "0"
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
	lock := r.Lock.Name
	if r.Lock.Library != "" {
		lock += fmt.Sprintf(" (%s %s)", r.Lock.Library, r.Lock.Version)
	}
	return fmt.Sprintf("run %s  %s  topology %s (%s, %d node(s), redis %s)  lock %s%s  %s%s",
		r.ID, r.StartedAt.Format(time.RFC3339), r.Topology.Spec, r.Topology.Provider, len(r.Topology.Nodes),
		r.Topology.ServerVersion, lock, unsafe, describeConfig(r), partial)
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

// WriteSummary renders one run as the tables `lockbench run` prints.
func WriteSummary(w io.Writer, r *Result) error {
	fmt.Fprintln(w, Headline(r))
	if len(r.MergedFrom) > 0 {
		fmt.Fprintf(w, "merged from %d generators: %s\n", len(r.MergedFrom), strings.Join(r.MergedFrom, ", "))
	}
	fmt.Fprintf(w, "%.1fs measured: %.0f acquisitions/s, %.0f attempts/s\n\n", r.DurationS, r.Throughput.AcquiredPerS, r.Throughput.AttemptsPerS)
	t := NewTable(w, "op", "count", "errors", "p50", "p90", "p99", "p99.9", "max", "mean")
	for _, op := range opsPresent([]*Result{r}) {
		s := r.Ops[op]
		l := s.LatencyUS
		_ = t.Append(op, s.Count, s.Errors, FormatUS(l.P50), FormatUS(l.P90), FormatUS(l.P99), FormatUS(l.P999), FormatUS(l.Max), FormatUS(l.Mean))
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render ops table: %w", err)
	}
	fmt.Fprintln(w)
	return writeCounts(w, r)
}

func writeCounts(w io.Writer, r *Result) error {
	c, i := r.Contention, r.Incidents
	t := NewTable(w, "contention", "", "incidents", "")
	rows := [][]any{
		{"attempts", c.Attempts, "expired_during_work", i.ExpiredDuringWork},
		{"acquired", c.Acquired, "release_lost", i.ReleaseLost},
		{"contended", c.Contended, "renew_lost", i.RenewLost},
		{"gave_up", c.GaveUp, "work_aborted", i.WorkAborted},
		{"rate", fmt.Sprintf("%.4f", c.Rate), "overlaps", i.Overlaps},
		{"attempts/acquire", fmt.Sprintf("%.2f", c.AttemptsPerAcquire), "fencing_rejected", i.FencingRejected},
		{"errors", r.TotalErrors(), "stale_writes_accepted", i.StaleWritesAccepted},
	}
	for _, row := range rows {
		_ = t.Append(row...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render counts table: %w", err)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "errors by kind: %s\n", formatErrors(r.Errors))
	}
	if s := r.Servers; s != nil {
		if s.Unavailable != "" {
			fmt.Fprintf(w, "server cost: unavailable (%s)\n", s.Unavailable)
		} else {
			fmt.Fprintf(w, "server cost: %.2f commands and %.1f µs CPU per acquisition (all nodes)\n", s.CommandsPerAcquire, s.CPUUSPerAcquire)
		}
	}
	return nil
}

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

// WriteList renders runs as `results ls` prints them, one line a run: id,
// start, topology, lock, workload, acquisitions/s, acquire p99, incidents and
// the group of repeats it belongs to.
func WriteList(w io.Writer, runs []*Result) error {
	t := labelsLeft(NewTable(w, "id", "started", "topology", "lock", "workload", "acq/s", "acquire p99", "incidents", "group"))
	for _, r := range runs {
		p99 := "-"
		if s, ok := r.Ops[OpAcquire]; ok && s.Count > 0 {
			p99 = FormatUS(s.LatencyUS.P99)
		}
		id := r.ID
		if r.Partial {
			id += " (partial)"
		}
		group, _ := r.Config["group"].(string)
		workload := ""
		if v, ok := r.Config["workload"]; ok {
			workload = fmt.Sprint(v)
		}
		err := t.Append(id, r.StartedAt.Format("2006-01-02 15:04:05"), r.Topology.Spec, r.Lock.Name, workload,
			fmt.Sprintf("%.0f", r.Throughput.AcquiredPerS), p99, r.Incidents.Total(), group)
		if err != nil {
			return fmt.Errorf("list row %s: %w", r.ID, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render list: %w", err)
	}
	return nil
}
