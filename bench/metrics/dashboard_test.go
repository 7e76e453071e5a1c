package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// dashboardPath is the Grafana dashboard the README links.
const dashboardPath = "../../compose/grafana/lockbench.json"

// flakyLocker fails every fifth acquisition, so a run records errors and
// /metrics exports lockbench_errors_total too.
type flakyLocker struct {
	mapLocker
	n atomic.Int64
}

func (f *flakyLocker) Acquire(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	if f.n.Add(1)%5 == 0 {
		return lockimpl.Lease{}, lockimpl.Failed, errors.New("connection refused")
	}
	return f.mapLocker.Acquire(ctx, key, ttl)
}

// exportedNames are the series names /metrics serves after a short real
// recording (errors included) and its result: a histogram's family gives
// its own name (native) and _bucket, _sum, _count (classic).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	keys, err := workloads.ParseKeys("uniform:2")
	if err != nil {
		t.Fatal(err)
	}
	live := bench.NewLive()
	m, err := bench.Run(context.Background(), &flakyLocker{mapLocker: mapLocker{held: map[string]string{}}},
		workloads.Workload{Keys: keys, TTL: time.Second}, bench.Options{Concurrency: 4, Duration: 200 * time.Millisecond, Live: live})
	if err != nil {
		t.Fatal(err)
	}
	var r results.Result
	if err := m.Fill(&r); err != nil {
		t.Fatal(err)
	}
	run := NewRun(live, Labels{RunID: "r", Generator: "0", Lock: "map", Topology: "single"})
	run.Finish(&r)
	reg, err := run.Registry()
	if err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	return names
}

// promqlNames are the metric names and figure="…" values an expression
// selects. A small reading of PromQL, enough for a dashboard's queries:
// strings, label matchers, ranges and grouping lists are taken out first,
// then every identifier not followed by "(" and not a keyword is a metric.
func promqlNames(expr string) (metrics, figures []string) {
	for _, m := range regexp.MustCompile(`figure\s*=\s*"([^"]*)"`).FindAllStringSubmatch(expr, -1) {
		figures = append(figures, m[1])
	}
	s := regexp.MustCompile(`"(\\.|[^"\\])*"`).ReplaceAllString(expr, `""`)
	s = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(s, " ")
	s = regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(s, " ")
	// Numbers and durations (0.99, 5m) before identifiers, so 5m is no metric m.
	s = regexp.MustCompile(`\b\d[A-Za-z0-9_.]*`).ReplaceAllString(s, " ")
	s = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(s, " ")
	keywords := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "and": true, "or": true, "unless": true,
		"bool": true, "offset": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
	for _, m := range regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`).FindAllString(s, -1) {
		if strings.HasSuffix(m, "(") || keywords[strings.ToLower(m)] {
			continue
		}
		metrics = append(metrics, m)
	}
	return metrics, figures
}

func TestPromqlNames(t *testing.T) {
	metrics, figures := promqlNames(`histogram_quantile(0.99, sum by (lock, le) (rate(a_bucket{x=~"y{1}",figure="f.g"}[$__rate_interval]))) / ignoring(figure) b > 0 and on(c) d offset 5m`)
	if !slices.Equal(metrics, []string{"a_bucket", "b", "d"}) || !slices.Equal(figures, []string{"f.g"}) {
		t.Errorf("metrics %v figures %v", metrics, figures)
	}
}

// TestDashboardNamesOnlyExportedSeries parses every PromQL expression of the
// Grafana dashboard (panel targets and template variables) and holds each
// metric name to what /metrics exports, and each figure="…" to the
// catalogue; it also checks that the panels cover what the README lists.
func TestDashboardNamesOnlyExportedSeries(t *testing.T) {
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	exported := exportedNames(t)
	var exprs, titles []string
	for _, p := range dash.Panels {
		titles = append(titles, p.Title)
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if d := strings.TrimSuffix(strings.TrimPrefix(v.Definition, "label_values("), ")"); d != v.Definition {
			exprs = append(exprs, d[:strings.LastIndex(d, ",")])
		}
	}
	checked := 0
	for _, e := range exprs {
		metrics, figures := promqlNames(e)
		if len(metrics) == 0 {
			t.Errorf("no metric in %q", e)
		}
		for _, m := range metrics {
			checked++
			if !exported[m] {
				t.Errorf("%q names %s, which /metrics does not export (it exports %v)", e, m, slices.Sorted(maps.Keys(exported)))
			}
		}
		for _, f := range figures {
			if _, err := results.LookupFigure(f); err != nil {
				t.Errorf("%q: figure %q: %v", e, f, err)
			}
		}
	}
	t.Logf("%d expressions, %d metric names checked", len(exprs), checked)
	joined := strings.ToLower(strings.Join(titles, " | "))
	for _, want := range []string{"acquisitions/s per lock", "per generator", "time to acquire p50/p99", "contention", "incidents", "server cost", "errors"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no panel titled with %q: %s", want, joined)
		}
	}
}
