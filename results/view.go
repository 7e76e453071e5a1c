package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// MaxTableWidth is the widest a default terminal table may be: every table
// lockbench prints with its default columns fits a 120-column terminal.
const MaxTableWidth = 120

// View is a table over a comparison: the key figures it shows by default,
// named in the catalogue. Any other figure is one --columns away, and JSON
// and CSV carry them all.
type View struct {
	// Name is the table's name in messages ("side-by-side", "lock-cost").
	Name string
	// Defaults are the catalogue names of its key figures, in order.
	Defaults []string
}

// SideBySideView is `run`'s table of several topologies or locks.
func SideBySideView() View {
	return View{Name: "side-by-side", Defaults: []string{"throughput.acquired_per_s", "acquire.p50", "acquire.p99",
		"servers.commands_per_acquire", "servers.cpu_us_per_acquire"}}
}

// SweepView is `sweep`'s table, one row per cell of the grid.
func SweepView() View {
	return View{Name: "sweep", Defaults: []string{"throughput.acquired_per_s", "acquire.p50", "acquire.p99",
		"contention.rate", "errors", "incidents", "servers.commands_per_acquire"}}
}

// LockCostView is `lock-cost`'s table, one row per lock.
func LockCostView() View {
	return View{Name: "lock-cost", Defaults: []string{"throughput.acquired_per_s", "acquire.p99",
		"servers.commands_per_acquire", "servers.cpu_us_per_acquire", "client.cpu_us_per_acquire"}}
}

// FaultView is `lock-cost --with-fault`'s table of each lock under its fault.
func FaultView() View {
	return View{Name: "lock-cost fault", Defaults: []string{"throughput.acquired_per_s", "acquire.p99", "errors"}}
}

// CapacityView is `capacity`'s table, one row per step of the ramp: its
// load, SLO verdict and run stay, and --columns replaces the key figures
// (throughput, the latency op's p99, CPU) with the figures named.
func CapacityView() View {
	return View{Name: "capacity", Defaults: []string{"throughput.acquired_per_s", "acquire.p99", "client.cpu_share"}}
}

// CompareView is `results compare`'s table: a row per figure, every figure
// the runs have unless --columns names some.
func CompareView() View { return View{Name: "compare"} }

// Figures resolves --columns for the view: none given is its defaults;
// otherwise the figures named (catalogue names, short names such as p99,
// errors.KIND), in the order given. An unknown name is an error that lists
// what is accepted.
func (v View) Figures(columns []string) ([]Figure, error) {
	names := SplitColumns(columns)
	if len(names) == 0 {
		names = v.Defaults
	}
	out := make([]Figure, 0, len(names))
	for _, n := range names {
		f, err := LookupFigure(n)
		if err != nil {
			return nil, fmt.Errorf("--columns %q: not a figure; accepted: %s", n, strings.Join(ColumnNames(), ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

// SplitColumns splits --columns values (repeatable, each comma-separated).
func SplitColumns(columns []string) []string {
	var out []string
	for _, c := range columns {
		for _, n := range strings.Split(c, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// ColumnNames lists every name --columns accepts: the catalogue's figures,
// then the error-kind family.
func ColumnNames() []string {
	var out []string
	for _, f := range Catalogue() {
		out = append(out, f.Name)
	}
	return append(out, "errors.KIND")
}

// Header is the short name a column of a view shows for f: its label less
// the words a narrow table can do without.
func Header(f Figure) string {
	switch f.Name {
	case "throughput.acquired_per_s":
		return "acq/s"
	case "servers.commands_per_acquire":
		return "cmds/acq"
	case "servers.cpu_us_per_acquire":
		return "srv cpu/acq"
	case "client.cpu_us_per_acquire":
		return "cli cpu/acq"
	case "contention.rate":
		return "contention"
	case "incidents":
		return "incidents"
	}
	return strings.TrimPrefix(f.Label, OpAcquire+" ")
}

// RowsView lays a comparison out one row per column (per group of runs): the
// cells that name the group, then each figure, then cells a command derives
// outside the catalogue.
type RowsView struct {
	// Lead heads the cells naming each row; Names has them, one slice per
	// column of the comparison.
	Lead  []TableColumn
	Names [][]string
	// Ratios adds to every row after the first its ratio to the first.
	Ratios bool
	// Extra are trailing columns a command derives outside the comparison
	// (figures of DerivedFigures, or labels); Extras has their cells, one
	// slice per row.
	Extra  []TableColumn
	Extras [][]string
}

// WriteRows renders c as v lays it out. Where rows have repeats a cell is
// the median and its spread; a runs column counts them where rows differ
// in how many they have, else a line under the table says it once.
func (c Comparison) WriteRows(w io.Writer, v RowsView) error {
	if len(c.Columns) == 0 {
		return nil
	}
	runs := len(c.Columns[0].Runs)
	repeats := slices.ContainsFunc(c.Columns, func(col Column) bool { return len(col.Runs) != runs })
	header := make([]TableColumn, 0, len(v.Lead)+len(c.Rows)+len(v.Extra)+1)
	header = append(header, v.Lead...)
	if repeats {
		header = append(header, LabelColumn("runs"))
	}
	for _, row := range c.Rows {
		header = append(header, ColumnOf(row.figure))
	}
	header = append(header, v.Extra...)
	t := NewTable(w, header...)
	for i, col := range c.Columns {
		var cells []any
		if i < len(v.Names) {
			for _, n := range v.Names[i] {
				cells = append(cells, n)
			}
		}
		if repeats {
			cells = append(cells, len(col.Runs))
		}
		for _, row := range c.Rows {
			cells = append(cells, cellWithRatio(row.figure, row.Cells[i], len(col.Runs), v.Ratios && i > 0))
		}
		if i < len(v.Extras) {
			for _, e := range v.Extras[i] {
				cells = append(cells, e)
			}
		}
		if err := t.Append(cells...); err != nil {
			return fmt.Errorf("%s row: %w", col.Key, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	if !repeats && runs > 1 {
		fmt.Fprintf(w, "(each row: the median of its %d runs ±their spread)\n", runs)
	}
	if v.Ratios && len(c.Columns) > 1 {
		fmt.Fprintln(w, RatioLegend("the first row"))
	}
	return nil
}

// WriteRowsCSV renders c one line per column (group of runs): the naming
// cells, the number of runs, then each figure's median, min and max, left
// empty where a run lacks it (not a measured zero).
func (c Comparison) WriteRowsCSV(w io.Writer, lead []string, names [][]string) error {
	cw := csv.NewWriter(w)
	header := append(append([]string(nil), lead...), "runs")
	for _, row := range c.Rows {
		n := row.figure.Name
		header = append(header, n, n+"_min", n+"_max")
	}
	_ = cw.Write(header)
	for i, col := range c.Columns {
		var line []string
		if i < len(names) {
			line = append(line, names[i]...)
		}
		line = append(line, strconv.Itoa(len(col.Runs)))
		for _, row := range c.Rows {
			cell := row.Cells[i]
			if !cell.Present {
				line = append(line, "", "", "")
				continue
			}
			line = append(line, num(cell.Value), num(cell.Min), num(cell.Max))
		}
		_ = cw.Write(line)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Figure is the catalogue figure of the row.
func (r Row) Figure() Figure { return r.figure }

// Cell is the row's cell of column i of c, found by figure name; ok is
// false when c has no row of that figure.
func (c Comparison) Cell(name string, i int) (Cell, bool) {
	for _, r := range c.Rows {
		if r.figure.Name == name && i < len(r.Cells) {
			return r.Cells[i], true
		}
	}
	return Cell{}, false
}
