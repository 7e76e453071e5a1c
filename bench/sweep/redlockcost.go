package sweep

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/results"
)

// CostRow is one topology of a Redlock-vs-single comparison.
type CostRow struct {
	// Topology is single or redlock:N.
	Topology string `json:"topology"`
	// Run is the healthy run.
	Run *results.Result `json:"-"`
	// RunID is its id.
	RunID string `json:"run"`
	// NodeDown is the run with one master killed, nil when not measured.
	NodeDown *results.Result `json:"-"`
	// Availability is the share of acquire attempts that did not fail with one
	// master down (negative when not measured).
	Availability float64 `json:"availability_one_down"`
}

// AvailabilityOf is 1 − errors/attempts of a run.
func AvailabilityOf(r *results.Result) float64 {
	if r == nil || r.Contention.Attempts == 0 {
		return 0
	}
	return 1 - float64(r.TotalErrors())/float64(r.Contention.Attempts)
}

// WriteRedlockCost prints the rows with ratios against the first (single).
func WriteRedlockCost(w io.Writer, rows []CostRow) error {
	if len(rows) == 0 {
		return nil
	}
	metrics := []struct{ name, metric string }{
		{"acq/s", "throughput"}, {"p50", "acquire.p50"}, {"p99", "acquire.p99"}, {"p99.9", "acquire.p999"},
		{"cmds/acq", "servers.commands_per_acquire"}, {"cpu µs/acq", "servers.cpu_us_per_acquire"},
	}
	header := []any{"topology"}
	for _, m := range metrics {
		header = append(header, m.name, m.name+" ×")
	}
	header = append(header, "available, 1 down")
	t := results.NewTable(w, header...)
	base := rows[0].Run
	for _, row := range rows {
		cells := []any{row.Topology}
		for _, m := range metrics {
			v, vok := metricOf(row.Run, m.metric)
			b, bok := metricOf(base, m.metric)
			switch {
			case !vok:
				cells = append(cells, "-", "-")
			case !bok:
				cells = append(cells, formatMetric(m.metric, v), "-")
			default:
				cells = append(cells, formatMetric(m.metric, v), ratio(v, b))
			}
		}
		avail := "n/a"
		if row.Availability >= 0 {
			avail = fmt.Sprintf("%.1f%%", 100*row.Availability)
		}
		cells = append(cells, avail)
		_ = t.Append(cells...)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render redlock cost table: %w", err)
	}
	runs := make([]*results.Result, len(rows))
	for i, row := range rows {
		runs[i] = row.Run
	}
	if note := results.SharedCPUNote(runs); note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}

// metricOf is a metric of r, and whether r has it (server figures are
// missing where INFO was refused).
func metricOf(r *results.Result, metric string) (float64, bool) {
	v, err := results.Metric(r, metric)
	return v, err == nil
}

func formatMetric(metric string, v float64) string {
	switch metric {
	case "throughput":
		return fmt.Sprintf("%.0f", v)
	case "servers.commands_per_acquire":
		return fmt.Sprintf("%.2f", v)
	case "servers.cpu_us_per_acquire":
		return fmt.Sprintf("%.1f", v)
	}
	return results.FormatUS(v)
}

func ratio(v, base float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v/base)
}
