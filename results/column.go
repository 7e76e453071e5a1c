package results

import (
	"errors"
	"strconv"
)

// The one missing-value rule of every table. A cell is NotMeasured when its
// figure could have been measured in that row and was not (no run behind
// it, a cost per acquisition over none, a percentile of an operation never
// recorded); it is NotApplicable when the row has no such figure at all (no
// ratio for the baseline, no availability span without a fault span, the
// longest gap of a variant whose scenario does not time gaps). JSON writes
// both as null and CSV as an empty field: neither is ever a 0.
const (
	NotMeasured   = "n/a"
	NotApplicable = "-"
)

// NotMeasuredText is the cell of a figure r lacks, by the missing-value rule:
// NotMeasured for a figure per acquisition of a run that made none (err is
// ErrNoAcquisitions), NotApplicable for one the run does not have at all.
func NotMeasuredText(err error) string {
	if errors.Is(err, ErrNoAcquisitions) {
		return NotMeasured
	}
	return NotApplicable
}

// TableColumn is one column of a table: either a figure of the catalogue (its
// cells print at the figure's one precision) or a label column that names
// the row or states a verdict. Its fields are unexported so that a table
// column is always one of the two; a test walks every renderer's columns
// and fails on a figure name the catalogue lacks or an undeclared label.
type TableColumn struct {
	header string
	figure *Figure
}

// FigureColumn is a column of the figure named (a catalogue or derived
// figure, see FigureNamed) headed header, or the figure's short Header when
// header is "". A name the catalogue lacks gives a column that prints
// numbers plainly; TestEveryTableColumnIsAFigureOrALabel refuses it.
func FigureColumn(name, header string) TableColumn {
	c := TableColumn{header: header}
	if f, ok := FigureNamed(name); ok {
		c.figure = &f
		if header == "" {
			c.header = Header(f)
		}
	}
	return c
}

// ColumnOf is the column of a figure already resolved (a view's --columns,
// an operation's p99 chosen at run time).
func ColumnOf(f Figure) TableColumn { return TableColumn{header: Header(f), figure: &f} }

// Titled is c headed header instead (a narrow table's two-line heading).
func (c TableColumn) Titled(header string) TableColumn {
	c.header = header
	return c
}

// RowFigureColumn is a column of a table whose rows name the figure (compare
// and show: a row per figure; the run table: a row per operation): its
// cells print at the row's figure's precision, and header names the run,
// group or statistic (min, median, p99) the column holds.
func RowFigureColumn(header string) TableColumn { return TableColumn{header: header} }

// ParameterColumn is a column of an input the user chose (a sweep's axis,
// a capacity step's load): its cells are the values asked for, as given,
// not measurements.
func ParameterColumn(name string) TableColumn { return TableColumn{header: name} }

// LabelColumn is a column of words: what names a row (lock, variant, TTL,
// run id) or a verdict. Its header must be one of LabelHeaders.
func LabelColumn(header string) TableColumn { return TableColumn{header: header} }

// Text is v as the column's figure prints it.
func (c TableColumn) Text(v float64) string {
	if c.figure == nil {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return c.figure.Format(v)
}

// Opt is *v as the column's figure prints it, NotMeasured when v is nil.
func (c TableColumn) Opt(v *float64) string {
	if v == nil {
		return NotMeasured
	}
	return c.Text(*v)
}

// Figure is the column's figure; ok is false for a label column.
func (c TableColumn) Figure() (Figure, bool) {
	if c.figure == nil {
		return Figure{}, false
	}
	return *c.figure, true
}

// Header is the column's heading.
func (c TableColumn) Header() string { return c.header }

// headers are the columns' headings, as the table writer takes them.
func headers(cols []TableColumn) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = c.header
	}
	return out
}

// LabelHeaders are the label columns tables may have, declared once: a new
// column of words is added here, in review; a new column of numbers names
// a figure of the catalogue instead.
func LabelHeaders() []string {
	return []string{
		// what names a row
		"metric", "op", "assert", "run", "lock", "topology", "under fault", "variant",
		"candidate", "#", "experiment", "runs",
		// words: verdicts and states
		"verdict", "SLO", "status", "miti-\ngated", "why",
		// durations as planned or taken, and cells that join several counts
		"window", "wall", "est.",
		"concl./\nrun", "violated/\nconclusive",
		"served", "dropped/\nlate", "failed/\ngave up", "cpu %\ngen/srv",
	}
}

// RatioCell is the one ratio rule of every table and JSON: "same" where
// both values print alike at the figure's precision, "~" within the noise
// of repeats, NotApplicable where there is no ratio (a value missing on
// either side, or a zero baseline), else RatioText.
func RatioCell(c Cell) string {
	switch {
	case !c.Present:
		return NotApplicable
	case c.Same:
		return "same"
	case c.WithinNoise:
		return "~"
	case c.Ratio == nil:
		return NotApplicable
	}
	return RatioText(*c.Ratio)
}
