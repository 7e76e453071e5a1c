package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/results"
)

// promScrape is the test Prometheus's scrape interval, and promLinger how
// long each generator keeps /metrics up after its run: several scrapes of
// the final figures, however late one is on a busy machine, and long
// enough that three generators' lingers overlap when a loaded host ends
// their runs seconds apart (4s once left one generator's final figures
// 3.7 s before another's first: CI, with other tests beside it).
const (
	promScrape = 500 * time.Millisecond
	promLinger = "12s"
)

// p99Tolerance is how far PromQL's p99 may be from the stored one, as a
// factor: the native histograms' buckets are 2^(1/8) apart and PromQL
// interpolates inside the bucket that holds the 99th percentile, where HDR
// keeps 3 significant digits; one bucket more either way covers the rank
// falling on a bucket's edge (Prometheus ranks q·count, HDR ceil(q·count)).
func p99Tolerance() float64 { return math.Exp2(2.0 / 8) }

// prometheusServer is Debian's prometheus, started on a free loopback port
// with a temporary storage dir and a configuration lockbench wrote.
type prometheusServer struct {
	url string
}

// startPrometheus runs prometheus scraping targets; it is killed when the
// test ends. Missing prometheus skips the test.
func startPrometheus(t *testing.T, targets ...string) *prometheusServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found on PATH: install Debian's prometheus (make prometheus) to run the real-Prometheus tests")
	}
	dir := t.TempDir()
	args := []string{"metrics", "prometheus-config", "--scrape-interval", promScrape.String(), "-o", filepath.Join(dir, "prometheus.yml")}
	for _, tg := range targets {
		args = append(args, "--target", tg)
	}
	if code, _, errOut := lockbench(t, args...); code != 0 {
		t.Fatalf("prometheus-config: %d %s", code, errOut)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--enable-feature=native-histograms")
	var logs bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: &logs, mu: &mu}, &lockedWriter{w: &logs, mu: &mu}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("prometheus's log:\n%s", logs.String())
			mu.Unlock()
		}
	})
	p := &prometheusServer{url: "http://" + addr}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("prometheus not ready in 60 s: %v\n%s", err, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// query evaluates PromQL now and returns each series' value by the label
// named by, "" for a single series.
func (p *prometheusServer) query(t *testing.T, q, by string) map[string]float64 {
	t.Helper()
	return p.queryAt(t, q, by, "")
}

// queryAt evaluates PromQL at a time (Unix seconds; "" for now); by "*"
// keys each series by all its labels.
func (p *prometheusServer) queryAt(t *testing.T, q, by, at string) map[string]float64 {
	t.Helper()
	u := p.url + "/api/v1/query?query=" + url.QueryEscape(q)
	if at != "" {
		u += "&time=" + at
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, body.Status, body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", q, r.Value)
		}
		key := r.Metric[by]
		if by == "*" {
			key = fmt.Sprint(r.Metric)
		}
		out[key] = v
	}
	return out
}

// waitScraped waits until Prometheus holds n generators' final figures
// for run: lockbench_result appears only once a run has finished.
func (p *prometheusServer) waitScraped(t *testing.T, runID string, n int) {
	t.Helper()
	q := fmt.Sprintf(`count(last_over_time(lockbench_result{run_id=%q,figure="throughput.acquired_per_s"}[10m]))`, runID)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.query(t, q, "")[""] == float64(n) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus never scraped the final figures of %d generator(s) of %s", n, runID)
}

// finalAt is a time at which every generator of run served its final
// figures (Unix seconds): the latest of the first scrapes that saw each
// one's lockbench_result, which appears once a run finished and stays for
// its --metrics-linger. Native histograms are read with an instant query
// there, since Prometheus 2.42's *_over_time functions read only floats.
func (p *prometheusServer) finalAt(t *testing.T, runID string) string {
	t.Helper()
	q := fmt.Sprintf(`lockbench_result{run_id=%q,figure="throughput.acquired_per_s"}[10m]`, runID)
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	first, last := 0.0, math.Inf(1)
	var spans []string
	for _, r := range body.Data.Result {
		if len(r.Values) == 0 {
			continue
		}
		f, _ := r.Values[0][0].(float64)
		l, _ := r.Values[len(r.Values)-1][0].(float64)
		first, last = math.Max(first, f), math.Min(last, l)
		spans = append(spans, fmt.Sprintf("generator %s %.3f..%.3f", r.Metric["generator"], f, l))
	}
	if first == 0 || first > last {
		t.Fatalf("no moment when every generator of %s served its final figures: %v", runID, spans)
	}
	return strconv.FormatFloat(first, 'f', 3, 64)
}

// nativeP99 is PromQL's p99 of time to acquire over run's generators at
// their final figures, and how many acquisitions the histogram holds.
func (p *prometheusServer) nativeP99(t *testing.T, runID string) (p99 float64, count float64) {
	t.Helper()
	at := p.finalAt(t, runID)
	sel := fmt.Sprintf(`sum(lockbench_latency_seconds{run_id=%q,op="time_to_acquire"})`, runID)
	p99s := p.queryAt(t, "histogram_quantile(0.99, "+sel+")", "", at)
	counts := p.queryAt(t, "histogram_count("+sel+")", "", at)
	if len(p99s) != 1 || len(counts) != 1 {
		t.Fatalf("no native histogram of %s at %s: p99 %v, count %v", runID, at, p99s, counts)
	}
	return p99s[""], counts[""]
}

// checkP99 holds PromQL's p99 (s) to the stored one (µs).
func checkP99(t *testing.T, what string, promS, storedUS float64) {
	t.Helper()
	ratio := promS * 1e6 / storedUS
	tol := p99Tolerance()
	t.Logf("%s: PromQL p99 %.1f µs, stored %.1f µs (ratio %.3f, tolerance ×%.3f)", what, promS*1e6, storedUS, ratio, tol)
	if !(ratio >= 1/tol && ratio <= tol) {
		t.Errorf("%s: PromQL p99 %.1f µs, stored %.1f µs: ratio %.3f outside ×%.3f", what, promS*1e6, storedUS, ratio, tol)
	}
}

// rateTolerance is how far PromQL's acquisitions/s may be from the stored
// figure, relative: the same division, but the stored result keeps its
// window's length rounded in JSON.
const rateTolerance = 1e-6

// acquiredPerS is PromQL's acquisitions per second of each generator of
// run: the acquisitions over the window so far, from the last scrape,
// which the linger makes one of the final figures. A rate() over the run
// would differ from the stored figure by how the scrapes fall on the
// window's edges (a 500 ms interval on a 3 s window is up to a third
// either side); acquisitions over lockbench_window_seconds has no edge.
func acquiredPerS(runID string) string {
	return fmt.Sprintf(`last_over_time(lockbench_events_total{run_id=%q,figure="contention.acquired"}[10m])
	  / ignoring(figure) last_over_time(lockbench_window_seconds{run_id=%q}[10m])`, runID, runID)
}

// TestPrometheusScrapesARun starts a real redis-server and Debian's
// prometheus, scrapes one `lockbench run` and then three generators of one
// run (three processes sharing --run-id; a Swarm job would add Docker to
// the test and nothing to what Prometheus sees), and holds PromQL's
// acquisitions/s and p99 to the stored results.
func TestPrometheusScrapesARun(t *testing.T) {
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skip("prometheus not found on PATH: install Debian's prometheus (make prometheus) to run the real-Prometheus tests")
	}
	data := composetest.Server(t, compose.ServerOptions{})
	addrs := []string{fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	prom := startPrometheus(t, addrs...)
	dir := t.TempDir()
	common := []string{"--redis", "redis://" + data.Addr(), "--keys", "4", "-c", "4", "--hold", "1ms", "-d", "3s", "--warmup", "500ms",
		"-q", "--format", "json", "--metrics-linger", promLinger}

	t.Run("one run", func(t *testing.T) {
		runID := fmt.Sprintf("prom-one-%d", time.Now().UnixNano()%1_000_000)
		out := filepath.Join(dir, "one")
		runGenerators(t, [][]string{append([]string{"run", "--out", out, "--run-id", runID, "--metrics-addr", addrs[0]}, common...)})
		rs, err := results.Generators(out, runID)
		if err != nil || len(rs) != 1 {
			t.Fatalf("%d results: %v", len(rs), err)
		}
		r := rs[0]
		prom.waitScraped(t, runID, 1)
		got := prom.query(t, acquiredPerS(runID), "")[""]
		t.Logf("PromQL acquisitions/s %.3f, stored %.3f", got, r.Throughput.AcquiredPerS)
		if r.Contention.Acquired == 0 || math.Abs(got-r.Throughput.AcquiredPerS) > rateTolerance*r.Throughput.AcquiredPerS {
			t.Errorf("PromQL acquisitions/s %v, stored %v (%d acquired)", got, r.Throughput.AcquiredPerS, r.Contention.Acquired)
		}
		p99, count := prom.nativeP99(t, runID)
		if tta := r.Ops[results.OpTimeToAcquire]; int64(count) != tta.Count {
			t.Errorf("native histogram holds %v acquisitions, the stored time_to_acquire %d", count, tta.Count)
		}
		checkP99(t, "one run", p99, r.Ops[results.OpTimeToAcquire].LatencyUS.P99)
	})

	t.Run("three generators", func(t *testing.T) {
		runID := fmt.Sprintf("prom-three-%d", time.Now().UnixNano()%1_000_000)
		out := filepath.Join(dir, "three")
		start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
		var cmds [][]string
		for i, a := range addrs {
			cmds = append(cmds, append([]string{"run", "--out", out, "--run-id", runID, "--generators", "3", "--generator-id", strconv.Itoa(i),
				"--start-at", start, "--metrics-addr", a}, common...))
		}
		runGenerators(t, cmds)
		rs, err := results.Generators(out, runID)
		if err != nil || len(rs) != 3 {
			t.Fatalf("%d results of 3 generators: %v", len(rs), err)
		}
		merged := filepath.Join(out, "merged.json")
		if code, _, errOut := lockbench(t, "results", "merge", "--out", out, "--run-id", runID, "-o", merged); code != 0 {
			t.Fatalf("merge: %d %s", code, errOut)
		}
		m, err := results.Read(merged)
		if err != nil {
			t.Fatal(err)
		}
		prom.waitScraped(t, runID, 3)
		perGen := prom.query(t, acquiredPerS(runID), "generator")
		for _, r := range rs {
			g := fmt.Sprint(r.Config["generator-id"])
			if got := perGen[g]; math.Abs(got-r.Throughput.AcquiredPerS) > rateTolerance*r.Throughput.AcquiredPerS {
				t.Errorf("generator %s: PromQL acquisitions/s %v, stored %v", g, got, r.Throughput.AcquiredPerS)
			}
		}
		sum := prom.query(t, fmt.Sprintf(`sum(last_over_time(lockbench_events_total{run_id=%q,figure="contention.acquired"}[10m]))`, runID), "")[""]
		if int64(sum) != m.Contention.Acquired || m.Contention.Acquired == 0 {
			t.Errorf("PromQL sum of acquisitions %v, merged result %d", sum, m.Contention.Acquired)
		}
		// Native histograms add bucket by bucket, as HDR histograms merge:
		// the sum's p99 is the merged result's.
		p99, count := prom.nativeP99(t, runID)
		if tta := m.Ops[results.OpTimeToAcquire]; int64(count) != tta.Count {
			t.Errorf("summed native histograms hold %v acquisitions, the merged time_to_acquire %d", count, tta.Count)
		}
		checkP99(t, "three generators", p99, m.Ops[results.OpTimeToAcquire].LatencyUS.P99)
		checkDashboard(t, prom, runID)
	})
}

// runGenerators runs lockbench processes (this test binary as the CLI) at
// once and waits for them all.
func runGenerators(t *testing.T, argvs [][]string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, len(argvs))
	for i, args := range argvs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), asCLI+"=1")
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("lockbench %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
}

// checkDashboard evaluates every query of the Grafana dashboard on the
// real Prometheus at the generators' final figures: each must parse, and
// the panels' queries must between them draw every panel but those of
// figures the run did not have (classic buckets, which Prometheus drops
// where it keeps the native histogram; server cost, which lockbench_result
// only has where the servers answered INFO).
func checkDashboard(t *testing.T, prom *prometheusServer, runID string) {
	t.Helper()
	b, err := os.ReadFile("../../compose/grafana/lockbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	at := prom.finalAt(t, runID)
	r := strings.NewReplacer("$run_id", runID, "$lock", ".+", "$__rate_interval", "2s")
	for _, p := range dash.Panels {
		series := 0
		for _, tg := range p.Targets {
			series += len(prom.queryAt(t, r.Replace(tg.Expr), "*", at))
		}
		t.Logf("panel %q: %d series", p.Title, series)
		if series == 0 && len(p.Targets) > 0 && !strings.Contains(p.Title, "cost") && !strings.Contains(p.Title, "Incidents") && !strings.Contains(p.Title, "Errors") {
			t.Errorf("panel %q draws nothing for run %s", p.Title, runID)
		}
	}
}
