package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/results"
)

// asCLI makes this test binary act as lockbench itself when re-executed, so
// a test can start real generator processes without building a binary.
const asCLI = "LOCKBENCH_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		// lockbench's main itself, so the process handles Ctrl-C as lockbench does.
		os.Exit(Run(os.Args, Options{}))
	}
	// go-redis's log lines held back, printed if the package fails.
	os.Exit(composetest.Main(m))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// generators runs n lockbench processes as one run and returns their results.
func generators(t *testing.T, n int, lock string, data, resource string, metricsProbe func(addr string)) []*results.Result {
	t.Helper()
	dir := t.TempDir()
	runID := fmt.Sprintf("gen-%s-%d", lock, time.Now().UnixNano()%1_000_000)
	// Long enough for n processes to start and reach their servers on a busy machine.
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	errs := make([]string, n)
	addr0 := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	for i := range n {
		args := []string{"run", "--redis", data, "--resource", resource, "--run-id", runID, "--generators", strconv.Itoa(n),
			"--generator-id", strconv.Itoa(i), "--start-at", start, "--lock", lock, "--keys", "1", "-c", "1",
			"-d", "2s", "--warmup", "0", "--retry", "fixed:1ms", "-q", "--out", dir, "--history", dir + "/{id}.history.jsonl.gz"}
		if lock == "naive" {
			// The preset's race: work nearly as long as the TTL, and a round
			// trip between GET and DEL long enough for the lease to expire in it.
			args = append(args, "--ttl", "100ms", "--hold", "uniform:40ms,70ms", "--naive-gap", "40ms")
		} else {
			args = append(args, "--hold", "1ms")
		}
		if i == 0 {
			args = append(args, "--metrics-addr", addr0)
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), asCLI+"=1")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("generator %d: %v: %s", i, err, out)
			}
		}()
	}
	if metricsProbe != nil {
		metricsProbe(addr0)
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	rs, err := results.Generators(dir, runID)
	if err != nil || len(rs) != n {
		t.Fatalf("%d results of %d generators: %v", len(rs), n, err)
	}
	code, _, errOut := lockbench(t, "results", "merge", "--out", dir, "--run-id", runID, "-o", filepath.Join(dir, "merged.json"))
	if code != 0 {
		t.Fatalf("merge --run-id: %d %s", code, errOut)
	}
	merged, err := results.Read(filepath.Join(dir, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	return append(rs, merged)
}

// scrape reads one event count from a /metrics page, -1 if absent.
func scrape(addr, figure string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`lockbench_events_total\{[^}]*figure="` + regexp.QuoteMeta(figure) + `"[^}]*\} (\S+)`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// Three generator processes, one worker each, one key, one shared resource:
// every contended attempt and every overlap is between processes.
func TestGeneratorsAreOneRun(t *testing.T) {
	data := composetest.Server(t, compose.ServerOptions{})
	res := composetest.Server(t, compose.ServerOptions{})
	dataURL, resURL := "redis://"+data.Addr(), "redis://"+res.Addr()
	var first, second float64
	probe := func(addr string) {
		deadline := time.Now().Add(15 * time.Second)
		for first <= 0 && time.Now().Before(deadline) {
			first = scrape(addr, "contention.acquired")
			time.Sleep(200 * time.Millisecond)
		}
		// Rising while the run lasts: read again until it has, or the
		// endpoint is gone with the run (a fixed 700 ms once saw 2 then 2
		// on a loaded machine, whose few acquisitions came in bursts).
		for second <= first && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			v := scrape(addr, "contention.acquired")
			if v < 0 {
				break
			}
			second = v
		}
	}
	naive := generators(t, 3, "naive", dataURL, resURL, probe)
	if first <= 0 || second <= first {
		t.Errorf("/metrics acquisitions %v then %v: want them answered and rising during the run", first, second)
	}
	merged := naive[3]
	var acquired, contended, overlaps int64
	for _, r := range naive[:3] {
		// The offset is each generator's start after the earliest one's:
		// started together, but a loaded CI host took 1.26 s to start the
		// third process, so the bound only says "the same run".
		if r.Resource != resURL || r.StartOffsetS < 0 || r.StartOffsetS > 10 {
			t.Errorf("%s: resource %q, start offset %vs", r.ID, r.Resource, r.StartOffsetS)
		}
		acquired += r.Contention.Acquired
		contended += r.Contention.Contended
		overlaps += r.Incidents.Overlaps
	}
	if contended == 0 {
		t.Error("no contention between three generators on one key: they are not sharing keys")
	}
	if overlaps == 0 {
		t.Error("the naive lock's overlaps between processes were not seen through the shared resource")
	}
	if merged.Contention.Acquired != acquired || merged.Contention.Contended != contended || merged.Incidents.Overlaps != overlaps {
		t.Errorf("merged acquired %d contended %d overlaps %d, want the sums %d %d %d", merged.Contention.Acquired,
			merged.Contention.Contended, merged.Incidents.Overlaps, acquired, contended, overlaps)
	}
	// The generators' histories were merged with their results; check
	// counts on the merged history what the shared resource counted.
	code, out, errOut := lockbench(t, "check", "--format", "json", merged.History)
	var rep struct {
		Window struct {
			DoubleGrants int64 `json:"double_grants"`
			Overruns     int64 `json:"overruns"`
		} `json:"window"`
		Keys int `json:"keys_checked"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || merged.History == "" {
		t.Fatalf("check of the merged history %q: %d %v %s", merged.History, code, err, errOut)
	}
	inc := merged.Incidents
	// Each generator judges only its own lock calls; check of the merged
	// history reads every generator's, so it may find a double grant that
	// only calls of two generators show, and never fewer than the run.
	if rep.Window.DoubleGrants < inc.DoubleGrants || rep.Window.Overruns != inc.Overruns || code != 4 || rep.Keys != 1 {
		t.Errorf("check of the merged history: exit %d, double grants %d, overruns %d, %d key(s); the run: %d, %d on 1 key",
			code, rep.Window.DoubleGrants, rep.Window.Overruns, rep.Keys, inc.DoubleGrants, inc.Overruns)
	}
	single := generators(t, 3, "single", dataURL, resURL, nil)
	if m := single[3]; m.Incidents.Overlaps != 0 || m.Contention.Contended == 0 {
		t.Errorf("single across generators: overlaps %d (want 0), contended %d (want some)", m.Incidents.Overlaps, m.Contention.Contended)
	}
	// Nothing of the runs is left on the data server but fencing counters on their way out.
	keys, _ := composetest.ClientAt(t, data.Addr()).Keys(context.Background(), "lockbench:*").Result()
	for _, k := range keys {
		if !strings.HasSuffix(k, ":fence") {
			t.Errorf("key %s left behind", k)
		}
	}
}
