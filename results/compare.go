package results

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Comparison is several runs, or groups of repeats, side by side: one column
// each, one row per figure, every column also related to the first.
type Comparison struct {
	// Columns are the runs or groups, the first being the baseline.
	Columns []Column `json:"columns"`
	// Rows are the figures, in report order.
	Rows []Row `json:"rows"`
}

// Column is one run or one group of repeats.
type Column struct {
	// Key is the run's id, or the group's key.
	Key string `json:"key"`
	// Label describes the column's lock, topology and workload.
	Label string `json:"label"`
	// Runs are the ids of the runs the column summarises.
	Runs []string `json:"runs"`
}

// Row is one figure across the columns.
type Row struct {
	// Key is the figure's path in the result JSON, e.g. "ops.acquire.latency_us.p99".
	Key string `json:"key"`
	// Metric is the figure's human name, e.g. "acquire p99".
	Metric string `json:"metric"`
	// Unit is one of the Unit constants.
	Unit string `json:"unit"`
	// Better is "higher", "lower" or empty when neither is good news.
	Better string `json:"better,omitempty"`
	// Cells has one entry per column.
	Cells []Cell `json:"cells"`

	figure Figure
}

// Cell is one figure of one column. For a single run Min, Value and Max are
// equal; for a group Value is the median. A figure that some of the
// column's runs lack is absent from the whole cell (n/a in tables, null in
// JSON, empty in CSV): a median of the runs that have it would pass for a
// measurement of all of them.
type Cell struct {
	// N is how many of the column's runs have the figure.
	N int `json:"n"`
	// Present is true when every run of the column has the figure.
	Present bool `json:"-"`
	// Value is the figure, or its median over the column's runs.
	Value float64 `json:"value"`
	// Min is the smallest of the column's runs' figures.
	Min float64 `json:"min"`
	// Max is the largest of the column's runs' figures.
	Max float64 `json:"max"`
	// Ratio is Value over the first column's Value, both as the table shows
	// them (at the figure's precision); absent for the first column, and
	// where the baseline is 0 or absent.
	Ratio *float64 `json:"ratio,omitempty"`
	// Same is set when Value and the first column's Value print alike at
	// the figure's precision: no difference is shown, so none is claimed.
	Same bool `json:"same,omitempty"`
	// WithinNoise is set when this column or the first has repeats and the
	// two [Min, Max] ranges overlap, so the difference may be noise.
	WithinNoise bool `json:"within_noise,omitempty"`
}

// MarshalJSON writes an absent cell's figures as null, never as 0.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	if c.Present {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		N     int      `json:"n"`
		Value *float64 `json:"value"`
		Min   *float64 `json:"min"`
		Max   *float64 `json:"max"`
	}{N: c.N})
}

// Compare puts runs side by side, one column per run, the first being the
// baseline the others' ratios refer to.
func Compare(runs []*Result) Comparison {
	groups := make([]Group, len(runs))
	for i, r := range runs {
		groups[i] = Group{Key: r.ID, Runs: []*Result{r}}
	}
	return CompareGroups(NameGroups(groups))
}

// NameGroups keys each group of one run by the run's name instead of its id,
// where no other group has that name; groups of repeats keep their key. Runs
// nobody named are called by the settings that set them apart
// ("concurrency=16, keys=uniform:4"), where those tell them apart: a column
// of ids says nothing about what was compared.
func NameGroups(groups []Group) []Group {
	names := make([]string, len(groups))
	count := map[string]int{}
	for i, g := range groups {
		if len(g.Runs) == 1 {
			names[i] = RunName(g.Runs[0])
			count[names[i]]++
		}
	}
	nameUnlabelled(groups, names, count)
	out := append([]Group(nil), groups...)
	for i, g := range out {
		if len(g.Runs) == 1 && count[names[i]] == 1 {
			out[i].Key = names[i]
		}
	}
	return out
}

// nameUnlabelled renames, in names, the single runs that have no label by
// the settings in which they differ, when every such name is one no other
// group has and cites a setting (not only the end of an id).
func nameUnlabelled(groups []Group, names []string, count map[string]int) {
	var idx []int
	var set []*Result
	for i, g := range groups {
		if len(g.Runs) == 1 && g.Runs[0].Label == "" && names[i] == g.Runs[0].ID {
			idx, set = append(idx, i), append(set, g.Runs[0])
		}
	}
	if len(set) < 2 {
		return
	}
	parts := distinguishing(set)
	for k, part := range parts {
		if part == shortID(set[k].ID) || count[part] > 0 {
			return
		}
	}
	for k, i := range idx {
		count[names[i]]--
		names[i] = parts[k]
		count[names[i]]++
	}
}

// CompareGroups puts groups of repeats side by side, one column per group
// with the min / median / max of each figure, and marks differences from the
// first group whose ranges overlap as within noise.
func CompareGroups(groups []Group) Comparison {
	var all []*Result
	for _, g := range groups {
		all = append(all, g.Runs...)
	}
	return CompareFigures(groups, FiguresFor(all))
}

// CompareFigures is CompareGroups over the figures given, in that order:
// the comparison a view shows.
func CompareFigures(groups []Group, figs []Figure) Comparison {
	if len(groups) == 0 {
		// Nothing to relate to a baseline; WriteTable reports the empty case.
		return Comparison{}
	}
	c := Comparison{Columns: make([]Column, len(groups))}
	for i, g := range groups {
		ids := make([]string, len(g.Runs))
		for j, r := range g.Runs {
			ids[j] = r.ID
		}
		c.Columns[i] = Column{Key: g.Key, Label: groupLabel(g), Runs: ids}
	}
	return c.withRows(figs, groups)
}

func (c Comparison) withRows(figs []Figure, groups []Group) Comparison {
	for _, f := range figs {
		c.Rows = append(c.Rows, compareRow(f, groups))
	}
	return c
}

func groupLabel(g Group) string {
	if len(g.Runs) == 0 {
		return ""
	}
	return label(g.Runs[0])
}

// label is the short description of a run a comparison's legend shows.
func label(r *Result) string {
	parts := []string{"lock " + r.Lock.Name, "topology " + r.Topology.Spec}
	if d := describeConfig(r); d != "" {
		parts = append(parts, d)
	}
	return strings.Join(parts, "  ")
}

func compareRow(f Figure, groups []Group) Row {
	row := Row{Key: f.Key, Metric: f.Label, Unit: f.Unit, Better: f.Better, Cells: make([]Cell, len(groups)), figure: f}
	for i, g := range groups {
		row.Cells[i] = cellOf(f, g.Runs)
	}
	base := row.Cells[0]
	for i := 1; i < len(row.Cells); i++ {
		relate(f, &row.Cells[i], base, len(groups[0].Runs) > 1 || len(groups[i].Runs) > 1)
	}
	return row
}

// cellOf is f over runs: present only when every run has it.
func cellOf(f Figure, runs []*Result) Cell {
	s := statsFor(f, runs)
	if s.n == 0 || s.n < len(runs) {
		return Cell{N: s.n}
	}
	return Cell{N: s.n, Present: true, Value: s.median, Min: s.min, Max: s.max}
}

// relate sets c's ratio to base, of the values as shown at f's precision,
// and, when either side has repeats, whether their ranges overlap. Two
// single runs have no measured noise, so they are never called "within
// noise"; nor are two figures that were the same in every run, since
// nothing varied.
func relate(f Figure, c *Cell, base Cell, repeats bool) {
	if !c.Present || !base.Present {
		return
	}
	shown, baseShown := f.Shown(c.Value), f.Shown(base.Value)
	c.Same = f.Format(c.Value) == f.Format(base.Value)
	// Against a shown 0 there is no ratio: 0 and 0 are "same", anything
	// else is infinitely more than nothing.
	if baseShown != 0 {
		r := shown / baseShown
		c.Ratio = &r
	}
	constant := c.Min == c.Max && base.Min == base.Max && c.Min == base.Min
	c.WithinNoise = repeats && !constant && !c.Same && c.Min <= base.Max && base.Min <= c.Max
}

// Write renders c in format "table", "json" or "csv".
func (c Comparison) Write(w io.Writer, format string) error {
	out := CompareOutput()
	if format == "" {
		format = string(out.Default())
	}
	return out.Write(w, Format(format), c)
}

// CompareOutput is a comparison in each format it offers.
func CompareOutput() Output[Comparison] {
	return Output[Comparison]{
		Table: func(w io.Writer, c Comparison) error { return c.WriteTable(w) },
		JSON:  func(w io.Writer, c Comparison) error { return c.WriteJSON(w) },
		CSV:   func(w io.Writer, c Comparison) error { return c.WriteCSV(w) },
	}
}

// WriteTable renders c as a text table: a legend naming each column, then one
// row per figure with each column's value (the median and its spread for
// groups) and, after the first, its ratio to the first column.
func (c Comparison) WriteTable(w io.Writer) error {
	return Wrapping(w, c.writeTableText)
}

func (c Comparison) writeTableText(w io.Writer) error {
	if len(c.Columns) == 0 {
		return fmt.Errorf("compare: no runs to compare")
	}
	for _, col := range c.Columns {
		runs := ""
		if len(col.Runs) > 1 {
			runs = fmt.Sprintf(" (%d runs: median ±spread)", len(col.Runs))
		}
		if len(col.Runs) == 1 && col.Runs[0] != col.Key {
			runs = " (" + col.Runs[0] + ")"
		}
		fmt.Fprintf(w, "%s%s: %s\n", col.Key, runs, col.Label)
	}
	fmt.Fprintln(w, RatioLegend(c.Columns[0].Key))
	fmt.Fprintln(w)
	var zeros []string
	for _, row := range c.Rows {
		if zeroEverywhere(row) {
			zeros = append(zeros, row.Metric)
		}
	}
	tables, err := c.fittingTables()
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := io.WriteString(w, t); err != nil {
			return err
		}
	}
	if len(zeros) > 0 {
		// One line instead of a row each: a table of zeros hides the rows
		// that differ. The JSON and CSV formats keep every row.
		fmt.Fprintf(w, "0 in every column: %s\n", strings.Join(zeros, ", "))
	}
	return nil
}

// fittingTables renders c's rows as one table, or, where that is wider than
// MaxTableWidth, as several, each with the baseline and as many of the other
// columns as fit (at least one): a terminal wraps a wider table into
// unreadable lines.
func (c Comparison) fittingTables() ([]string, error) {
	others := make([]int, 0, len(c.Columns)-1)
	for i := 1; i < len(c.Columns); i++ {
		others = append(others, i)
	}
	for per := len(others); ; per-- {
		var out []string
		fits := true
		for _, chunk := range chunks(others, per) {
			t, err := c.tableOf(append([]int{0}, chunk...))
			if err != nil {
				return nil, err
			}
			fits = fits && widest(t) <= MaxTableWidth
			out = append(out, t)
		}
		if fits || per <= 1 {
			return out, nil
		}
	}
}

// chunks cuts xs into runs of at most per (one empty run for none).
func chunks(xs []int, per int) [][]int {
	if len(xs) == 0 || per < 1 {
		return [][]int{xs}
	}
	var out [][]int
	for start := 0; start < len(xs); start += per {
		out = append(out, xs[start:min(start+per, len(xs))])
	}
	return out
}

// tableOf renders the rows not zero everywhere over the columns given.
func (c Comparison) tableOf(cols []int) (string, error) {
	var b strings.Builder
	header := []TableColumn{LabelColumn("metric")}
	for _, i := range cols {
		header = append(header, RowFigureColumn(c.Columns[i].Key))
	}
	t := labelsLeft(NewTable(&b, header...))
	for _, row := range c.Rows {
		if zeroEverywhere(row) {
			continue
		}
		line := []any{row.Metric}
		for _, i := range cols {
			line = append(line, cellWithRatio(row.figure, row.Cells[i], len(c.Columns[i].Runs), i > 0))
		}
		if err := t.Append(line...); err != nil {
			return "", fmt.Errorf("compare table row %s: %w", row.Key, err)
		}
	}
	if err := t.Render(); err != nil {
		return "", fmt.Errorf("render compare table: %w", err)
	}
	return b.String(), nil
}

// widest is the longest line of text, in runes.
func widest(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

// zeroEverywhere reports whether row was measured in every column and every
// run in it showed 0: nothing to compare.
func zeroEverywhere(row Row) bool {
	for _, c := range row.Cells {
		if !c.Present || row.figure.Format(c.Min) != "0" || row.figure.Format(c.Max) != "0" {
			return false
		}
	}
	return len(row.Cells) > 0
}

// RatioLegend is the line under a table of ratios saying what they are.
func RatioLegend(base string) string {
	return fmt.Sprintf("(ratio to %s of the values as shown; same: printed alike; ~: within noise; n/a: not measured in every run)", base)
}

// cellWithRatio is a cell as a view shows it: its value, the spread of a
// group's repeats, and (unless it is the baseline) its ratio.
func cellWithRatio(f Figure, c Cell, runs int, ratio bool) string {
	s := cellText(f, c, runs)
	if ratio && c.Present {
		s += " (" + RatioCell(c) + ")"
	}
	return s
}

// cellText is a cell's value, with the spread of its repeats where they
// print differently: ±x% around the median (benchstat's), or the range
// when the median is 0.
func cellText(f Figure, c Cell, runs int) string {
	switch {
	case !c.Present:
		return NotMeasured
	case runs < 2 || f.Format(c.Min) == f.Format(c.Max):
		return f.Format(c.Value)
	case f.Shown(c.Value) == 0:
		return fmt.Sprintf("%s [%s–%s]", f.Format(c.Value), f.Format(c.Min), f.Format(c.Max))
	}
	return f.Format(c.Value) + " " + spread(stats{n: c.N, min: c.Min, median: c.Value, max: c.Max})
}

// RatioText renders a ratio with three significant digits from 1 up (2.58x,
// 11.5x, 115x) and two decimals below (0.66x), so that a cell stays narrow.
func RatioText(r float64) string {
	switch {
	case r >= 99.95:
		return fmt.Sprintf("%.0fx", r)
	case r >= 9.995:
		return fmt.Sprintf("%.1fx", r)
	}
	return fmt.Sprintf("%.2fx", r)
}

// WriteJSON renders c as indented JSON, the form scripts should read.
func (c Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("encode comparison: %w", err)
	}
	return nil
}

// WriteCSV renders c as one CSV line per figure: key, metric, unit, then for
// each column its value, min, max, n and (after the first) ratio and
// within_noise. Values are raw numbers in the row's unit.
func (c Comparison) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := []string{"key", "metric", "unit"}
	for i, col := range c.Columns {
		header = append(header, col.Key, col.Key+":min", col.Key+":max", col.Key+":n")
		if i > 0 {
			header = append(header, col.Key+":ratio", col.Key+":within_noise")
		}
	}
	_ = cw.Write(header)
	for _, row := range c.Rows {
		line := []string{row.Key, row.Metric, row.Unit}
		for i, cell := range row.Cells {
			line = append(line, csvCell(cell)...)
			if i > 0 {
				line = append(line, csvRatio(cell), strconv.FormatBool(cell.WithinNoise))
			}
		}
		_ = cw.Write(line)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write comparison csv: %w", err)
	}
	return nil
}

func csvCell(c Cell) []string {
	if !c.Present {
		return []string{"", "", "", strconv.Itoa(c.N)}
	}
	return []string{num(c.Value), num(c.Min), num(c.Max), strconv.Itoa(c.N)}
}

func csvRatio(c Cell) string {
	if c.Ratio == nil {
		return ""
	}
	return strconv.FormatFloat(*c.Ratio, 'f', 4, 64)
}

// num renders a raw number as briefly as it round-trips.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// GroupHeadline is the one-line description of a group of repeats.
func GroupHeadline(g Group) string {
	if len(g.Runs) == 0 {
		return "group " + g.Key + ": no runs"
	}
	ids := make([]string, len(g.Runs))
	for i, r := range g.Runs {
		ids[i] = r.ID
	}
	return fmt.Sprintf("group %s: %d runs (%s)  %s", g.Key, len(g.Runs), strings.Join(ids, ", "), label(g.Runs[0]))
}

// WriteGroupSummary renders a group of repeats as `show` prints it: every
// figure's min, median and max over the runs, and the spread around the
// median, so the noise of the measurement is visible next to the figure.
func WriteGroupSummary(w io.Writer, g Group) error {
	return Wrapping(w, func(w io.Writer) error { return writeGroupSummaryText(w, g) })
}

func writeGroupSummaryText(w io.Writer, g Group) error {
	if len(g.Runs) == 0 {
		return fmt.Errorf("group %s: no runs", g.Key)
	}
	fmt.Fprintln(w, GroupHeadline(g))
	for _, r := range g.Runs {
		if r.Partial {
			fmt.Fprintf(w, "note: run %s is PARTIAL (interrupted)\n", r.ID)
		}
	}
	fmt.Fprintln(w)
	t := labelsLeft(NewTable(w, LabelColumn("metric"), RowFigureColumn("n"), RowFigureColumn("min"), RowFigureColumn("median"),
		RowFigureColumn("max"), RowFigureColumn("spread")))
	for _, row := range CompareGroups([]Group{g}).Rows {
		c, f := row.Cells[0], row.figure
		cells := []any{f.Label, c.N, NotMeasured, NotMeasured, NotMeasured, NotApplicable}
		if c.Present {
			cells = []any{f.Label, c.N, f.Format(c.Min), f.Format(c.Value), f.Format(c.Max), spread(stats{n: c.N, min: c.Min, median: c.Value, max: c.Max})}
		}
		if err := t.Append(cells...); err != nil {
			return fmt.Errorf("group table row %s: %w", f.Key, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render group table: %w", err)
	}
	return nil
}

// spread is the largest distance from the median to min or max, as a
// percentage of the median: benchstat's "±x%".
func spread(s stats) string {
	if s.median == 0 {
		if s.min == s.max {
			return "±0%"
		}
		return "-"
	}
	d := max(s.median-s.min, s.max-s.median)
	return fmt.Sprintf("±%.0f%%", 100*d/s.median)
}
