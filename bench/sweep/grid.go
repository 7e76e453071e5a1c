// Package sweep runs grids of ordinary runs: sweeps over any run flags,
// capacity searches that ramp load until an SLO breaks, and TTL × renewal
// tuning. Every cell is an ordinary run with an ordinary stored result.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// Axis is one run flag varied over a list of values.
type Axis struct {
	// Flag is the run flag's name.
	Flag string
	// Values are the flag's values, in order.
	Values []string
}

// Grid is a sweep: base flag values, the axes varied over them, and how many
// times each cell runs.
type Grid struct {
	// Base are the flag values every cell shares.
	Base plan.Values
	// Axes vary, first axis slowest.
	Axes []Axis
	// Count is the repeats per cell (at least 1).
	Count int
	// Asserts are checked on every run.
	Asserts []string
}

// Cell is one point of a grid.
type Cell struct {
	// Values are the run's flag values (base plus this cell's coordinates).
	Values plan.Values
	// Coords are the axis values of this cell, in axis order, as they may be
	// shown (URLs without their passwords).
	Coords []string
}

// Label renders the cell's coordinates as flag=value pairs.
func (c Cell) Label(axes []Axis) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = a.Flag + "=" + c.Coords[i]
	}
	return strings.Join(parts, " ")
}

// ParseList splits a sweep list. A piece that starts with a digit, '.' or '-'
// after a piece holding a ':' continues that spec (zipf:10,1.1 is one value),
// so most lists need no quoting; '|' separates values unambiguously.
func ParseList(s string) []string {
	if strings.Contains(s, "|") {
		return trimAll(strings.Split(s, "|"))
	}
	var out []string
	for _, piece := range strings.Split(s, ",") {
		piece = strings.TrimSpace(piece)
		if n := len(out); n > 0 && piece != "" && continues(out[n-1], piece) {
			out[n-1] += "," + piece
			continue
		}
		out = append(out, piece)
	}
	return out
}

func continues(prev, piece string) bool {
	if !strings.Contains(prev, ":") {
		return false
	}
	c := piece[0]
	return c >= '0' && c <= '9' || c == '.' || c == '-'
}

func trimAll(s []string) []string {
	for i := range s {
		s[i] = strings.TrimSpace(s[i])
	}
	return s
}

// Cells expands the grid into its cells (the cartesian product of the axes)
// and checks every cell parses as a run, so a bad value fails before any run.
func (g Grid) Cells() ([]Cell, error) {
	cells := []Cell{{Values: g.Base.Clone()}}
	for _, a := range g.Axes {
		if len(a.Values) == 0 {
			return nil, &plan.InputError{Flag: a.Flag, Msg: "sweep axis has no values"}
		}
		// A value listed twice would run the same cells twice and show them
		// as two; repeats are --count's.
		for i, v := range a.Values {
			if slices.Contains(a.Values[:i], v) {
				return nil, &plan.InputError{Flag: a.Flag, Msg: fmt.Sprintf("%q listed twice in %s; list each value once, and --count N to repeat runs", v, strings.Join(a.Values, ","))}
			}
		}
		var next []Cell
		for _, c := range cells {
			for _, v := range a.Values {
				nc := Cell{Values: c.Values.Clone(), Coords: append(append([]string(nil), c.Coords...), plan.Shown(a.Flag, v))}
				nc.Values.Set(a.Flag, v)
				next = append(next, nc)
			}
		}
		cells = next
	}
	for _, c := range cells {
		if h := c.Values.Get("history"); !plan.HistoryPerRun(h) && (len(cells) > 1 || g.Count > 1) {
			return nil, plan.HistoryPerRunError(fmt.Sprintf("a grid of %d run(s)", len(cells)*max(1, g.Count)))
		}
		if _, err := plan.Expand(c.Values); err != nil {
			return nil, g.cellError(c, err)
		}
		// Each cell's result is named by its coordinates, after the sweep's
		// own --label, so lists and report legends tell cells apart.
		if len(g.Axes) > 0 {
			label := c.Label(g.Axes)
			if base := g.Base.Get("label"); base != "" {
				label = base + " " + label
			}
			c.Values.Set("label", label)
		}
	}
	return cells, nil
}

// AxesFromValues turns every flag given with more than one value (a list)
// into an axis, in the order of names; the rest stays in the base.
func AxesFromValues(given plan.Values, names []string) (plan.Values, []Axis) {
	base := plan.Values{}
	var axes []Axis
	for _, name := range names {
		vals, ok := given[name]
		if !ok {
			continue
		}
		var list []string
		for _, v := range vals {
			list = append(list, splitValue(name, v)...)
		}
		if len(list) > 1 {
			axes = append(axes, Axis{Flag: name, Values: list})
			continue
		}
		base[name] = list
	}
	return base, axes
}

// splitValue splits one value given to a sweep flag into its list. A staged
// --rate (100,2000:30s,2000:1m) is one value, though it holds commas: its
// start rate would otherwise become an axis value of its own; several staged
// rates are separated by '|'.
func splitValue(flag, v string) []string {
	if flag == "rate" && !strings.Contains(v, "|") {
		if r, err := workloads.ParseRate(flag, v); err == nil && r.Staged() {
			return []string{strings.TrimSpace(v)}
		}
	}
	return ParseList(v)
}

// Runner executes one run and stores its result. group names the cell's set
// of repeats and repeat is the index within it, so results can be grouped.
type Runner func(ctx context.Context, v plan.Values, group string, repeat int) (*results.Result, error)

// CellResult is a cell with the results of its repeats.
type CellResult struct {
	Cell    Cell
	Results []*results.Result
}

// Progress receives a line before each run: done runs, total and the cell.
type Progress func(done, total int, label string)

// Run runs every cell Count times. It stops at the first runtime error or
// when ctx ends, returning what finished so far.
func Run(ctx context.Context, g Grid, cells []Cell, run Runner, progress Progress) ([]CellResult, error) {
	count := max(1, g.Count)
	sweepID := plan.NewRunID()
	total := len(cells) * count
	out := make([]CellResult, 0, len(cells))
	done := 0
	for ci, c := range cells {
		cr := CellResult{Cell: c}
		group := fmt.Sprintf("%s-c%d", sweepID, ci)
		for i := range count {
			if ctx.Err() != nil {
				return append(out, cr), ctx.Err()
			}
			if progress != nil {
				progress(done, total, fmt.Sprintf("%s (run %d/%d)", c.Label(g.Axes), i+1, count))
			}
			r, err := run(ctx, c.Values.Clone(), group, i)
			if err != nil {
				// Every cell's values were checked before the first ran, so a
				// failure here is mostly the servers' (one that does not
				// answer), not the cell's: lead with it, then say where the
				// grid stopped.
				return append(out, cr), fmt.Errorf("%w (stopped at run %d of %d, %s; %s)", err, done+1, total, c.Label(g.Axes), storedSoFar(done))
			}
			cr.Results = append(cr.Results, r)
			done++
		}
		out = append(out, cr)
	}
	return out, nil
}

// storedSoFar says how many runs of a grid finished and were stored.
func storedSoFar(done int) string {
	switch done {
	case 0:
		return "nothing stored"
	case 1:
		return "1 run stored"
	}
	return fmt.Sprintf("%d runs stored", done)
}

// cellError names the cell a bad input was found in only when one of the
// grid's own axes is at fault: an error in a flag every cell shares (a
// wrong number of --redis URLs) is the user's input, not the cell's, and
// the command may not be sweep (tune-ttl, advise build grids too).
func (g Grid) cellError(c Cell, err error) error {
	var ie *plan.InputError
	if errors.As(err, &ie) && !slices.ContainsFunc(g.Axes, func(a Axis) bool { return a.Flag == ie.Flag }) {
		return err
	}
	return fmt.Errorf("at %s: %w", c.Label(g.Axes), err)
}
