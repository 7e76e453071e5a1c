package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CurvePoint is one load level of a capacity search.
type CurvePoint struct {
	Load       float64 // the offered load: workers, a rate, …, named by Curve.LoadName
	Throughput float64 // acquisitions/s achieved
	P99US      float64 // acquire p99 in µs; 0 (or less) when nothing was acquired
	MetSLO     bool
	RunID      string
}

// Curve is one topology's capacity ramp.
type Curve struct {
	Label    string
	LoadName string
	Points   []CurvePoint
	// Saturation and Knee index Points, or are -1 when not found. Note that
	// the zero value, 0, means the first point.
	Saturation, Knee int
}

// HeatMap is a grid of cells coloured by a value, e.g. TTL × renewal interval.
type HeatMap struct {
	Title, XLabel, YLabel string
	X, Y                  []string
	Value                 [][]float64 // [y][x], NaN = no data
	Text                  [][]string  // label in each cell; a missing label shows the value
	Best                  [2]int      // {y,x} or {-1,-1}
	Legend                string
}

// ReportExtras are optional report sections drawn from data other than the
// runs themselves: capacity searches and parameter sweeps.
type ReportExtras struct {
	Curves   []Curve
	HeatMaps []HeatMap
	// Checks are the --assert and --slo verdicts, shown as pass or fail
	// under the runs.
	Checks []Check
}

func (e ReportExtras) empty() bool { return len(e.Curves) == 0 && len(e.HeatMaps) == 0 }

// Layout of the extras, in SVG user units.
const (
	capLoadH      = 220.0 // the small throughput-by-load chart
	markerR       = 3.5
	kneeR         = 8.0
	saturationR   = 11.5
	brokenStroke  = "#d00"
	heatCellH     = 28.0
	heatTop       = 26.0
	heatRight     = 16.0
	heatCharW     = 6.2 // width of a character of cell and tick text, roughly
	heatScaleW    = 240.0
	heatScaleStep = 24
)

// addExtras puts the extras' sections above the per-run charts and, for a
// page without runs, names the page after the extras and says why it has no
// run table.
func addExtras(page *reportPage, runs []*Result, e ReportExtras) {
	if e.empty() {
		return
	}
	page.Extras = true
	var secs []section
	if len(e.Curves) > 0 {
		secs = append(secs, section{"Capacity", []chart{capacityChart(e.Curves), capacityLoadChart(e.Curves)}})
	}
	if len(e.HeatMaps) > 0 {
		var cs []chart
		for i, h := range e.HeatMaps {
			cs = append(cs, heatMapChart(i, h))
		}
		secs = append(secs, section{"Heat maps", cs})
	}
	page.Sections = append(secs, page.Sections...)
	// The search or sweep names the page, not the runs it made.
	page.Title = "lockbench report: " + extrasTitle(e)
	if len(runs) == 0 {
		page.Notice = "No individual runs were given: this report holds only the sections below, drawn from capacity searches and sweeps."
	}
}

func extrasTitle(e ReportExtras) string {
	var parts []string
	if len(e.Curves) > 0 {
		var labels []string
		for i, c := range e.Curves {
			labels = append(labels, curveLabel(i, c))
		}
		parts = append(parts, "capacity of "+strings.Join(labels, ", "))
	}
	for i, h := range e.HeatMaps {
		parts = append(parts, heatTitle(i, h))
	}
	return strings.Join(parts, "; ")
}

func curveLabel(i int, c Curve) string {
	if c.Label != "" {
		return c.Label
	}
	return fmt.Sprintf("curve %d", i+1)
}

func loadName(c Curve) string {
	if c.LoadName != "" {
		return c.LoadName
	}
	return "load"
}

func heatTitle(i int, h HeatMap) string {
	if h.Title != "" {
		return h.Title
	}
	return fmt.Sprintf("heat map %d", i+1)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// compact formats a figure of unknown unit in few characters, and never as
// NaN or Inf, which could otherwise leak into the page.
func compact(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == math.Trunc(v) && math.Abs(v) < 1e6:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// curvePt is a point of a curve that can be placed on a chart: its data
// coordinates, already finite and clamped, and its index in Curve.Points.
type curvePt struct {
	x, y float64
	i    int
	p    CurvePoint
}

// curvePoints keeps the points of c that place gives coordinates for.
func curvePoints(c Curve, place func(p CurvePoint) (x, y float64, ok bool)) []curvePt {
	var out []curvePt
	for i, p := range c.Points {
		if x, y, ok := place(p); ok {
			out = append(out, curvePt{clampData(x), clampData(y), i, p})
		}
	}
	return out
}

// drawCurves draws every curve's points on p: a line through them in order,
// a marker at each (hollow red where the SLO broke) labelled by load, and
// rings at the knee and the saturation point.
func drawCurves(c *chart, p plot, curves []Curve, pts [][]curvePt, labelPoints bool) {
	for ci, cv := range curves {
		ps := pts[ci]
		if len(ps) == 0 {
			continue
		}
		color, name := runColor(ci), curveLabel(ci, cv)
		if len(ps) >= 2 {
			xs, ys := make([]float64, len(ps)), make([]float64, len(ps))
			for k, pt := range ps {
				xs[k], ys[k] = pt.x, pt.y
			}
			c.Lines = append(c.Lines, svgPoly{p.points(xs, ys), color, name})
		}
		for _, pt := range ps {
			x, y := p.x.at(pt.x), p.y.at(pt.y)
			fill, stroke, slo := color, color, "SLO met"
			if !pt.p.MetSLO {
				fill, stroke, slo = "#fff", brokenStroke, "SLO broken"
			}
			title := fmt.Sprintf("%s, %s %s: %s acquisitions/s, acquire p99 %s, %s", name, loadName(cv), compact(pt.p.Load),
				compact(math.Round(pt.p.Throughput)), p99Text(pt.p.P99US), slo)
			if pt.p.RunID != "" {
				title += "; run " + pt.p.RunID
			}
			c.Dots = append(c.Dots, svgDot{x, y, markerR, "data", fill, stroke, title})
			if labelPoints {
				// clear of the rings, the saturation ring being the larger
				d := 5.0
				if pt.i == cv.Saturation {
					d = saturationR * 0.75
				} else if pt.i == cv.Knee {
					d = kneeR * 0.75
				}
				c.Texts = append(c.Texts, svgText{x + d, y - d, "start", "point-label", compact(pt.p.Load)})
			}
		}
		for _, m := range []struct {
			at     int
			class  string
			r, dy  float64
			inLine string
		}{{cv.Knee, "knee", kneeR, 18, "knee"}, {cv.Saturation, "saturation", saturationR, -14, "saturation"}} {
			for _, pt := range ps {
				if pt.i != m.at {
					continue
				}
				x, y := p.x.at(pt.x), p.y.at(pt.y)
				c.Dots = append(c.Dots, svgDot{x, y, m.r, m.class, "none", "#222",
					fmt.Sprintf("%s: %s at %s %s", name, m.inLine, loadName(cv), compact(pt.p.Load))})
				tx, anchor := x+m.r+2, "start"
				if tx > chartW-90 {
					tx, anchor = x-m.r-2, "end"
				}
				c.Texts = append(c.Texts, svgText{tx, y + m.dy, anchor, "mark-label", m.inLine})
			}
		}
		c.Legend = append(c.Legend, legendItem{color, name})
	}
}

func p99Text(us float64) string {
	if !finite(us) || us <= 0 {
		return "n/a"
	}
	return FormatUS(clampData(us))
}

func loadNames(curves []Curve) string {
	seen := map[string]bool{}
	var names []string
	for _, c := range curves {
		if n := loadName(c); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// capacityChart plots each curve's acquire p99 against its throughput, load
// level by load level: the curve climbs slowly, bends at the knee and turns
// up (or back) at saturation.
func capacityChart(curves []Curve) chart {
	c := chart{Name: "capacity", Title: "Capacity: acquire p99 against acquisitions/s",
		Note: fmt.Sprintf("x: acquisitions/s; y: acquire p99 (log scale); points labelled by %s; hollow red: broke the SLO; rings mark the knee and saturation", loadNames(curves))}
	pts := make([][]curvePt, len(curves))
	lo, hi, xmax := math.Inf(1), 0.0, 0.0
	for i, cv := range curves {
		pts[i] = curvePoints(cv, func(p CurvePoint) (float64, float64, bool) {
			return p.Throughput, p.P99US, finite(p.Throughput) && p.Throughput >= 0 && finite(p.P99US) && p.P99US > 0
		})
		for _, pt := range pts[i] {
			lo, hi, xmax = math.Min(lo, pt.y), math.Max(hi, pt.y), math.Max(xmax, pt.x)
		}
	}
	if math.IsInf(lo, 1) {
		c.Empty = "no load level has both a throughput and an acquire p99"
		return c
	}
	xt, xtop := linearTicks(xmax, compact)
	ylo, yhi := logRange(lo, hi)
	p := newPlot(scale{d0: 0, d1: xtop}, scale{d0: ylo, d1: yhi, log: true})
	p.frame(&c, xt, logTicks(ylo, yhi, FormatUS), "acquisitions/s", "acquire p99")
	drawCurves(&c, p, curves, pts, true)
	return c
}

// capacityLoadChart plots each curve's throughput against its load on a
// log2 axis: where the line flattens, more load buys nothing.
func capacityLoadChart(curves []Curve) chart {
	names := loadNames(curves)
	c := chart{Name: "capacity-load", Title: "Acquisitions/s by " + names,
		Note: "x: " + names + " (log2 scale); y: acquisitions/s; hollow red: broke the SLO"}
	const loLoad, hiLoad = 1e-9, 1e15
	pts := make([][]curvePt, len(curves))
	lmin, lmax, ymax := math.Inf(1), 0.0, 0.0
	for i, cv := range curves {
		pts[i] = curvePoints(cv, func(p CurvePoint) (float64, float64, bool) {
			return math.Min(math.Max(p.Load, loLoad), hiLoad), p.Throughput,
				finite(p.Load) && p.Load > 0 && finite(p.Throughput) && p.Throughput >= 0
		})
		for _, pt := range pts[i] {
			lmin, lmax, ymax = math.Min(lmin, pt.x), math.Max(lmax, pt.x), math.Max(ymax, pt.y)
		}
	}
	if math.IsInf(lmin, 1) {
		c.Empty = "no load level has a positive load and a throughput"
		return c
	}
	e0, e1 := math.Floor(math.Log2(lmin)), math.Ceil(math.Log2(lmax))
	if e1 <= e0 {
		e0, e1 = e0-1, e1+1
	}
	var xt []tick
	stride := math.Max(1, math.Ceil((e1-e0)/12))
	for e := e0; e <= e1 && len(xt) < maxTicks; e += stride {
		xt = append(xt, tick{math.Pow(2, e), compact(math.Pow(2, e))})
	}
	yt, ytop := linearTicks(ymax, compact)
	p := newPlotSized(scale{d0: math.Pow(2, e0), d1: math.Pow(2, e1), log: true}, scale{d0: 0, d1: ytop}, capLoadH)
	p.frame(&c, xt, yt, names, "acquisitions/s")
	drawCurves(&c, p, curves, pts, false)
	return c
}

// heatScale maps a heat map's values onto [0, 1], 0 best: linearly, or by
// log10 when the positive values span more than two decades, in which case
// zero and below take the best colour and the smallest positive value sits
// a little above it so that the two stay apart.
type heatScale struct {
	lo, hi float64
	log    bool
	zero   bool // a log scale's data hold values ≤ 0
}

const heatLogFloor = 0.1

func newHeatScale(vals []float64) (heatScale, bool) {
	s := heatScale{lo: math.Inf(1), hi: math.Inf(-1)}
	minPos, maxPos := math.Inf(1), 0.0
	for _, v := range vals {
		if !finite(v) {
			continue
		}
		v = clampData(v)
		s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
		if v > 0 {
			minPos, maxPos = math.Min(minPos, v), math.Max(maxPos, v)
		}
	}
	if math.IsInf(s.lo, 1) {
		return s, false
	}
	if maxPos > 0 && maxPos/minPos > 100 {
		s = heatScale{lo: minPos, hi: maxPos, log: true, zero: s.lo <= 0}
	}
	return s, true
}

func (s heatScale) t(v float64) float64 {
	var t float64
	switch {
	case math.IsNaN(v), math.IsInf(v, -1):
		return 0
	case math.IsInf(v, 1):
		return 1
	case s.log && v <= 0:
		return 0
	case s.log:
		t = heatLogFloor + (1-heatLogFloor)*(math.Log10(clampData(v))-math.Log10(s.lo))/(math.Log10(s.hi)-math.Log10(s.lo))
	case s.hi > s.lo:
		t = (clampData(v) - s.lo) / (s.hi - s.lo)
	}
	if !(t > 0) {
		return 0
	}
	return math.Min(t, 1)
}

// heatColor is a green (good) – yellow – red (bad) ramp.
func heatColor(t float64) (string, bool) {
	stops := [][3]float64{{26, 150, 65}, {166, 217, 106}, {255, 255, 191}, {253, 174, 97}, {215, 25, 28}}
	if !(t > 0) {
		t = 0
	}
	t = math.Min(t, 1) * float64(len(stops)-1)
	k := min(int(t), len(stops)-2)
	f := t - float64(k)
	var rgb [3]float64
	for i := range rgb {
		rgb[i] = stops[k][i] + f*(stops[k+1][i]-stops[k][i])
	}
	dark := (0.299*rgb[0]+0.587*rgb[1]+0.114*rgb[2])/255 < 0.55
	return fmt.Sprintf("#%02x%02x%02x", int(math.Round(rgb[0])), int(math.Round(rgb[1])), int(math.Round(rgb[2]))), dark
}

// heatMapChart draws h as a grid of coloured cells, row Y[0] on top, with
// each cell's label, the best cell outlined and a colour scale below.
func heatMapChart(n int, h HeatMap) chart {
	name := "heatmap"
	if n > 0 {
		name = fmt.Sprintf("heatmap-%d", n+1)
	}
	xl, yl := h.XLabel, h.YLabel
	if xl == "" {
		xl = "x"
	}
	if yl == "" {
		yl = "y"
	}
	c := chart{Name: name, Title: heatTitle(n, h), Caption: h.Legend}
	ny, nx := max(len(h.Y), len(h.Value)), len(h.X)
	for _, row := range h.Value {
		nx = max(nx, len(row))
	}
	if nx == 0 || ny == 0 {
		c.Empty = "the heat map has no cells"
		return c
	}
	value := func(y, x int) float64 {
		if y < len(h.Value) && x < len(h.Value[y]) {
			return h.Value[y][x]
		}
		return math.NaN()
	}
	labelOf := func(ls []string, i int) string {
		if i < len(ls) {
			return ls[i]
		}
		return ""
	}
	text := func(y, x int) string {
		if y < len(h.Text) && x < len(h.Text[y]) {
			return h.Text[y][x]
		}
		if v := value(y, x); !math.IsNaN(v) {
			return compact(v)
		}
		return ""
	}
	var vals []float64
	for y := 0; y < ny; y++ {
		for x := 0; x < nx; x++ {
			vals = append(vals, value(y, x))
		}
	}
	sc, ok := newHeatScale(vals)
	if !ok {
		for _, v := range vals {
			ok = ok || math.IsInf(v, 0)
		}
	}
	if !ok {
		c.Empty = "no cell of the heat map has a value"
		return c
	}
	kind := "linear"
	if sc.log {
		kind = "log"
	}
	c.Note = fmt.Sprintf("rows: %s; columns: %s; colour: %s scale, green low (good) to red high (bad); grey: no data; outlined: best", yl, xl, kind)

	labelW := 0
	for _, l := range h.Y {
		labelW = max(labelW, utf8.RuneCountInString(l))
	}
	left := math.Min(math.Max(float64(labelW)*heatCharW+16, 40), 220)
	cellW := (chartW - left - heatRight) / float64(nx)
	cellH := heatCellH
	if ny > 20 {
		cellH = math.Max(560/float64(ny), 4)
	}
	bottom := heatTop + float64(ny)*cellH
	gap := math.Min(1, cellW/4)
	for y := 0; y < ny; y++ {
		top := heatTop + float64(y)*cellH
		if cellH >= 9 || y%int(math.Ceil(9/cellH)) == 0 {
			c.Texts = append(c.Texts, svgText{left - 6, top + cellH/2 + 4, "end", "tick", labelOf(h.Y, y)})
		}
		for x := 0; x < nx; x++ {
			cx := left + float64(x)*cellW
			v, label := value(y, x), text(y, x)
			where := fmt.Sprintf("%s %s, %s %s", yl, labelOf(h.Y, y), xl, labelOf(h.X, x))
			class := "cell"
			if math.IsNaN(v) {
				c.Boxes = append(c.Boxes, svgBox{cx, top, cellW - gap, cellH - gap, "nodata", "#f2f2f2", "#ddd", where + ": no data"})
			} else {
				color, dark := heatColor(sc.t(v))
				title := where + ": " + compact(v)
				if label != "" && label != compact(v) {
					title += " (" + label + ")"
				}
				c.Rects = append(c.Rects, svgRect{cx, top, cellW - gap, cellH - gap, color, title})
				if dark {
					class = "cell light"
				}
			}
			if label != "" && float64(utf8.RuneCountInString(label))*heatCharW <= cellW-2 && cellH >= 11 {
				c.Texts = append(c.Texts, svgText{cx + cellW/2, top + cellH/2 + 3.5, "middle", class, label})
			}
		}
	}

	// Column labels, thinned out where they would overlap.
	xw := 0
	for _, l := range h.X {
		xw = max(xw, utf8.RuneCountInString(l))
	}
	every := max(1, int(math.Ceil((float64(xw)*heatCharW+4)/cellW)))
	for x := 0; x < nx; x += every {
		c.Texts = append(c.Texts, svgText{left + (float64(x)+0.5)*cellW, bottom + 14, "middle", "tick", labelOf(h.X, x)})
	}
	c.Texts = append(c.Texts,
		svgText{left + (chartW-left-heatRight)/2, bottom + 32, "middle", "axis-label", xl},
		svgText{4, heatTop - 8, "start", "axis-label", yl + " ↓  " + xl + " →"})

	if by, bx := h.Best[0], h.Best[1]; by >= 0 && by < ny && bx >= 0 && bx < nx {
		c.Boxes = append(c.Boxes, svgBox{left + float64(bx)*cellW, heatTop + float64(by)*cellH, cellW - gap, cellH - gap, "best", "none", "#000",
			fmt.Sprintf("best: %s %s, %s %s", yl, labelOf(h.Y, by), xl, labelOf(h.X, bx))})
	}

	// The colour scale: a strip from the lowest (best) to the highest value.
	sy := bottom + 44
	step := heatScaleW / heatScaleStep
	for k := 0; k < heatScaleStep; k++ {
		color, _ := heatColor((float64(k) + 0.5) / heatScaleStep)
		c.Boxes = append(c.Boxes, svgBox{left + float64(k)*step, sy, step, 10, "scale", color, "none", ""})
	}
	loText, hiText := compact(sc.lo), compact(sc.hi)
	if sc.zero {
		loText = "0"
	}
	if math.IsInf(sc.lo, 0) {
		loText, hiText = "-∞", "∞"
	}
	c.Texts = append(c.Texts,
		svgText{left, sy + 24, "start", "tick", "low (good): " + loText},
		svgText{left + heatScaleW, sy + 24, "end", "tick", "high (bad): " + hiText},
		svgText{left + heatScaleW + 10, sy + 9, "start", "tick", kind + " scale"})
	c.W, c.H = chartW, sy+34
	return c
}

// svgBox is a rect that is not data: an empty cell, an outline, a swatch.
type svgBox struct {
	X, Y, W, H          float64
	Class, Fill, Stroke string
	Title               string
}

// svgDot is a circle: a point marker (class "data") or a ring around one.
type svgDot struct {
	X, Y, R             float64
	Class, Fill, Stroke string
	Title               string
}
