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

func TestRunNamesTellRunsApart(t *testing.T) {
	run := func(id, label, topo, lock string, conc int) *Result {
		return &Result{ID: id, Label: label, Topology: Topology{Spec: topo}, Lock: LockInfo{Name: lock},
			Config: map[string]any{"concurrency": conc, "id": id, "seed": 1}}
	}
	cases := []struct {
		name string
		runs []*Result
		want []string
	}{
		{"distinct labels stay as they are",
			[]*Result{run("20250101-000000-aaaaaa", "a", "single", "single", 8), run("20250101-000001-bbbbbb", "b", "single", "single", 8)},
			[]string{"a", "b"}},
		{"no labels: ids",
			[]*Result{run("20250101-000000-aaaaaa", "", "single", "single", 8), run("20250101-000001-bbbbbb", "", "single", "single", 8)},
			[]string{"20250101-000000-aaaaaa", "20250101-000001-bbbbbb"}},
		{"one label over two topologies: the topology alone",
			[]*Result{run("20250101-000000-aaaaaa", "sbs", "single", "single", 8), run("20250101-000001-bbbbbb", "sbs", "redlock:3", "redlock", 8)},
			[]string{"sbs (single)", "sbs (redlock:3)"}},
		{"one label over two locks on one topology",
			[]*Result{run("20250101-000000-aaaaaa", "x", "single", "single", 8), run("20250101-000001-bbbbbb", "x", "single", "fenced", 8)},
			[]string{"x (lock single)", "x (lock fenced)"}},
		{"one label over a configuration field",
			[]*Result{run("20250101-000000-aaaaaa", "x", "single", "single", 8), run("20250101-000001-bbbbbb", "x", "single", "single", 32)},
			[]string{"x (concurrency=8)", "x (concurrency=32)"}},
		{"repeats: the end of the id, per-repeat fields ignored",
			[]*Result{run("20250101-000000-aaaaaa", "x", "single", "single", 8), run("20250101-000001-bbbbbb", "x", "single", "single", 8)},
			[]string{"x (aaaaaa)", "x (bbbbbb)"}},
		{"two alike among one that differs",
			[]*Result{run("20250101-000000-aaaaaa", "x", "single", "single", 8), run("20250101-000001-bbbbbb", "x", "single", "single", 8),
				run("20250101-000002-cccccc", "x", "redlock:3", "redlock", 8)},
			[]string{"x (single, aaaaaa)", "x (single, bbbbbb)", "x (redlock:3, cccccc)"}},
		{"a label equal to another run's id is not confused with it",
			[]*Result{run("20250101-000000-aaaaaa", "", "single", "single", 8), run("20250101-000001-bbbbbb", "20250101-000000-aaaaaa", "redlock:3", "redlock", 8)},
			[]string{"20250101-000000-aaaaaa (single)", "20250101-000000-aaaaaa (redlock:3)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RunNames(c.runs)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("RunNames = %q, want %q", got, c.want)
			}
			seen := map[string]bool{}
			for _, n := range got {
				if seen[n] {
					t.Errorf("two runs named %q", n)
				}
				seen[n] = true
			}
		})
	}
}

// sameLabelRuns are two runs of one `run --topology single --topology
// redlock:3 --label sbs`.
func sameLabelRuns(t *testing.T) []*Result {
	runs := reportRuns(t)
	runs[0].Label, runs[1].Label = "sbs", "sbs"
	runs[1].Topology.Spec, runs[1].Topology.Kind, runs[1].Lock.Name = "redlock:3", "redlock", "redlock"
	return runs
}

var (
	legendRe   = regexp.MustCompile(`<li><svg[^>]*><rect[^>]*/></svg> ([^<]*)</li>`)
	firstTDRe  = regexp.MustCompile(`<tr><td>([^<]*)</td>`)
	configThRe = regexp.MustCompile(`(?s)<table class="config">\s*<tr>(.*?)</tr>`)
)

// TestReportTellsRunsOfOneLabelApart: every legend and every table of the
// report names the two runs differently.
func TestReportTellsRunsOfOneLabelApart(t *testing.T) {
	doc := string(writeReport(t, sameLabelRuns(t)))
	want := map[string]bool{"sbs (single)": true, "sbs (redlock:3)": true}
	legends := legendRe.FindAllStringSubmatch(doc, -1)
	if len(legends) == 0 {
		t.Fatal("no legends found")
	}
	for _, m := range legends {
		if !want[m[1]] {
			t.Errorf("legend item %q does not tell the runs apart", m[1])
		}
	}
	for _, m := range firstTDRe.FindAllStringSubmatch(doc, -1) {
		if m[1] == "sbs" {
			t.Errorf("a table row names a run only %q", m[1])
		}
	}
	head := configThRe.FindStringSubmatch(doc)
	if head == nil || !strings.Contains(head[1], "sbs (single)") || !strings.Contains(head[1], "sbs (redlock:3)") {
		t.Errorf("configuration table's header does not tell the runs apart: %v", head)
	}
	if !strings.Contains(doc, "<title>lockbench report: sbs (2 runs)</title>") {
		t.Error("title is not the shared label")
	}
}

// TestReportOpenLoopChartLeavesClosedLoopOut: a closed-loop run measured no
// scheduled or served requests; the open-loop chart leaves it out rather
// than drawing it as zeros, and the run keeps its colour.
func TestReportOpenLoopChartLeavesClosedLoopOut(t *testing.T) {
	runs := reportRuns(t)
	runs[1].Counters.Scheduled, runs[1].Counters.Served = 4000, 4000
	doc := string(writeReport(t, runs))
	var open string
	for _, m := range chartRe.FindAllStringSubmatch(doc, -1) {
		if attrs(m[1])["data-chart"] == "open-loop" {
			open = m[2]
		}
	}
	if open == "" {
		t.Fatal("no open-loop chart")
	}
	if strings.Contains(open, "</svg> "+runs[0].ID+"</li>") || strings.Contains(open, `fill="`+runColor(0)+`"><title>`) {
		t.Errorf("open-loop chart draws the closed-loop run %s", runs[0].ID)
	}
	if !strings.Contains(open, "</svg> "+runs[1].ID+"</li>") || !strings.Contains(open, `fill="`+runColor(1)+`"`) {
		t.Errorf("open-loop chart lacks the open-loop run %s in its colour", runs[1].ID)
	}
	if n := strings.Count(open, `class="value"`); n != 4 {
		t.Errorf("open-loop chart has %d values, want 4 (one run, four figures)", n)
	}
}

// TestReportFitsAt1300Pixels opens reports in headless chromium at 1300 px:
// the page does not scroll sideways with many runs, and no bar chart's row
// label is cut at the chart's left edge (the fairness chart's longest).
func TestReportFitsAt1300Pixels(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium not installed; apt-get install chromium")
	}
	var many []*Result
	for i := range 12 {
		r := fixture(t, "20250314-0926"+strconv.Itoa(10+i)+"-a1b2c3", fixtureOpts{servers: true, series: true, concurrency: 4 << (i % 4)})
		r.Fairness = &Fairness{Workers: 4, MinAcquired: 10, MaxAcquired: 12, Jain: 0.99, WorstTimeToAcquireP99US: 420}
		many = append(many, r)
	}
	const measure = `<script>
var w = document.documentElement.scrollWidth, cut = [];
document.querySelectorAll('svg text.row-label').forEach(function (t) {
  var svg = t.ownerSVGElement.getBoundingClientRect(), b = t.getBoundingClientRect();
  if (b.left < svg.left - 0.5) cut.push(t.textContent);
});
var p = document.createElement('pre'); p.id = 'measured'; p.textContent = w + '|' + cut.join(';');
document.body.appendChild(p);
</script>`
	var buf bytes.Buffer
	if err := WriteReport(&buf, many); err != nil {
		t.Fatal(err)
	}
	got := chromiumMeasure(t, bin, append(buf.Bytes(), measure...))
	width, cut, _ := strings.Cut(got, "|")
	if w, err := strconv.Atoi(width); err != nil || w > 1300 {
		t.Errorf("page is %s px wide at a 1300 px window: it scrolls sideways", width)
	}
	if cut != "" {
		t.Errorf("row labels cut at the chart's edge: %s", cut)
	}
	if !strings.Contains(buf.String(), "worst worker&#39;s time_to_acquire p99") {
		t.Error("the fairness chart (the longest row label) was not drawn")
	}
}

// chromiumMeasure opens html at 1300 × 2000 px and returns the text of the
// element #measured a test script wrote.
func chromiumMeasure(t *testing.T, bin string, html []byte) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1300,2000",
		"--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+path)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<pre id="measured">([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatal("chromium ran no measuring script")
	}
	return string(m[1])
}

// TestOneSampleFiguresAgree: a blocked time recorded once (303.7 ms) shows
// one number for p50 … max and the mean, and no mean ever exceeds its max.
func TestOneSampleFiguresAgree(t *testing.T) {
	for _, vals := range [][]int64{{303_712}, {303_712, 303_712}, {1, 303_712}, tailValues(5000, 180, 0.45)} {
		p := PercentilesOf(histOf(t, vals))
		if len(vals) <= 2 && vals[0] == vals[len(vals)-1] {
			for name, v := range map[string]float64{"p50": p.P50, "p99": p.P99, "p99.9": p.P999, "mean": p.Mean} {
				if v != p.Max {
					t.Errorf("%d samples of %d µs: %s %v, max %v; want one number", len(vals), vals[0], name, v, p.Max)
				}
			}
		}
		if p.Mean > p.Max || p.Mean <= 0 {
			t.Errorf("%d samples: mean %v outside (0, max %v]", len(vals), p.Mean, p.Max)
		}
		if exact := mean(vals); p.Mean < exact || p.Mean > exact*1.001 {
			t.Errorf("%d samples: mean %v, recorded mean %v: more than 0.1%% apart", len(vals), p.Mean, exact)
		}
	}
}

func mean(vs []int64) float64 {
	var s float64
	for _, v := range vs {
		s += float64(v)
	}
	return s / float64(len(vs))
}

// TestReportPerMasterChartLeavesSingleOut: a single-instance run beside a
// Redlock run has no masters to show; the per-master chart leaves it out.
func TestReportPerMasterChartLeavesSingleOut(t *testing.T) {
	runs := sameLabelRuns(t)
	runs[1].NodeOutcomes = []NodeOutcome{{Node: "m0", Acquired: 10}, {Node: "m1", Acquired: 10}, {Node: "m2", Acquired: 9, Errors: 1}}
	doc := string(writeReport(t, runs))
	for _, m := range chartRe.FindAllStringSubmatch(doc, -1) {
		if attrs(m[1])["data-chart"] != "masters" {
			continue
		}
		if strings.Contains(m[2], "sbs (single)") {
			t.Errorf("per-master chart shows the single-instance run")
		}
		if !strings.Contains(m[2], "</svg> sbs (redlock:3)</li>") {
			t.Errorf("per-master chart lacks the Redlock run")
		}
		return
	}
	t.Fatal("no per-master chart")
}
