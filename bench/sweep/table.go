package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/lockbench/lockbench/results"
)

// column is one figure of the catalogue a sweep table shows.
type column struct {
	// header is the table's short name for it.
	header string
	// metric is the figure's name in the catalogue.
	metric string
	// spread shows [min–max] beside the median when repeats differ: for
	// throughput so noise is visible, and for counts of bad events so that
	// one repeat's incident is not rounded away by a median of 0.5.
	spread bool
}

func (c column) format(v float64) string {
	f, err := results.LookupFigure(c.metric)
	if err != nil {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	if f.Unit == results.UnitRatio {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return f.Format(v)
}

var sweepColumns = []column{
	{"acq/s", "throughput", true},
	{"p50", "acquire.p50", false},
	{"p99", "acquire.p99", false},
	{"p99.9", "acquire.p999", false},
	{"contention", "contention.rate", false},
	{"errors", "errors", true},
	{"incidents", "incidents", true},
	{"cmds/acq", "servers.commands_per_acquire", false},
	{"cpu/acq", "servers.cpu_us_per_acquire", false},
}

// Summary is one cell's figures: the median over its repeats, and the range.
type Summary struct {
	Coords map[string]string  `json:"coords"`
	Runs   []string           `json:"runs"`
	Median map[string]float64 `json:"median"`
	Min    map[string]float64 `json:"min"`
	Max    map[string]float64 `json:"max"`
	// Partial is true when one of the cell's runs was interrupted.
	Partial bool `json:"partial,omitempty"`
}

// Summarize reduces each cell's repeats to median, min and max per metric;
// a cell interrupted before any run finished is left out.
func Summarize(g Grid, crs []CellResult) []Summary {
	var out []Summary
	for _, cr := range crs {
		if len(cr.Results) == 0 {
			continue
		}
		s := Summary{Coords: map[string]string{}, Median: map[string]float64{}, Min: map[string]float64{}, Max: map[string]float64{}}
		for i, a := range g.Axes {
			s.Coords[a.Flag] = cr.Cell.Coords[i]
		}
		for _, r := range cr.Results {
			s.Runs = append(s.Runs, r.ID)
			s.Partial = s.Partial || r.Partial
		}
		for _, col := range sweepColumns {
			var xs []float64
			for _, r := range cr.Results {
				if v, err := results.Metric(r, col.metric); err == nil {
					xs = append(xs, v)
				}
			}
			if len(xs) == 0 {
				continue
			}
			s.Median[col.metric] = results.Median(xs)
			s.Min[col.metric], s.Max[col.metric] = minMax(xs)
		}
		out = append(out, s)
	}
	return out
}

func minMax(xs []float64) (lo, hi float64) {
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// WriteTable prints one row per cell, the grid's axes as the first columns.
// With repeats, throughput, errors and incidents show median and [min–max]
// where the repeats differ.
func WriteTable(w io.Writer, g Grid, sums []Summary) error {
	header := []any{}
	for _, a := range g.Axes {
		header = append(header, a.Flag)
	}
	for _, c := range sweepColumns {
		header = append(header, c.header)
	}
	t := results.NewTable(w, header...)
	for _, s := range sums {
		row := []any{}
		for i, a := range g.Axes {
			coord := s.Coords[a.Flag]
			if i == 0 && s.Partial {
				coord += " (partial)"
			}
			row = append(row, coord)
		}
		for _, c := range sweepColumns {
			row = append(row, s.cell(c))
		}
		_ = t.Append(row...)
	}
	return t.Render()
}

// cell is one metric of a summary as the table shows it, "-" when no run had it.
func (s Summary) cell(c column) string {
	v, ok := s.Median[c.metric]
	if !ok {
		return "-"
	}
	lo, hi := s.Min[c.metric], s.Max[c.metric]
	if c.spread && len(s.Runs) > 1 && lo != hi {
		return fmt.Sprintf("%s [%s–%s]", c.format(v), c.format(lo), c.format(hi))
	}
	return c.format(v)
}

// WriteCSV prints the summaries as CSV: axes, then median/min/max per metric,
// left empty where no run had the metric.
func WriteCSV(w io.Writer, g Grid, sums []Summary) error {
	cw := csv.NewWriter(w)
	var header []string
	for _, a := range g.Axes {
		header = append(header, a.Flag)
	}
	header = append(header, "runs")
	for _, c := range sweepColumns {
		header = append(header, c.metric, c.metric+"_min", c.metric+"_max")
	}
	_ = cw.Write(header)
	for _, s := range sums {
		var row []string
		for _, a := range g.Axes {
			row = append(row, s.Coords[a.Flag])
		}
		row = append(row, strconv.Itoa(len(s.Runs)))
		for _, c := range sweepColumns {
			if _, ok := s.Median[c.metric]; !ok {
				// No run had it (INFO refused, say): empty, not a measured zero.
				row = append(row, "", "", "")
				continue
			}
			row = append(row, num(s.Median[c.metric]), num(s.Min[c.metric]), num(s.Max[c.metric]))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', 8, 64) }

// WriteJSON prints the summaries as a JSON array.
func WriteJSON(w io.Writer, sums []Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sums)
}
