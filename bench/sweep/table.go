package sweep

import (
	"encoding/json"
	"io"

	"github.com/lockbench/lockbench/results"
)

// Summary is one cell's figures: the median over its repeats, and the range.
// A figure some of the cell's repeats lack is left out, not a median of the
// others.
type Summary struct {
	Coords map[string]string  `json:"coords"`
	Runs   []string           `json:"runs"`
	Median map[string]float64 `json:"median"`
	Min    map[string]float64 `json:"min"`
	Max    map[string]float64 `json:"max"`
	// Partial is true when one of the cell's runs was interrupted.
	Partial bool `json:"partial,omitempty"`
}

// Compare is the grid as one comparison: a column per cell that ran (a cell
// interrupted before any run finished is left out), a row per figure of
// figs, and the cells' coordinates, partial cells marked on the first axis.
func Compare(g Grid, crs []CellResult, figs []results.Figure) (results.Comparison, [][]string) {
	var groups []results.Group
	var names [][]string
	for _, cr := range crs {
		if len(cr.Results) == 0 {
			continue
		}
		groups = append(groups, results.Group{Key: cr.Cell.Label(g.Axes), Runs: cr.Results})
		coords := append([]string(nil), cr.Cell.Coords...)
		if len(coords) > 0 && partial(cr) {
			coords[0] += " (partial)"
		}
		names = append(names, coords)
	}
	if figs == nil {
		figs = results.FiguresFor(allOf(crs))
	}
	return results.CompareFigures(groups, figs), names
}

func partial(cr CellResult) bool {
	for _, r := range cr.Results {
		if r.Partial {
			return true
		}
	}
	return false
}

func allOf(crs []CellResult) []*results.Result {
	var out []*results.Result
	for _, cr := range crs {
		out = append(out, cr.Results...)
	}
	return out
}

func axisNames(g Grid) []string {
	out := make([]string, len(g.Axes))
	for i, a := range g.Axes {
		out[i] = a.Flag
	}
	return out
}

// Summarize reduces each cell's repeats to median, min and max of every
// figure its runs have.
func Summarize(g Grid, crs []CellResult) []Summary {
	cmp, _ := Compare(g, crs, nil)
	var out []Summary
	col := 0
	for _, cr := range crs {
		if len(cr.Results) == 0 {
			continue
		}
		s := Summary{Coords: map[string]string{}, Median: map[string]float64{}, Min: map[string]float64{}, Max: map[string]float64{},
			Partial: partial(cr)}
		for i, a := range g.Axes {
			s.Coords[a.Flag] = cr.Cell.Coords[i]
		}
		for _, r := range cr.Results {
			s.Runs = append(s.Runs, r.ID)
		}
		for _, row := range cmp.Rows {
			if c := row.Cells[col]; c.Present {
				name := row.Figure().Name
				s.Median[name], s.Min[name], s.Max[name] = c.Value, c.Min, c.Max
			}
		}
		out = append(out, s)
		col++
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

// WriteTable prints the sweep view: one row per cell, the grid's axes as
// the first columns, then the view's figures (its defaults, or those
// columns names), each the median of the cell's repeats with their spread.
func WriteTable(w io.Writer, g Grid, crs []CellResult, columns []string) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeTableText(w, g, crs, columns) })
}

func writeTableText(w io.Writer, g Grid, crs []CellResult, columns []string) error {
	figs, err := results.SweepView().Figures(columns)
	if err != nil {
		return err
	}
	cmp, names := Compare(g, crs, figs)
	lead := make([]results.TableColumn, len(g.Axes))
	for i, a := range axisNames(g) {
		lead[i] = results.ParameterColumn(a)
	}
	return cmp.WriteRows(w, results.RowsView{Lead: lead, Names: names})
}

// WriteCSV prints every figure of every cell as CSV: axes, runs, then the
// median, min and max of each figure, empty where a run lacks it.
func WriteCSV(w io.Writer, g Grid, crs []CellResult) error {
	cmp, names := Compare(g, crs, nil)
	return cmp.WriteRowsCSV(w, axisNames(g), names)
}

// WriteJSON prints the cells' summaries as a JSON array.
func WriteJSON(w io.Writer, g Grid, crs []CellResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Summarize(g, crs))
}
