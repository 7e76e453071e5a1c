package failovermap

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// WriteText prints the map: one row per cell, then the cells where measured
// and predicted disagree, the mitigations safe only by being unavailable,
// the panels not measured, and the wall time against the budget.
func WriteText(w io.Writer, m Map) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeText(w, m) })
}

func writeText(w io.Writer, m Map) error {
	p := m.Plan
	fmt.Fprintf(w, "failover-map on %s: double grants per failover against replication lag and hold time\n", p.spec)
	for _, pn := range p.Panels {
		if pn.Unavailable != "" {
			continue
		}
		fmt.Fprintf(w, "%s / %s:\n", pn.Lock, pn.Mitigation)
		if err := writePanel(w, m, pn); err != nil {
			return err
		}
	}
	writeFindings(w, m)
	return nil
}

// writePanel is one lock and mitigation's cells, a row each. concl./run:
// failovers with holders inside at the kill, of those run.
func writePanel(w io.Writer, m Map, pn Panel) error {
	var (
		perFailover = results.FigureColumn("double_grants_per_failover", "double grants/\nfailover [95%]")
		predicted   = results.FigureColumn("double_grants_per_failover", "pre-\ndicted")
		per10k      = results.FigureColumn("per_10k_acquisitions", "per 10k acq.\n[95%]")
		inside      = results.FigureColumn("holders_inside_at_kill", "inside\nat kill")
		unavailable = results.FigureColumn("unavailable_s", "unavail-\nable")
		p50         = results.FigureColumn("acquire.p50", "acquire\np50/p99")
		p99         = results.FigureColumn("acquire.p99", "")
		rate        = results.FigureColumn("throughput.acquired_per_s", "acq/s")
	)
	t := results.NewTable(w, results.ParameterColumn("lag"), results.ParameterColumn("hold"), results.LabelColumn("concl./\nrun"),
		perFailover, predicted, per10k, inside, unavailable, p50, rate)
	for _, c := range m.Cells {
		if c.Lock != pn.Lock || c.Mitigation != pn.Mitigation {
			continue
		}
		_ = t.Append(c.Lag.String(), c.Hold.String(), fmt.Sprintf("%d/%d", c.Conclusive, ran(c)),
			rateText(perFailover, c.PerFailover), predicted.Opt(c.Predicted), rateText(per10k, c.Per10k), inside.Opt(c.Exposure),
			unavailable.Opt(c.UnavailableS), p50.Opt(c.AcquireP50US)+"/"+p99.Opt(c.AcquireP99US), rate.Opt(c.AcquiredPerS))
	}
	return t.Render()
}

// ran counts a cell's failovers that were measured or reused.
func ran(c CellResult) int {
	n := 0
	for _, f := range c.Failovers {
		if f.Status == statusMeasured || f.Status == statusReused {
			n++
		}
	}
	return n
}

// writeFindings names the cells that matter under the table.
func writeFindings(w io.Writer, m Map) {
	var disagree, idle, thin, open []string
	for _, c := range m.Cells {
		if c.Predicted != nil && *c.Predicted >= 1 && c.PerFailover != nil && !c.PerFailover.Excludes(0) {
			open = append(open, fmt.Sprintf("%s (measured %s, predicted %s)", c.Cell, perFailoverText(c.PerFailover), predictedText(c.Predicted)))
		}
		if c.Disagrees {
			disagree = append(disagree, fmt.Sprintf("%s (measured %s, predicted %s)", c.Cell, perFailoverText(c.PerFailover), predictedText(c.Predicted)))
		}
		if c.IdleAfterKill {
			idle = append(idle, c.Cell.String())
		}
		if c.Conclusive == 0 {
			thin = append(thin, fmt.Sprintf("%s (%s)", c.Cell, whyNot(c)))
		}
	}
	if len(disagree) > 0 {
		fmt.Fprintf(w, "measured and predicted disagree (the 95%% interval excludes the prediction): %s\n", strings.Join(disagree, "; "))
	} else {
		fmt.Fprintln(w, "measured and predicted agree (within the 95% interval) in every cell with a conclusive failover")
	}
	if len(open) > 0 {
		fmt.Fprintf(w, "predicted at least 1 per failover, yet the interval holds 0 (more failovers would tell): %s\n", strings.Join(open, "; "))
	}
	if len(idle) > 0 {
		fmt.Fprintf(w, "granted nothing after the kill, so no double grant by being unavailable: %s\n", strings.Join(idle, "; "))
	}
	for _, line := range panelDifferences(m) {
		fmt.Fprintln(w, line)
	}
	if len(thin) > 0 {
		fmt.Fprintf(w, "not measured (no conclusive failover): %s\n", strings.Join(thin, "; "))
	}
	for _, pn := range m.Plan.Panels {
		if pn.Unavailable != "" {
			fmt.Fprintf(w, "%s / %s: %s\n", pn.Lock, pn.Mitigation, pn.Unavailable)
		}
	}
	for _, c := range m.Plan.LeftOut {
		fmt.Fprintf(w, "left out to fit the budget: %s\n", c)
	}
	for _, why := range m.Refused {
		fmt.Fprintf(w, "a topology not handed on (brought up afresh instead): %s\n", why)
	}
	fmt.Fprintf(w, "wall time %s of budget %s", m.Elapsed.Round(time.Second), m.Plan.Budget)
	if m.PerMinute != nil {
		fmt.Fprintf(w, ": %s run, %.1f a minute", results.Count(int64(m.Measured), "failover"), *m.PerMinute)
		if m.BringUps > 0 {
			fmt.Fprintf(w, ", successive ones on %s", results.Count(int64(m.BringUps), "topology bring-up"))
		}
	}
	if m.Interrupted {
		fmt.Fprint(w, "; interrupted: lockbench failover-map --resume with the same flags runs the rest")
	}
	fmt.Fprintln(w)
}

// panelDifferences set the panels (lock and mitigation) apart cell by cell
// (one lag and hold) on double grants per conclusive failover, by the exact
// conditional test at 95%: a difference is said only where it shows one.
func panelDifferences(m Map) []string {
	var out []string
	for i, a := range m.Cells {
		for _, b := range m.Cells[i+1:] {
			if a.Lag != b.Lag || a.Hold != b.Hold || a.PerFailover == nil || b.PerFailover == nil {
				continue
			}
			d := verdict.DifferCounts(a.PerFailover.K, a.PerFailover.N, b.PerFailover.K, b.PerFailover.N)
			out = append(out, fmt.Sprintf("lag=%v hold=%v: %s/%s %s against %s/%s %s per failover: %s", a.Lag, a.Hold,
				a.Lock, a.Mitigation, perFailoverText(a.PerFailover), b.Lock, b.Mitigation, perFailoverText(b.PerFailover), d))
		}
	}
	return out
}

// whyNot says why a cell has no conclusive failover.
func whyNot(c CellResult) string {
	var whys []string
	for _, f := range c.Failovers {
		why := f.Why
		if f.Status != statusMeasured && f.Status != statusReused {
			why = f.Detail
		}
		if why != "" && !contains(whys, why) {
			whys = append(whys, why)
		}
	}
	if len(whys) == 0 {
		return "no failover run"
	}
	return strings.Join(whys, "; ")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// rateText is a rate with its interval, each at the column's figure's
// precision; NotMeasured when not measured.
func rateText(col results.TableColumn, r *verdict.CountRate) string {
	if r == nil {
		return results.NotMeasured
	}
	return fmt.Sprintf("%s [%s,%s]", col.Text(r.Rate), col.Text(r.Low), col.Text(r.High))
}

// perFailoverText is a cell's double grants per failover with its interval.
func perFailoverText(r *verdict.CountRate) string {
	return rateText(results.FigureColumn("double_grants_per_failover", ""), r)
}

// predictedText is a cell's predicted double grants per failover.
func predictedText(x *float64) string {
	return results.FigureColumn("double_grants_per_failover", "").Opt(x)
}

// WriteJSON writes the map as JSON.
func WriteJSON(w io.Writer, m Map) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("write failover map as JSON: %w", err)
	}
	return nil
}

// HeatMaps are the report's panels: one per measured lock × mitigation,
// lag across and hold down, coloured by double grants per failover, each
// cell with its interval and the prediction.
func HeatMaps(m Map) []results.HeatMap {
	var out []results.HeatMap
	p := m.Plan
	for _, pn := range p.Panels {
		if pn.Unavailable != "" {
			continue
		}
		h := results.HeatMap{Title: fmt.Sprintf("%s / %s on %s", pn.Lock, pn.Mitigation, p.spec),
			XLabel: "replication lag at the primary's death", YLabel: "mean hold", Best: [2]int{-1, -1},
			Legend: "each cell: double grants per conclusive failover [95% interval] · predicted (≠ where they disagree); n/a: no conclusive failover"}
		for _, lag := range p.Axes.Lags {
			h.X = append(h.X, lag.String())
		}
		for _, hold := range p.Axes.Holds {
			h.Y = append(h.Y, hold.String())
			vals, texts := make([]float64, len(p.Axes.Lags)), make([]string, len(p.Axes.Lags))
			for i, lag := range p.Axes.Lags {
				vals[i], texts[i] = math.NaN(), "not run"
				if c, ok := m.cell(Cell{Lock: pn.Lock, Mitigation: pn.Mitigation, Lag: lag, Hold: hold}); ok {
					vals[i], texts[i] = heatCell(c)
				}
			}
			h.Value, h.Text = append(h.Value, vals), append(h.Text, texts)
		}
		out = append(out, h)
	}
	return out
}

// heatCell is a cell's colour value and its text.
func heatCell(c CellResult) (float64, string) {
	if c.PerFailover == nil {
		return math.NaN(), results.NotMeasured
	}
	text := perFailoverText(c.PerFailover) + " · " + predictedText(c.Predicted)
	if c.Disagrees {
		text += " ≠"
	}
	return c.PerFailover.Rate, text
}

// cell finds a cell's result.
func (m Map) cell(c Cell) (CellResult, bool) {
	for _, cr := range m.Cells {
		if cr.Cell == c {
			return cr, true
		}
	}
	return CellResult{}, false
}

// WriteHTML writes the report page of the heat maps.
func WriteHTML(w io.Writer, m Map) error {
	return results.WriteReportWith(w, nil, results.ReportExtras{HeatMaps: HeatMaps(m)})
}
