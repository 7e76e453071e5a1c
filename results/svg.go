package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units. Every chart has the same width so the
// report reads as one column; heights vary with content.
const (
	chartW      = 760.0
	chartH      = 320.0
	plotLeft    = 72.0
	plotRight   = 24.0
	plotTop     = 16.0
	plotBottom  = 44.0
	barLabelW   = 190.0
	barH        = 13.0
	barGap      = 3.0
	barRowGap   = 12.0
	barValueGap = 70.0
)

// chart is one figure of the report: either drawn elements or, when it has
// nothing to draw, an Empty text saying so.
type chart struct {
	Name  string
	Title string
	Note  string
	Empty string
	W, H  float64
	Axes  []svgLine
	Texts []svgText
	Bands []svgRect
	Marks []svgLine
	Rects []svgRect
	Lines []svgPoly
	// Offered are dotted lines of what was offered, beside the Lines of
	// what was served (an open-loop run's offered rate).
	Offered []svgPoly
	Legend  []legendItem
	// Boxes are rects that are not data (empty cells, outlines, colour
	// scales), Dots are circles: point markers of class "data" and rings.
	// Caption is text below the chart.
	Boxes   []svgBox
	Dots    []svgDot
	Caption string
	// Figures are the catalogue keys the chart shows (data-figures).
	Figures []string
	// Table holds the chart's exact values, when it has some to list.
	Table *figureTable
}

// figureTable is a small table of exact figures under a chart.
type figureTable struct {
	Header []figureHeader
	Rows   [][]string
}

// figureHeader is a column of a figure table, with the catalogue key it shows.
type figureHeader struct {
	Label, Key string
}

type svgLine struct {
	X1, Y1, X2, Y2 float64
	Class          string
}

type svgText struct {
	X, Y   float64
	Anchor string
	Class  string
	Text   string
}

type svgRect struct {
	X, Y, W, H float64
	Color      string
	Title      string
}

type svgPoly struct {
	Points string
	Color  string
	Title  string
}

type legendItem struct {
	Color string
	Label string
}

// runColor picks a run's color; the palette is built per call so nothing
// package-level can be changed by a caller.
// Beyond the eight hand-picked colours it walks the hue circle by the golden
// angle, so no two runs of a large report share a colour.
func runColor(i int) string {
	palette := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}
	if i < len(palette) {
		return palette[i]
	}
	hue := math.Mod(float64(i-len(palette))*137.508+20, 360)
	light := []int{38, 50, 30}[(i-len(palette))%3]
	return fmt.Sprintf("hsl(%.0f, 65%%, %d%%)", hue, light)
}

// scale maps a data interval onto a pixel interval, linearly or by log10.
type scale struct {
	d0, d1 float64
	r0, r1 float64
	log    bool
}

func (s scale) at(v float64) float64 {
	d0, d1 := s.d0, s.d1
	if s.log {
		v, d0, d1 = math.Log10(math.Max(v, s.d0)), math.Log10(d0), math.Log10(d1)
	}
	if d1 == d0 {
		return (s.r0 + s.r1) / 2
	}
	return s.r0 + (v-d0)/(d1-d0)*(s.r1-s.r0)
}

// tick is one labelled position on an axis.
type tick struct {
	v     float64
	label string
}

// maxTicks bounds every tick loop, so that absurd values in a hand-edited
// result file make an ugly axis, never an endless loop.
const maxTicks = 40

// clampData keeps a figure finite and within a range SVG can place, so that
// a result file with absurd values still renders.
func clampData(v float64) float64 {
	const limit = 1e15
	switch {
	case math.IsNaN(v):
		return 0
	case v > limit:
		return limit
	case v < -limit:
		return -limit
	}
	return v
}

// linearTicks returns about five round ticks from 0 to at least hi, and the
// top of the axis.
func linearTicks(hi float64, format func(float64) string) ([]tick, float64) {
	// Below a millionth the step would underflow to 0; no figure lockbench
	// plots on a linear axis is that small, so such an axis is drawn to 1.
	hi = clampData(hi)
	if hi < 1e-6 {
		hi = 1
	}
	step := niceStep(hi / 5)
	n := min(int(math.Ceil(hi/step-1e-9)), maxTicks)
	ts := make([]tick, 0, n+1)
	for k := 0; k <= n; k++ {
		ts = append(ts, tick{float64(k) * step, format(float64(k) * step)})
	}
	return ts, float64(n) * step
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// logRange widens [lo, hi] to whole decades, with lo at least 1.
func logRange(lo, hi float64) (float64, float64) {
	lo, hi = math.Max(clampData(lo), 1), math.Max(clampData(hi), 1)
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// logTicks labels 1, 2 and 5 of each decade, or only the 1s when that would
// crowd the axis.
func logTicks(lo, hi float64, format func(float64) string) []tick {
	decades := int(math.Round(math.Log10(hi / lo)))
	mults := []float64{1, 2, 5}
	if decades > 3 {
		mults = []float64{1}
	}
	var ts []tick
	for d := 0; d <= decades && len(ts) < maxTicks; d++ {
		for _, m := range mults {
			if v := lo * math.Pow(10, float64(d)) * m; v <= hi*1.0001 {
				ts = append(ts, tick{v, format(v)})
			}
		}
	}
	return ts
}

// plot is the frame of an x/y chart: its scales, axes and tick labels, in a
// chart h units high.
type plot struct {
	x, y scale
	h    float64
}

func newPlot(x, y scale) plot { return newPlotSized(x, y, chartH) }

// newPlotSized is newPlot for a chart of height h rather than chartH.
func newPlotSized(x, y scale, h float64) plot {
	x.r0, x.r1 = plotLeft, chartW-plotRight
	y.r0, y.r1 = h-plotBottom, plotTop
	return plot{x: x, y: y, h: h}
}

// frame draws the axes, grid and tick labels of p into c.
func (p plot) frame(c *chart, xt, yt []tick, xLabel, yLabel string) {
	c.W, c.H = chartW, p.h
	bottom, top := p.y.r0, p.y.r1
	left, right := p.x.r0, p.x.r1
	c.Axes = append(c.Axes, svgLine{left, bottom, right, bottom, "axis"}, svgLine{left, top, left, bottom, "axis"})
	for _, t := range xt {
		x := p.x.at(t.v)
		c.Axes = append(c.Axes, svgLine{x, top, x, bottom, "grid"})
		c.Texts = append(c.Texts, svgText{x, bottom + 16, "middle", "tick", t.label})
	}
	for _, t := range yt {
		y := p.y.at(t.v)
		c.Axes = append(c.Axes, svgLine{left, y, right, y, "grid"})
		c.Texts = append(c.Texts, svgText{left - 6, y + 4, "end", "tick", t.label})
	}
	c.Texts = append(c.Texts,
		svgText{(left + right) / 2, p.h - 6, "middle", "axis-label", xLabel},
		svgText{left, top - 4, "start", "axis-label", yLabel})
}

// points renders (x, y) data pairs as an SVG points attribute.
func (p plot) points(xs, ys []float64) string {
	var b strings.Builder
	for i := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(coord(p.x.at(xs[i])))
		b.WriteByte(',')
		b.WriteString(coord(p.y.at(ys[i])))
	}
	return b.String()
}

// coord formats a pixel position; a tenth of a unit is finer than any screen.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// barRow is one figure of a bar chart: one bar per run, scaled to the row's
// own largest value, because a chart's figures differ by orders of magnitude.
type barRow struct {
	label  string
	key    string
	values []float64
	has    []bool
	format func(float64) string
}

// barChart lays out rows of horizontal bars, one bar per run in run order.
// A run that has none of the rows' figures (a closed-loop run among open-loop
// ones, a single-instance run in a per-master chart) is left out rather than
// drawn as zeros; it keeps its colour in the others.
func barChart(name, title string, runs []*Result, rows []barRow) chart {
	in := runsWithFigures(runs, rows)
	c := chart{Name: name, Title: title, Note: "bars scaled per row", W: chartW}
	y := plotTop
	barX := rowLabelWidth(rows)
	barMax := chartW - barX - barValueGap
	for _, row := range rows {
		if row.key != "" {
			c.Figures = append(c.Figures, row.key)
		}
		top := y
		hi := 0.0
		for _, v := range row.values {
			hi = math.Max(hi, v)
		}
		for i, v := range row.values {
			if !in[i] {
				continue
			}
			c.Texts = append(c.Texts, barValue(row, i, v, barX, y, barMax, hi))
			if row.has[i] && v > 0 {
				w := math.Max(1, v/hi*barMax)
				c.Rects = append(c.Rects, svgRect{barX, y, w, barH, runColor(i), fmt.Sprintf("%s %s: %s", RunName(runs[i]), row.label, row.format(v))})
			}
			y += barH + barGap
		}
		c.Texts = append(c.Texts, svgText{barX - 8, (top+y)/2 + 2, "end", "row-label", row.label})
		c.Axes = append(c.Axes, svgLine{barX, top - 2, barX, y - barGap + 2, "axis"})
		y += barRowGap
	}
	c.H = y + plotTop
	for i, item := range runLegend(runs) {
		if in[i] {
			c.Legend = append(c.Legend, item)
		}
	}
	return c
}

// runsWithFigures says which runs have at least one of rows' figures; when
// none has any, every run is shown (as n/a) rather than an empty chart.
func runsWithFigures(runs []*Result, rows []barRow) []bool {
	in := make([]bool, len(runs))
	anyIn := false
	for i := range runs {
		for _, row := range rows {
			in[i] = in[i] || row.has[i]
		}
		anyIn = anyIn || in[i]
	}
	if !anyIn {
		for i := range in {
			in[i] = true
		}
	}
	return in
}

// rowLabelCharW is the width of a character of a bar row's label, roughly
// (11 px system-ui, with room to spare), so that no label is clipped.
const rowLabelCharW = 6.4

// rowLabelWidth is where the bars start: past the longest row label, and
// never nearer the left edge than barLabelW.
func rowLabelWidth(rows []barRow) float64 {
	w := barLabelW
	for _, row := range rows {
		w = math.Max(w, float64(len([]rune(row.label)))*rowLabelCharW+12)
	}
	return w
}

func barValue(row barRow, i int, v, barX, y, barMax, hi float64) svgText {
	text := "n/a"
	x := barX + 4
	if row.has[i] {
		text = row.format(v)
		if hi > 0 && v > 0 {
			x = barX + math.Max(1, v/hi*barMax) + 4
		}
	}
	return svgText{x, y + barH - 2, "start", "value", text}
}

func runLegend(runs []*Result) []legendItem {
	items := make([]legendItem, len(runs))
	for i, r := range runs {
		items[i] = legendItem{runColor(i), RunName(r)}
	}
	return items
}
