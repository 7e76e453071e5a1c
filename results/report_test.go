package results

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reportRuns are the two runs the report tests draw: different speeds, one
// with incidents and a fault, neither with errors beyond timeouts.
func reportRuns(t *testing.T) []*Result {
	a := fixture(t, "fast", fixtureOpts{servers: true, series: true})
	b := fixture(t, "slow", fixtureOpts{slow: 2, incidents: true, servers: true, series: true, concurrency: 32})
	b.Ops[OpRenew] = summaryOf(t, tailValues(800, 300, 0.5), 0)
	return []*Result{a, b}
}

// bareRuns have nothing but latencies: every other chart must say so.
func bareRuns(t *testing.T) []*Result {
	r := fixture(t, "bare", fixtureOpts{})
	r.Contention, r.Errors = Contention{}, nil
	return []*Result{r}
}

// expectedEmpty says, from the fixtures alone and independently of the
// report code, which charts have no data to draw.
func expectedEmpty(runs []*Result) map[string]bool {
	var attempts, incidents, errs int64
	var series, servers bool
	for _, r := range runs {
		attempts += r.Contention.Attempts
		incidents += r.Incidents.Total()
		errs += r.TotalErrors()
		series = series || len(r.Series) > 0
		servers = servers || r.Servers != nil
	}
	return map[string]bool{
		"throughput": !series, "acquire-p99": !series, "contention": attempts == 0,
		"incidents": incidents == 0, "errors": errs == 0, "server-cost": !servers,
	}
}

var (
	chartRe = regexp.MustCompile(`(?s)<figure class="chart" ([^>]*)>(.*?)</figure>`)
	attrRe  = regexp.MustCompile(`([\w-]+)="([^"]*)"`)
	dataRe  = regexp.MustCompile(`<(polyline|path|rect|circle)\b([^>]*\bclass="data"[^>]*)>`)
	numRe   = regexp.MustCompile(`-?\d+(\.\d+)?`)
)

func attrs(s string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe.FindAllStringSubmatch(s, -1) {
		m[a[1]] = a[2]
	}
	return m
}

// drawsData says whether an element of class "data" draws something: a
// polyline or path with at least two points, a rect of positive size or a
// circle of positive radius.
func drawsData(kind string, a map[string]string) bool {
	switch kind {
	case "circle":
		r, _ := strconv.ParseFloat(a["r"], 64)
		return r > 0
	case "polyline":
		return len(strings.Fields(a["points"])) >= 2
	case "path":
		return len(numRe.FindAllString(a["d"], -1)) >= 4
	}
	w, _ := strconv.ParseFloat(a["width"], 64)
	h, _ := strconv.ParseFloat(a["height"], 64)
	return w > 0 && h > 0
}

// checkCharts asserts that every chart in an HTML document (as written or as
// a browser's DOM) drew data, or is marked empty exactly where the fixtures
// have no data, and that the latency chart of every recorded op is there.
func checkCharts(t *testing.T, doc string, runs []*Result) {
	t.Helper()
	empty := expectedEmpty(runs)
	seen := map[string]bool{}
	for _, m := range chartRe.FindAllStringSubmatch(doc, -1) {
		a := attrs(m[1])
		name := a["data-chart"]
		seen[name] = true
		drawn := 0
		for _, d := range dataRe.FindAllStringSubmatch(m[2], -1) {
			if drawsData(d[1], attrs(d[2])) {
				drawn++
			}
		}
		switch {
		case a["data-empty"] == "true":
			if !empty[name] {
				t.Errorf("chart %s is marked empty, but the fixtures have its data", name)
			}
			if !strings.Contains(m[2], `class="empty"`) {
				t.Errorf("empty chart %s does not say why", name)
			}
		case drawn == 0:
			t.Errorf("chart %s drew no data", name)
		case empty[name]:
			t.Errorf("chart %s drew data the fixtures do not have", name)
		}
	}
	for name := range empty {
		if !seen[name] {
			t.Errorf("chart %s missing", name)
		}
	}
	for _, op := range opsPresent(runs) {
		if !seen["latency-"+op] {
			t.Errorf("latency chart of %s missing", op)
		}
	}
}

func writeReport(t *testing.T, runs []*Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteReport(&buf, runs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReportCharts(t *testing.T) {
	runs := reportRuns(t)
	html := writeReport(t, runs)
	checkCharts(t, string(html), runs)
	golden(t, "report.html", html)
	for _, banned := range []string{"<script", "src=", "href=", "http://", "https://", "@import"} {
		if bytes.Contains(html, []byte(banned)) {
			t.Errorf("report contains %q: it must work offline, self-contained", banned)
		}
	}
	bare := bareRuns(t)
	doc := string(writeReport(t, bare))
	checkCharts(t, doc, bare)
	if !strings.Contains(doc, "no incidents recorded") {
		t.Error("empty incidents chart does not say no incidents were recorded")
	}
}

func TestReportErrors(t *testing.T) {
	if err := WriteReport(&bytes.Buffer{}, nil); err == nil {
		t.Error("report of no runs succeeded")
	}
	r := fixture(t, "broken", fixtureOpts{})
	s := r.Ops[OpHold]
	s.HDR = "%%%"
	r.Ops[OpHold] = s
	if err := WriteReport(&bytes.Buffer{}, []*Result{r}); err == nil || !strings.Contains(err.Error(), "run broken op hold") {
		t.Errorf("corrupt histogram report err = %v, want it to name run and op", err)
	}
}

func chromiumPath() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// TestReportRendersInChromium opens the report in a headless browser, with no
// network and a fresh profile, and checks the DOM the browser built: every
// chart drew data, or is marked empty where the fixtures have none.
func TestReportRendersInChromium(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium not installed; apt-get install chromium")
	}
	for name, runs := range map[string][]*Result{"two runs": reportRuns(t), "bare run": bareRuns(t)} {
		t.Run(name, func(t *testing.T) {
			checkCharts(t, chromiumDOM(t, bin, writeReport(t, runs)), runs)
		})
	}
}

// chromiumDOM opens html in headless chromium, with no network and a fresh
// profile, and returns the DOM the browser built.
func chromiumDOM(t *testing.T, bin string, html []byte) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if !bytes.Contains(dom, []byte(`class="chart"`)) {
		t.Fatalf("dumped DOM has no charts:\n%.2000s\nstderr:\n%s", dom, stderr.String())
	}
	return string(dom)
}

// TestReportSurvivesAbsurdValues feeds the chart code values a hand-edited
// file could hold: subnormal, huge, negative, zero-length seconds.
func TestReportSurvivesAbsurdValues(t *testing.T) {
	r := fixture(t, "absurd", fixtureOpts{series: true, servers: true, incidents: true})
	r.Series = []SeriesPoint{
		{ElapsedS: 5e-324, Acquired: 1, P99US: 5e-324},
		{ElapsedS: 1, Acquired: -5, P99US: -1},
		{ElapsedS: 1, Acquired: 3},
		{ElapsedS: 1e300, Acquired: 1 << 62, P99US: 1e308},
	}
	r.Faults = []FaultEvent{{Spec: "x", AtS: -1e308, EndS: 1e308}}
	huge := 1e308
	r.Servers.CPUUSPerAcquire = &huge
	r.Contention.Rate = 5e-324
	for _, hi := range []float64{5e-324, -1, 0, 1e308} {
		if ts, top := linearTicks(hi, FormatUS); len(ts) == 0 || !(top > 0) {
			t.Errorf("linearTicks(%g) = %v, %g", hi, ts, top)
		}
	}
	checkCharts(t, string(writeReport(t, []*Result{r})), []*Result{r})
}

func TestReportUsesLabelsAndShowsChecks(t *testing.T) {
	runs := reportRuns(t)
	runs[0].Label, runs[1].Label = "baseline on one master", "redlock on five"
	a, err := ParseAssertion("acquire.p99<1us")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteReportWith(&buf, runs, ReportExtras{Checks: CheckAll([]Assertion{a}, runs[:1])}); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, want := range []string{"<title>lockbench report: baseline on one master, redlock on five", "</svg> baseline on one master</li>",
		`data-chart="checks"`, "acquire.p99&lt;1us", "FAIL"} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Every chart's legend (percentile curves, series) names a labelled run
	// by its label, never by its id.
	for _, r := range runs {
		if legend := "</svg> " + r.ID + "</li>"; strings.Contains(doc, legend) {
			t.Errorf("a legend names run %s by its id, not its label %q", r.ID, r.Label)
		}
	}
}

func TestRunColorsStayDistinct(t *testing.T) {
	seen := map[string]int{}
	for i := range 40 {
		c := runColor(i)
		if j, dup := seen[c]; dup {
			t.Fatalf("runs %d and %d share colour %s", j, i, c)
		}
		seen[c] = i
	}
}

// TestFaultMarkSaysWhatWasAtStake: a fault's label in the charts says how
// many holders were inside and leases valid when it fired; one that fired
// with none says 0, so a chart of a trial that could not have failed shows it.
func TestFaultMarkSaysWhatWasAtStake(t *testing.T) {
	r := &Result{ID: "r", DurationS: 3, Series: []SeriesPoint{{ElapsedS: 1, Acquired: 5}, {ElapsedS: 2, Acquired: 4}, {ElapsedS: 3, Acquired: 6}},
		Faults: []FaultEvent{{Spec: "at=1s kill primary", AtS: 1, Exposure: &FaultExposure{Inside: 0, ValidLeases: 2}}}}
	c := throughputChart([]*Result{r})
	var labels []string
	for _, tx := range c.Texts {
		if tx.Class == "fault-label" {
			labels = append(labels, tx.Text)
		}
	}
	if len(labels) != 1 || labels[0] != "at=1s kill primary (0 inside, 2 valid leases)" {
		t.Errorf("fault labels %q", labels)
	}
}
