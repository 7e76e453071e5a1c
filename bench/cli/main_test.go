package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockbench runs the CLI in process and returns exit code, stdout and stderr.
func lockbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"lockbench"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// field walks a dotted path through decoded JSON.
func field(t *testing.T, doc map[string]any, path string) any {
	t.Helper()
	var cur any = doc
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not an object", path, p)
		}
		if cur, ok = m[p]; !ok {
			t.Fatalf("result has no field %s", path)
		}
	}
	return cur
}

func num(t *testing.T, doc map[string]any, path string) float64 {
	t.Helper()
	f, ok := field(t, doc, path).(float64)
	if !ok {
		t.Fatalf("%s is not a number", path)
	}
	return f
}

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	base := []string{"run", "-d", "2s", "--warmup", "200ms", "--format", "json", "-q", "--out", t.TempDir(), "-c", "8"}
	code, out, errs := lockbench(t, append(base, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return doc
}

func TestRunJSONEndToEnd(t *testing.T) {
	doc := runJSON(t, "--keys", "0")
	if s := field(t, doc, "schema"); s != "lockbench/v1" {
		t.Fatalf("schema %v", s)
	}
	for _, path := range []string{"id", "started_at", "duration_s", "partial", "config", "topology.kind", "topology.nodes",
		"topology.server_version", "throughput.acquired_per_s", "contention.attempts", "contention.acquired",
		"contention.contended", "contention.gave_up", "contention.rate", "incidents.expired_during_work",
		"incidents.release_lost", "incidents.renew_lost", "errors", "series"} {
		field(t, doc, path)
	}
	for _, op := range []string{"acquire", "time_to_acquire", "release", "renew", "hold"} {
		for _, f := range []string{"count", "errors", "latency_us.p50", "latency_us.p90", "latency_us.p99", "latency_us.p999", "latency_us.max", "latency_us.mean", "hdr"} {
			field(t, doc, "ops."+op+"."+f)
		}
	}
	for _, op := range []string{"acquire", "release", "time_to_acquire"} {
		p50, p99, max := num(t, doc, "ops."+op+".latency_us.p50"), num(t, doc, "ops."+op+".latency_us.p99"), num(t, doc, "ops."+op+".latency_us.max")
		if num(t, doc, "ops."+op+".count") <= 0 || p50 <= 0 || p50 > p99 || p99 > max {
			t.Errorf("%s: count %v, p50 %v, p99 %v, max %v: want counts > 0 and p50 ≤ p99 ≤ max", op,
				num(t, doc, "ops."+op+".count"), p50, p99, max)
		}
	}
	if rate := num(t, doc, "contention.rate"); rate != 0 {
		t.Errorf("contention rate %v with one key per worker, want 0", rate)
	}
	if num(t, doc, "throughput.acquired_per_s") <= 0 {
		t.Error("no throughput")
	}
	if field(t, doc, "config.concurrency") != "8" || field(t, doc, "config.ttl") != "10s" {
		t.Errorf("config does not carry every flag's value: %v", field(t, doc, "config"))
	}
	if n := num(t, doc, "servers.commands_per_acquire"); n < 2 {
		t.Errorf("commands per acquire %v: SET and the release script at least", n)
	}
	hosts, ok := field(t, doc, "hosts").([]any)
	if !ok || len(hosts) != 1 {
		t.Fatalf("hosts = %v, want this generator's one", field(t, doc, "hosts"))
	}
	host := map[string]any{"host": hosts[0]}
	if cpus := num(t, host, "host.cpus"); cpus != float64(runtime.NumCPU()) {
		t.Errorf("host.cpus = %v, want %d", cpus, runtime.NumCPU())
	}
	if v := field(t, host, "host.go_version"); v != runtime.Version() {
		t.Errorf("host.go_version = %v, want %s", v, runtime.Version())
	}
}

func TestRunContended(t *testing.T) {
	doc := runJSON(t, "--keys", "1")
	if rate := num(t, doc, "contention.rate"); rate <= 0.5 {
		t.Fatalf("contention rate %v with 8 workers on one key, want > 0.5", rate)
	}
	if num(t, doc, "incidents.overlaps") != 0 {
		t.Fatal("overlaps with the single lock and no pauses")
	}
}

func TestRunSideBySide(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count string
		runs  string // the line saying how many runs each row is the median of, "" for none
		files int    // one result file per run
	}{
		{name: "one run each", count: "1", files: 2},
		{name: "repeats make one row of medians each", count: "2", runs: "(each row: the median of its 2 runs ±their spread)", files: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errs := lockbench(t, "run", "-d", "300ms", "--warmup", "0", "-q", "--out", dir, "-c", "2",
				"--count", tc.count, "--topology", "single", "--topology", "redlock:3")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			table := out[strings.Index(out, "| topology"):]
			rows := map[string]bool{}
			for _, line := range strings.Split(table, "\n") {
				cells := strings.Split(line, "|")
				if len(cells) < 9 || strings.Contains(line, "| topology") {
					continue
				}
				rows[strings.TrimSpace(cells[1])] = true
			}
			if !reflect.DeepEqual(rows, map[string]bool{"single": true, "redlock:3": true}) {
				t.Errorf("side-by-side rows %v, want one per topology:\n%s", rows, table)
			}
			if tc.runs != "" && !strings.Contains(table, tc.runs) {
				t.Errorf("table does not say %q:\n%s", tc.runs, table)
			}
			files, err := filepath.Glob(filepath.Join(dir, "*.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != tc.files {
				t.Errorf("%d result files, want one per run (%d)", len(files), tc.files)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"run", "-c", "0"}, "--concurrency"},
		{[]string{"run", "-c", "many"}, "--concurrency"},
		{[]string{"run", "-d", "soon"}, "--duration"},
		{[]string{"run", "--ttl", "-1s"}, "--ttl"},
		{[]string{"run", "--keys", "zipf:10,0.5"}, "--keys"},
		{[]string{"run", "--hold", "gauss:1ms"}, "--hold"},
		{[]string{"run", "--retry", "sometimes"}, "--retry"},
		{[]string{"run", "--topology", "cluster:2"}, "--topology"},
		{[]string{"run", "--topology", "redlock:10"}, "--topology"},
		{[]string{"run", "--lock", "zookeeper"}, "--lock"},
		{[]string{"run", "--topology", "redlock:3", "--lock", "single"}, "--lock"},
		{[]string{"run", "--format", "xml"}, "--format"},
		{[]string{"run", "--renew-every", "20s"}, "--renew-every"},
		{[]string{"run", "--pause-prob", "1.5"}, "--pause-prob"},
		{[]string{"run", "--renew-every", "ttl/3", "--renewer", "thread"}, "--renewer"},
		{[]string{"run", "--renewer", "goroutine"}, "--renewer"},
		{[]string{"run", "--burst-prob", "2"}, "--burst-prob"},
		{[]string{"run", "--burst-prob", "0.5", "--burst", "gauss:1ms"}, "--burst"},
		{[]string{"run", "--burst", "10ms"}, "--burst"},
		{[]string{"run", "--workload", "nonesuch"}, "--workload"},
		{[]string{"run", "--generator-id", "2", "--generators", "2", "--run-id", "r"}, "--generator-id"},
		{[]string{"run", "--generators", "2"}, "--generators"},
		{[]string{"run", "--run-id", "a/b"}, "--run-id"},
		{[]string{"run", "--start-at", "soon"}, "--start-at"},
		{[]string{"run", "--resource", "ftp://x"}, "--resource"},
		{[]string{"run", "--metrics-addr", "nowhere"}, "--metrics-addr"},
		{[]string{"run", "--metrics-linger", "10s"}, "--metrics-linger"},
		{[]string{"run", "--metrics-addr", ":0", "--metrics-linger", "soon"}, "--metrics-linger"},
		{[]string{"run", "--otlp", "collector:4318"}, "--otlp"},
		{[]string{"run", "--otlp", "ftp://collector:4318"}, "--otlp"},
		{[]string{"run", "--otlp", "http://"}, "--otlp"},
		{[]string{"run", "--otlp", "http://u:secret@collector:4318"}, "--otlp"},
		{[]string{"metrics", "prometheus-config", "--target", ":9464"}, "--target"},
		{[]string{"metrics", "prometheus-config", "--scrape-interval", "1ms"}, "--scrape-interval"},
		{[]string{"metrics", "prometheus-config", "--job", "a b"}, "--job"},
		{[]string{"run", "--persistence", "rdb"}, "--persistence"},
		{[]string{"run", "--provider", "podman"}, "--provider"},
		{[]string{"run", "--fault", "at=1s explode node=0"}, "--fault"},
		{[]string{"run", "--topology", "redlock:3", "--fault", "at=1s lag-replica for=1s"}, "--fault"},
		{[]string{"run", "--wait-replicas", "1"}, "--wait-replicas"},
		{[]string{"run", "--no-such-flag"}, "no-such-flag"},
		{[]string{"run", "--redis", "redis://127.0.0.1:notaport"}, "--redis"},
		{[]string{"run", "--redis", "ftp://x"}, "--redis"},
		{[]string{"run", "--redis", "127.0.0.1:6379"}, "--redis"},
		{[]string{"run", "--redis", "redis://127.0.0.1:99999"}, "--redis"},
		{[]string{"run", "--redis", "redis://127.0.0.1:6379/-1"}, "--redis"},
		{[]string{"run", "--redis", "redis://"}, "--redis"},
		{[]string{"run", "-d", "5s", "--fault", "at=20s kill node=0"}, "--fault"},
		{[]string{"run", "--lock", "redlock", "--lock", "single"}, "--lock"},
		{[]string{"run", "-c", "4", "-c", "8"}, "--concurrency"},
		{[]string{"redlock-cost", "--topology", "single"}, "-topology"},
		{[]string{"tune-ttl", "--ttl", "1s"}, "--ttl"},
		{[]string{"tune-ttl", "--renew-every", "100ms"}, "--renew-every"},
		{[]string{"capacity", "-c", "4"}, "--concurrency"},
		{[]string{"run", "--rate", "100,2000:5s,2000:5s", "-d", "5s"}, "--duration"},
		{[]string{"run", "--rate", "100,2000"}, "--rate"},
		{[]string{"run", "--rate", "0,0:5s"}, "--rate"},
		{[]string{"capacity", "--rate", "100,2000:5s"}, "--rate"},
		{[]string{"version", "extra"}, "version takes no arguments"},
		{[]string{"workloads", "extra"}, "workloads takes no arguments"},
		{[]string{"sweep", "-d", "1s"}, "no axis"},
		{[]string{"k8s", "job", "--generators", "0"}, "--generators"},
		{[]string{"k8s", "job", "--", "--run-id", "x"}, "--run-id"},
		{[]string{"k8s", "job", "--", "--keys", "zipf:1,0.5"}, "--keys"},
		{[]string{"k8s", "job", "--", "--redis", "redis://:pw123456@r:6379"}, "password"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errs := lockbench(t, tc.args...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitBadInput, errs)
			}
			if !strings.Contains(errs, tc.flag) {
				t.Fatalf("message does not name %s: %q", tc.flag, errs)
			}
			if n := strings.Count(strings.TrimSpace(errs), "\n"); n > 0 {
				t.Fatalf("want one line, got %d:\n%s", n+1, errs)
			}
			if w, _ := widest(errs); w > helpWidth {
				t.Fatalf("a line of %d columns: %s", w, errs)
			}
		})
	}
}

func TestUnreachableServerIsRuntimeError(t *testing.T) {
	code, _, errs := lockbench(t, "run", "-d", "1s", "-q", "--out", t.TempDir(), "--redis", "redis://127.0.0.1:1")
	if code != exitRuntime || !strings.Contains(errs, "PING") {
		t.Fatalf("exit %d (%s), want %d naming the PING failure", code, errs, exitRuntime)
	}
}

func TestDockerWithoutEngineSaysSo(t *testing.T) {
	if _, err := os.Stat("/var/run/docker.sock"); err == nil {
		t.Skip("a Docker socket exists here; this test checks the no-engine message")
	}
	code, _, errs := lockbench(t, "run", "-d", "1s", "-q", "--out", t.TempDir(), "--provider", "docker")
	if code != exitRuntime || !strings.Contains(errs, "no Docker engine is reachable") {
		t.Fatalf("exit %d (%s), want %d saying no engine is reachable", code, errs, exitRuntime)
	}
}

func TestPasswordNeverPrinted(t *testing.T) {
	code, out, errs := lockbench(t, "run", "-d", "1s", "-q", "--out", t.TempDir(), "--redis", "redis://user:s3cretpw@127.0.0.1:1/0")
	if code == 0 || strings.Contains(out+errs, "s3cretpw") {
		t.Fatalf("exit %d; output shows the password: %s %s", code, out, errs)
	}
}

func TestEnvMirrorsFlags(t *testing.T) {
	t.Setenv("LOCKBENCH_CONCURRENCY", "0")
	code, _, errs := lockbench(t, "run")
	if code != exitBadInput || !strings.Contains(errs, "--concurrency") {
		t.Fatalf("LOCKBENCH_CONCURRENCY=0 not applied: exit %d %s", code, errs)
	}
}

func TestVersionAndWorkloads(t *testing.T) {
	if code, out, _ := lockbench(t, "version"); code != 0 || !strings.HasPrefix(out, "lockbench ") {
		t.Fatalf("version: %d %q", code, out)
	}
	code, out, _ := lockbench(t, "workloads")
	if code != 0 {
		t.Fatalf("workloads exit %d", code)
	}
	for _, name := range []string{"uncontended", "hot-key", "zipf", "long-work", "gc-pause", "crash-holders", "naive-release-race"} {
		if !strings.Contains(out, name) {
			t.Errorf("workloads does not list %s", name)
		}
	}
}

// Ctrl-C (a cancelled context) still stores the result, marked partial.
func TestInterruptStoresPartialResult(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"lockbench", "run", "-d", "1m", "--warmup", "0", "-q", "--out", out}, &stdout, &stderr)
	if code != exitSIGINT || !strings.Contains(stderr.String(), "partial") {
		t.Fatalf("exit %d (%s), want %d saying the partial result was stored", code, stderr.String(), exitSIGINT)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d result files, want 1", len(files))
	}
	b, _ := os.ReadFile(files[0])
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || doc["partial"] != true {
		t.Fatalf("stored result partial=%v (%v)", doc["partial"], err)
	}
	if !strings.Contains(stdout.String(), "PARTIAL") {
		t.Fatal("the table does not say the run is partial")
	}
}

// runCancelled runs the CLI and cancels it after d with cause (nil: a plain
// cancel, as Ctrl-C's), returning exit code, stdout and stderr.
func runCancelled(t *testing.T, d time.Duration, cause error, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	time.AfterFunc(d, func() { cancel(cause) })
	var stdout, stderr bytes.Buffer
	code := run(ctx, append([]string{"lockbench"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestInterruptions(t *testing.T) {
	t.Run("during the warm-up nothing is stored", func(t *testing.T) {
		out := t.TempDir()
		code, _, errs := runCancelled(t, 1500*time.Millisecond, nil, "run", "-d", "1s", "--warmup", "1m", "-q", "--out", out)
		if code != exitSIGINT || !strings.Contains(errs, "during the warm-up; nothing was measured, no result stored") {
			t.Fatalf("exit %d (%s), want %d saying nothing was stored", code, errs, exitSIGINT)
		}
		if files, _ := filepath.Glob(filepath.Join(out, "*.json")); len(files) != 0 {
			t.Fatalf("%d result files stored for a run interrupted in its warm-up", len(files))
		}
	})
	t.Run("during start-up one line", func(t *testing.T) {
		code, _, errs := runCancelled(t, 0, nil, "run", "--topology", "redlock:5", "-d", "1s", "-q", "--out", t.TempDir())
		if code != exitSIGINT || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "interrupted") {
			t.Fatalf("exit %d, stderr:\n%s\nwant %d and one line saying interrupted", code, errs, exitSIGINT)
		}
	})
	t.Run("SIGTERM exits 143", func(t *testing.T) {
		code, _, errs := runCancelled(t, 800*time.Millisecond, Signalled{syscall.SIGTERM}, "run", "-d", "1m", "--warmup", "0", "-q", "--out", t.TempDir())
		if code != exitSIGTERM {
			t.Fatalf("exit %d (%s), want %d", code, errs, exitSIGTERM)
		}
	})
	t.Run("a sweep prints the cells that finished", func(t *testing.T) {
		code, stdout, errs := runCancelled(t, 3*time.Second, nil, "sweep", "--concurrency", "1,2,4,8", "-d", "1s", "--warmup", "0", "-q", "--out", t.TempDir())
		if code != exitSIGINT || !strings.Contains(errs, "interrupted after") {
			t.Fatalf("exit %d (%s), want %d saying how far it got", code, errs, exitSIGINT)
		}
		if !strings.Contains(stdout, "concurrency") || !strings.Contains(stdout, " 1 |") {
			t.Fatalf("no table of the finished cells:\n%s", stdout)
		}
	})
}
