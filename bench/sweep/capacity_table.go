package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// The capacity table is rendered here, apart from the search, so that the
// search and its table change independently; figures are formatted by the
// catalogue like every other table's.

// WriteCapacity prints each search's steps and its verdict. A step's broken
// SLOs are named under the table, one line a step, so that their text does
// not widen it.
func WriteCapacity(w io.Writer, cs []Capacity, loadName string) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeCapacityText(w, cs, loadName, nil) })
}

// WriteCapacityColumns is WriteCapacity with the figures of --columns
// (catalogue names, as results.CapacityView takes them) in place of the key
// ones (throughput, p99, CPU), each read from the step's stored result in
// runs (by id); a figure a step's run lacks is n/a.
func WriteCapacityColumns(w io.Writer, cs []Capacity, loadName string, columns []string, runs map[string]*results.Result) error {
	figs, err := results.CapacityView().Figures(columns)
	if err != nil {
		return err
	}
	cols := &figureColumns{figs: figs, runs: runs}
	return results.Wrapping(w, func(w io.Writer) error { return writeCapacityText(w, cs, loadName, cols) })
}

// figureColumns are the figures --columns named and the runs they are read
// from.
type figureColumns struct {
	figs []results.Figure
	runs map[string]*results.Result
}

// stepColumns are a capacity table's figure columns: those before the
// open-loop counts and those after them, with their cells for a step.
type stepColumns struct {
	before, after         []results.TableColumn
	beforeCell, afterCell func(Step) []any
}

// keyColumns are the table's own: throughput and the SLO's p99, then the
// CPU; with --columns, the figures named and nothing after.
func keyColumns(op string, thr, p99 results.Figure, cols *figureColumns) stepColumns {
	if cols == nil {
		return stepColumns{
			before:     []results.TableColumn{results.ColumnOf(thr), results.ColumnOf(p99).Titled(op + "\np99")},
			beforeCell: func(s Step) []any { return []any{thr.Format(s.Throughput), p99.Format(s.P99US)} },
			after:      []results.TableColumn{results.LabelColumn("failed/\ngave up"), results.LabelColumn("cpu %\ngen/srv")},
			afterCell:  func(s Step) []any { return []any{failuresCell(s), s.CPU.Cell()} },
		}
	}
	sc := stepColumns{beforeCell: func(s Step) []any { return figureCells(cols.figs, cols.runs[s.RunID]) }, afterCell: func(Step) []any { return nil }}
	for _, f := range cols.figs {
		sc.before = append(sc.before, results.ColumnOf(f))
	}
	return sc
}

// lateCell is how many served requests of an open-loop step started late;
// n/a for a step stored before steps recorded it.
func lateCell(s Step) string {
	if s.Failures == nil {
		return results.NotMeasured
	}
	return fmt.Sprint(s.Failures.Late)
}

// failuresCell is a step's failures beside its rate (the rulebook's
// verdict.Failures): acquire tries that failed, then acquisitions that gave
// up; n/a for a step stored before steps recorded them.
func failuresCell(s Step) string {
	if s.Failures == nil {
		return results.NotMeasured
	}
	return fmt.Sprintf("%d/%d", s.Failures.FailedAttempts, s.Failures.GaveUp)
}

// figureCells are a step's cells for figs, read from its run (n/a without one).
func figureCells(figs []results.Figure, r *results.Result) []any {
	cells := make([]any, len(figs))
	for i, f := range figs {
		cells[i] = results.NotMeasured
		if r == nil {
			continue
		}
		if v, err := results.Metric(r, f.Name); err == nil {
			cells[i] = f.Format(v)
		} else {
			cells[i] = results.NotMeasuredText(err)
		}
	}
	return cells
}

func writeCapacityText(w io.Writer, cs []Capacity, loadName string, cols *figureColumns) error {
	thr, err := results.LookupFigure("throughput")
	if err != nil {
		return err
	}
	for _, c := range cs {
		fmt.Fprintf(w, "%s\n", c.Label)
		op := latencyOpOf(c)
		p99, err := results.LookupFigure(op + ".p99")
		if err != nil {
			return fmt.Errorf("capacity %s: %w", c.Label, err)
		}
		sc := keyColumns(op, thr, p99, cols)
		openLoop := openLoopOf(c)
		header := append([]results.TableColumn{results.ParameterColumn(loadName)}, sc.before...)
		if openLoop {
			header = append(header, results.LabelColumn("served"), results.LabelColumn("dropped/\nlate"))
		}
		header = append(header, sc.after...)
		t := results.NewTable(w, append(header, results.LabelColumn("SLO"), results.LabelColumn("run"))...)
		var broken []string
		for _, s := range c.Steps {
			verdict := "met"
			if !s.MetSLO {
				verdict = "broken"
				broken = append(broken, fmt.Sprintf("%s %s broke: %s", loadName, formatLoad(s.Load), strings.Join(s.Broken, "; ")))
			}
			mark := ""
			if c.Knee != nil && s.RunID == c.Knee.RunID {
				mark = " (knee)"
			}
			row := append([]any{formatLoad(s.Load) + mark}, sc.beforeCell(s)...)
			if openLoop {
				row = append(row, fmt.Sprintf("%d/%d", s.Served, s.Offered), fmt.Sprintf("%d/%s", s.Dropped, lateCell(s)))
			}
			row = append(row, sc.afterCell(s)...)
			_ = t.Append(append(row, verdict, s.RunID)...)
		}
		if err := t.Render(); err != nil {
			return err
		}
		for _, b := range broken {
			fmt.Fprintln(w, b)
		}
		fmt.Fprintln(w, verdict.JudgedOn(op))
		if openLoop {
			fmt.Fprintf(w, "open loop: p99 is time_to_acquire, from each request's intended start; a step that serves under %.0f%% of what it offered, or drops a request already late (not started 1ms after its intended start) when the window closed, is saturated\n",
				verdict.MinServedShare*100)
		}
		if c.Saturation != nil {
			fmt.Fprintf(w, "saturation: %.0f acquisitions/s at %s %s, meeting the SLO; knee at %s %s; stopped: %s\n",
				c.Saturation.Throughput, loadName, formatLoad(c.Saturation.Load), loadName, kneeLoad(c), c.Stop)
		} else {
			fmt.Fprintf(w, "saturation: no load level met the SLO; stopped: %s\n", c.Stop)
		}
		if c.Limit != nil {
			fmt.Fprintln(w, c.Limit.Text())
		}
		fmt.Fprintln(w)
	}
	return nil
}

// openLoopOf reports whether a search ramped an open-loop rate: its steps
// say so, or (stored before they did) read time_to_acquire.
func openLoopOf(c Capacity) bool {
	for _, s := range c.Steps {
		if s.Failures != nil {
			return s.Failures.OpenLoop
		}
		if s.LatencyOp != "" {
			return s.LatencyOp == results.OpTimeToAcquire
		}
	}
	return false
}

// latencyOpOf is the operation a search's steps report, acquire for steps
// stored before it was recorded.
func latencyOpOf(c Capacity) string {
	for _, s := range c.Steps {
		if s.LatencyOp != "" {
			return s.LatencyOp
		}
	}
	return results.OpAcquire
}

func kneeLoad(c Capacity) string {
	if c.Knee == nil {
		return results.NotApplicable
	}
	return formatLoad(c.Knee.Load)
}

// WriteCapacityCSV prints every step of every search as CSV: the search,
// the load, throughput, the latency operation and its p99, the open-loop
// counts (empty in closed loop), whether the step met the SLO and why not,
// its run, whether it is the search's saturation point or knee, the
// generator's and the busiest server's CPU shares (empty when not
// measured), and on the saturation step the search's limit.
func WriteCapacityCSV(w io.Writer, cs []Capacity, loadName string) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"search", loadName, "acquired_per_s", "latency_op", "p99_us", "offered", "served", "dropped", "met_slo", "broken", "run", "saturation", "knee",
		"client_cpu_share", "server_cpu_share", "limit"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range cs {
		op := latencyOpOf(c)
		for _, s := range c.Steps {
			offered, served, dropped := "", "", ""
			if openLoopOf(c) {
				offered, served, dropped = strconv.FormatInt(s.Offered, 10), strconv.FormatInt(s.Served, 10), strconv.FormatInt(s.Dropped, 10)
			}
			sat := c.Saturation != nil && c.Saturation.RunID == s.RunID
			knee := c.Knee != nil && c.Knee.RunID == s.RunID
			client, server, limit := "", "", ""
			if s.CPU.ClientShare != nil {
				client = f(*s.CPU.ClientShare)
			}
			if b := s.CPU.Busiest(); b >= 0 {
				server = f(b)
			}
			if sat && c.Limit != nil {
				limit = c.Limit.Limit
			}
			_ = cw.Write([]string{c.Label, f(s.Load), f(s.Throughput), op, f(s.P99US), offered, served, dropped,
				strconv.FormatBool(s.MetSLO), strings.Join(s.Broken, "; "), s.RunID, strconv.FormatBool(sat), strconv.FormatBool(knee),
				client, server, limit})
		}
	}
	cw.Flush()
	return cw.Error()
}
