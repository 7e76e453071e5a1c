package results

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// extrasFixture is a capacity search of one topology, knee at 16 workers,
// saturated at 32 and breaking the SLO beyond, and a TTL × renewal sweep
// whose incident rates span five decades, with one cell not measured.
func extrasFixture() ReportExtras {
	loads := []float64{1, 2, 4, 8, 16, 32, 64, 128}
	thr := []float64{1150, 2240, 4310, 7900, 11800, 13100, 12700, 11900}
	p99 := []float64{310, 330, 380, 520, 900, 2400, 9800, 41000}
	var pts []CurvePoint
	for i := range loads {
		pts = append(pts, CurvePoint{Load: loads[i], Throughput: thr[i], P99US: p99[i], MetSLO: p99[i] <= 5000, RunID: "cap-" + strconv.Itoa(i)})
	}
	nan := math.NaN()
	return ReportExtras{
		Curves: []Curve{{Label: "single", LoadName: "concurrency", Points: pts, Knee: 4, Saturation: 5}},
		HeatMaps: []HeatMap{{
			Title: "Incidents per million acquisitions: TTL × renewal interval", XLabel: "renewal", YLabel: "TTL",
			X: []string{"ttl/4", "ttl/3", "ttl/2", "2ttl/3"},
			Y: []string{"1s", "2s", "5s", "10s"},
			Value: [][]float64{
				{12, 40, 900, 12000},
				{0, 3, 150, 4100},
				{0, 0, 9, 600},
				{0, 0, nan, 35},
			},
			Text: [][]string{
				{"12", "40", "900", "12k"},
				{"0", "3", "150", "4.1k"},
				{"0", "0", "9", "600"},
				{"0", "0", "n/a", "35"},
			},
			Best:   [2]int{2, 0},
			Legend: "Fewest incidents per million acquisitions is best; the outlined cell also has the fewest renewals.",
		}},
	}
}

func writeReportWith(t testing.TB, runs []*Result, e ReportExtras) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteReportWith(&buf, runs, e); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chartData counts, for every chart of a document, the elements of class
// "data" that draw something, and notes the charts marked empty.
func chartData(doc string) (drawn map[string]int, empty map[string]bool) {
	drawn, empty = map[string]int{}, map[string]bool{}
	for _, m := range chartRe.FindAllStringSubmatch(doc, -1) {
		a := attrs(m[1])
		name := a["data-chart"]
		empty[name] = a["data-empty"] == "true"
		drawn[name] += 0
		for _, d := range dataRe.FindAllStringSubmatch(m[2], -1) {
			if drawsData(d[1], attrs(d[2])) {
				drawn[name]++
			}
		}
	}
	return drawn, empty
}

// checkExtrasDrawn asserts that the capacity and heat map charts each drew
// at least two data elements.
func checkExtrasDrawn(t *testing.T, doc string) {
	t.Helper()
	drawn, empty := chartData(doc)
	for _, name := range []string{"capacity", "capacity-load", "heatmap"} {
		n, ok := drawn[name]
		switch {
		case !ok:
			t.Errorf("chart %s missing", name)
		case empty[name]:
			t.Errorf("chart %s is marked empty", name)
		case n < 2:
			t.Errorf("chart %s drew %d data elements, want at least 2", name, n)
		}
	}
}

var (
	geomAttrRe = regexp.MustCompile(`\s(x|y|x1|y1|x2|y2|cx|cy|r|width|height|viewBox|points)="([^"]*)"`)
	svgRe      = regexp.MustCompile(`(?s)<svg\b.*?</svg>`)
)

// checkFiniteSVG asserts that no SVG of doc says NaN or Inf anywhere and
// that every geometry attribute is made of finite numbers.
func checkFiniteSVG(t *testing.T, doc string) {
	t.Helper()
	for _, svg := range svgRe.FindAllString(doc, -1) {
		for _, bad := range []string{"NaN", "Inf"} {
			if i := strings.Index(svg, bad); i >= 0 {
				t.Errorf("SVG contains %q: …%s…", bad, svg[max(0, i-200):min(len(svg), i+100)])
			}
		}
		for _, m := range geomAttrRe.FindAllStringSubmatch(svg, -1) {
			for _, f := range strings.FieldsFunc(m[2], func(r rune) bool { return r == ' ' || r == ',' }) {
				if v, err := strconv.ParseFloat(f, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("attribute %s=%q is not finite numbers", m[1], m[2])
					break
				}
			}
		}
	}
}

func TestReportExtras(t *testing.T) {
	e := extrasFixture()
	html := writeReportWith(t, nil, e)
	doc := string(html)
	golden(t, "report-extras.html", html)
	checkExtrasDrawn(t, doc)
	checkFiniteSVG(t, doc)
	for _, banned := range []string{"<script", "src=", "href=", "http://", "https://", "@import"} {
		if strings.Contains(doc, banned) {
			t.Errorf("report contains %q: it must work offline, self-contained", banned)
		}
	}
	for _, want := range []string{
		`class="notice"`,                     // says there are no runs
		`class="knee"`, `class="saturation"`, // rings
		`>knee</text>`, `>saturation</text>`,
		`class="best"`,      // outlined best cell
		`class="nodata"`,    // the unmeasured cell
		`>log scale</text>`, // five decades of incidents
		e.HeatMaps[0].Legend,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("extras report lacks %q", want)
		}
	}
	if strings.Contains(doc, `class="runs"`) || strings.Contains(doc, `class="config"`) {
		t.Error("report of no runs has a run or config table")
	}
	// Two load levels broke the SLO: their markers are hollow, in both charts.
	if n := strings.Count(doc, `fill="#fff" stroke="#d00"`); n != 4 {
		t.Errorf("%d hollow red markers, want 2 per chart", n)
	}
	// Cells drawn as data: all 16 but the one with no data.
	if drawn, _ := chartData(doc); drawn["heatmap"] != 15 {
		t.Errorf("heat map drew %d cells, want 15", drawn["heatmap"])
	}
}

// TestReportExtrasWithRuns puts the extras above the per-run charts, and
// leaves those as they were.
func TestReportExtrasWithRuns(t *testing.T) {
	runs := reportRuns(t)
	doc := string(writeReportWith(t, runs, extrasFixture()))
	checkCharts(t, doc, runs)
	checkExtrasDrawn(t, doc)
	first := strings.Index(doc, `data-chart="latency-`)
	for _, name := range []string{"capacity", "capacity-load", "heatmap"} {
		if i := strings.Index(doc, `data-chart="`+name+`"`); i < 0 || i > first {
			t.Errorf("chart %s is not above the per-run charts", name)
		}
	}
	if !strings.Contains(doc, `class="runs"`) || strings.Contains(doc, `class="notice"`) {
		t.Error("report with runs lost its run table or says it has none")
	}
	// WriteReport is WriteReportWith without extras.
	if a, b := writeReport(t, runs), writeReportWith(t, runs, ReportExtras{}); !bytes.Equal(a, b) {
		t.Error("WriteReport and WriteReportWith with no extras differ")
	}
}

func TestReportExtrasEmpty(t *testing.T) {
	if err := WriteReportWith(&bytes.Buffer{}, nil, ReportExtras{}); err == nil {
		t.Error("report of no runs and no extras succeeded")
	}
	nan := math.NaN()
	e := ReportExtras{
		Curves:   []Curve{{Label: "nothing", Knee: -1, Saturation: -1}, {Points: []CurvePoint{{Load: nan, Throughput: nan, P99US: nan}}, Knee: 7, Saturation: -3}},
		HeatMaps: []HeatMap{{Title: "no cells"}, {Title: "no values", X: []string{"a"}, Y: []string{"b"}, Value: [][]float64{{nan}}}},
	}
	doc := string(writeReportWith(t, nil, e))
	_, empty := chartData(doc)
	for _, name := range []string{"capacity", "capacity-load", "heatmap", "heatmap-2"} {
		if !empty[name] {
			t.Errorf("chart %s with nothing to draw is not marked empty", name)
		}
	}
	if strings.Count(doc, `<p class="empty">`) != 4 {
		t.Error("empty extras charts do not say why")
	}
	checkFiniteSVG(t, doc)
}

// absurdExtras holds what a hand-edited or buggy capacity search could give.
func absurdExtras(vs []float64, i, j int) ReportExtras {
	var pts []CurvePoint
	for k := range vs {
		pts = append(pts, CurvePoint{Load: vs[k], Throughput: vs[(k+1)%len(vs)], P99US: vs[(k+2)%len(vs)], MetSLO: k%2 == 0})
	}
	row := append([]float64(nil), vs...)
	return ReportExtras{
		Curves: []Curve{
			{Label: "absurd", Points: pts, Knee: i, Saturation: j},
			{Points: pts[:min(len(pts), 1)], Knee: j, Saturation: i},
		},
		HeatMaps: []HeatMap{
			{X: []string{"a", "b"}, Y: []string{"c"}, Value: [][]float64{row, row[:len(row)/2], nil}, Text: [][]string{{"x"}}, Best: [2]int{i, j}},
			{Value: [][]float64{{vs[0]}}, Best: [2]int{-1, -1}},
		},
	}
}

func TestReportExtrasSurviveAbsurdValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, vs := range [][]float64{
		{nan, inf, -inf, 0, -1, 5e-324, 1e308, -1e308, 1},
		{0, 0, 0},
		{inf, inf},
		{-inf},
		{nan},
		{1e-300, 1e300, 3},
		{-5, -1, -0.5},
		{2, 2, 2, 2},
	} {
		for _, ij := range [][2]int{{-1, -1}, {0, 0}, {1, 2}, {1 << 40, -1 << 40}} {
			e := absurdExtras(vs, ij[0], ij[1])
			for _, runs := range [][]*Result{nil, bareRuns(t)} {
				doc := string(writeReportWith(t, runs, e))
				checkFiniteSVG(t, doc)
			}
		}
	}
}

func FuzzReportExtras(f *testing.F) {
	f.Add(1.0, 2.0, 300.0, 0.0, 0, 1)
	f.Add(math.NaN(), math.Inf(1), math.Inf(-1), -1.0, -1, -1)
	f.Add(5e-324, 1e308, -1e308, 0.5, 3, 1<<30)
	f.Fuzz(func(t *testing.T, a, b, c, d float64, i, j int) {
		var buf bytes.Buffer
		if err := WriteReportWith(&buf, nil, absurdExtras([]float64{a, b, c, d}, i, j)); err != nil {
			t.Fatal(err)
		}
		checkFiniteSVG(t, buf.String())
	})
}

// TestReportExtrasRenderInChromium checks, in the DOM a headless browser
// built, that the capacity and heat map charts drew their data.
func TestReportExtrasRenderInChromium(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium not installed; apt-get install chromium")
	}
	t.Run("extras only", func(t *testing.T) {
		checkExtrasDrawn(t, chromiumDOM(t, bin, writeReportWith(t, nil, extrasFixture())))
	})
	t.Run("with runs", func(t *testing.T) {
		runs := reportRuns(t)
		dom := chromiumDOM(t, bin, writeReportWith(t, runs, extrasFixture()))
		checkExtrasDrawn(t, dom)
		checkCharts(t, dom, runs)
	})
}
