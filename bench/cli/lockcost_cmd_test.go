package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// costSummary is the part of lock-cost's JSON the tests read.
type costSummary struct {
	Lock     string `json:"lock"`
	Topology string `json:"topology"`
	Runs     []string
	Figures  map[string]struct{ Median, Min, Max float64 }
	Ratios   map[string]string `json:"ratios_to_first"`
	Fault    *struct {
		Spec    string
		Runs    []string
		Figures map[string]struct{ Median, Min, Max float64 }
	}
}

func lockCostJSON(t *testing.T, args ...string) []costSummary {
	t.Helper()
	code, out, errs := lockbench(t, append([]string{"lock-cost", "--format", "json", "-q", "--warmup", "0"}, args...)...)
	if code != 0 {
		t.Fatalf("lock-cost: exit %d %s", code, errs)
	}
	var sums []costSummary
	if err := json.Unmarshal([]byte(out), &sums); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return sums
}

// One short comparison end to end: three locks, two runs each, every figure
// measured, ratios against the first, one stored result per run.
func TestLockCostEndToEnd(t *testing.T) {
	out := t.TempDir()
	sums := lockCostJSON(t, "-d", "300ms", "-c", "2", "--count", "2", "--out", out,
		"--lock", "single", "--lock", "redislock", "--lock", "redsync@redlock:3")
	if len(sums) != 3 || sums[2].Lock != "redsync" || sums[2].Topology != "redlock:3" {
		t.Fatalf("rows %+v", sums)
	}
	for _, s := range sums {
		if len(s.Runs) != 2 {
			t.Errorf("%s: %d runs, want 2", s.Lock, len(s.Runs))
		}
		for _, key := range []string{"throughput.acquired_per_s", "acquire.p50", "acquire.p95", "acquire.p99", "acquire.p999", "client.cpu_us_per_acquire", "servers.commands_per_acquire"} {
			if f, ok := s.Figures[key]; !ok || f.Median <= 0 || f.Min > f.Median || f.Max < f.Median {
				t.Errorf("%s: %s = %+v (present %v), want a measured median within its range", s.Lock, key, f, ok)
			}
		}
		if p := s.Figures["acquire.p95"].Median; p < s.Figures["acquire.p50"].Median || p > s.Figures["acquire.p99"].Median {
			t.Errorf("%s: p95 %v outside p50..p99", s.Lock, p)
		}
	}
	if sums[0].Ratios["throughput.acquired_per_s"] != "1.00x" {
		t.Errorf("first row's ratio %q, want 1.00x", sums[0].Ratios["throughput.acquired_per_s"])
	}
	// redsync fans out to three masters: about three times single's commands.
	if c := sums[2].Figures["servers.commands_per_acquire"].Median / sums[0].Figures["servers.commands_per_acquire"].Median; c < 2.5 || c > 3.5 {
		t.Errorf("redsync@redlock:3 runs %.2f× single's commands per acquisition, want about 3", c)
	}
	if files, _ := os.ReadDir(out); len(files) != 6 {
		t.Errorf("%d stored results, want 6", len(files))
	}
}

// The fault variant: redsync on redlock:3 with one master killed keeps its
// quorum (attempts still succeed) while the kill shows in the servers'
// figures; single under a pause past the TTL has operations that waited
// out the pause.
func TestLockCostWithFault(t *testing.T) {
	out := t.TempDir()
	// redsync gives each try ttl × timeout-factor (0.05 by default: 15 ms
	// here), which a loaded machine can miss on a live master; 0.3 keeps the
	// question this test asks (does the quorum of two hold?) apart from load.
	sums := lockCostJSON(t, "-d", "600ms", "-c", "2", "--ttl", "300ms", "--with-fault", "--out", out,
		"--lock", "single", "--lock", "redsync@redlock:3", "--peer-option", "timeout-factor=0.3")
	if len(sums) != 2 || sums[0].Fault == nil || sums[1].Fault == nil {
		t.Fatalf("rows %+v", sums)
	}
	if got := sums[1].Fault.Spec; got != "at=0s kill node=0" {
		t.Fatalf("redsync's fault %q", got)
	}
	if a := sums[1].Fault.Figures["availability"].Median; a < 0.99 {
		t.Errorf("redsync on 2 of 3 masters: %.3f of attempts answered, want the quorum to hold", a)
	}
	down, err := results.Read(filepath.Join(out, results.FileName(sums[1].Fault.Runs[0])))
	if err != nil {
		t.Fatal(err)
	}
	if down.Contention.Acquired == 0 || len(down.Faults) != 1 || down.Faults[0].Error != "" {
		t.Fatalf("killed-master run: acquired %d, faults %+v", down.Contention.Acquired, down.Faults)
	}
	if s := down.Servers; !s.Measured() || len(s.Unmeasured) != 1 || !strings.Contains(s.Unmeasured[0], down.Topology.Nodes[0]) {
		t.Errorf("servers %+v: want the survivors measured and the killed master named", down.Servers)
	}
	paused, err := results.Read(filepath.Join(out, results.FileName(sums[0].Fault.Runs[0])))
	if err != nil {
		t.Fatal(err)
	}
	// A SIGSTOP of 330 ms holds whatever each worker has in flight (with no
	// hold or think time, an acquire or a release); load can only make that
	// longer.
	longest := max(paused.Ops[results.OpAcquire].LatencyUS.Max, paused.Ops[results.OpRelease].LatencyUS.Max)
	if longest < 200_000 || !strings.Contains(sums[0].Fault.Spec, "pause node=0 for=330ms") {
		t.Errorf("single under %q: longest acquire or release %vµs, want one that waited out the pause", sums[0].Fault.Spec, longest)
	}
}

// redlock-cost stays, as lock-cost of single against redlock:N with one
// master down.
func TestRedlockCostAlias(t *testing.T) {
	code, table, errs := lockbench(t, "redlock-cost", "--masters", "2", "-d", "300ms", "--ttl", "300ms", "--warmup", "0", "-c", "2", "-q", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("redlock-cost: exit %d %s", code, errs)
	}
	for _, want := range []string{"redlock:2", "fault redlock@redlock:2: at=0s kill node=0", "fault single@single: at=150ms pause node=0 for=330ms", "available"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestLockCostBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--lock", "redsync@"}, "--lock"},
		{[]string{"--lock", "redislock@redlock:3"}, "--lock"},
		{[]string{"--lock", "bogus"}, "--lock"},
		{[]string{"--topology", "single"}, "topology"},
		{[]string{"--fault", "at=0s kill node=0"}, "fault"},
		{[]string{"--lock", "single", "--peer-option", "tries=2"}, "--peer-option"},
		{[]string{"--with-fault", "--redis", "redis://127.0.0.1:1"}, "--with-fault"},
		{[]string{"--count", "0"}, "--count"},
	} {
		code, _, errs := lockbench(t, append([]string{"lock-cost"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("lock-cost %q: exit %d, %q; want exit 2 and one line naming %s", tc.args, code, errs, tc.says)
		}
	}
}
