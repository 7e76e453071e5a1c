package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goDriverLock builds the Go driver around lockbench's single and returns
// its --lock.
func goDriverLock(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "godriver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../lockimpl/drivers/godriver").CombinedOutput(); err != nil {
		t.Fatalf("go build godriver: %v\n%s", err, out)
	}
	return "exec:" + bin + " single"
}

// TestUserLocksThroughEveryCommand: a driver lock (exec:) and a lock
// defined by its scripts (def:) go through capacity, tune-ttl, scenario
// (gc-pause, whose fault — a holder's pause — fits any lock on single) and
// advise --candidate, each on a local redis-server at short durations, and
// each command's output names the lock.
func TestUserLocksThroughEveryCommand(t *testing.T) {
	def, err := filepath.Abs("../../lockimpl/defs/single.yaml")
	if err != nil {
		t.Fatal(err)
	}
	locks := map[string]string{"driver": goDriverLock(t), "def": "def:" + def}
	for kind, lock := range locks {
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"capacity", []string{"capacity", "--lock", lock, "-d", "500ms", "--warmup", "0", "--max", "4"}},
			{"tune-ttl", []string{"tune-ttl", "--lock", lock, "-d", "500ms", "--warmup", "0", "--ttls", "200ms,400ms", "--renews", "0,ttl/2"}},
			{"scenario", []string{"scenario", "gc-pause", "--lock", lock, "--trials", "1"}},
			{"advise", []string{"advise", "--candidate", lock + "@single", "--budget", "20s"}},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				// Each brings up a topology of its own on free ports and
				// asserts no figure, only that the command takes the lock:
				// side by side, they cost the package a third of the time.
				t.Parallel()
				code, out, errs := lockbench(t, append(tc.args, "-q", "--out", t.TempDir())...)
				if code != 0 {
					t.Fatalf("exit %d\n%s\n%s", code, out, errs)
				}
				if !strings.Contains(out+errs, strings.TrimPrefix(strings.TrimPrefix(lock, "exec:"), "def:")) {
					t.Errorf("output does not name %s:\n%s\n%s", lock, out, errs)
				}
			})
		}
	}
}

// TestDriverCrashRun: --crash-prob on a driver lock kills holders'
// driver processes (a real crash of the user's runtime) and the run goes
// on to its end, as with the built-in locks: crashed holders counted, no
// overlap, the driver still working.
func TestDriverCrashRun(t *testing.T) {
	lock := goDriverLock(t)
	for _, procs := range []string{"per-worker", "shared"} {
		t.Run(procs, func(t *testing.T) {
			doc := runJSON(t, "--topology", "single", "--lock", lock, "--driver-procs", procs,
				"--crash-prob", "0.05", "--ttl", "200ms", "--hold", "const:2ms", "--retry", "fixed:5ms", "--acquire-timeout", "2s")
			if num(t, doc, "counters.crashed") == 0 || num(t, doc, "throughput.acquired_per_s") == 0 {
				t.Errorf("crashed %v, acquired %v/s: want both above 0", num(t, doc, "counters.crashed"), num(t, doc, "throughput.acquired_per_s"))
			}
			if num(t, doc, "incidents.overlaps") != 0 {
				t.Errorf("overlaps %v after crashes", num(t, doc, "incidents.overlaps"))
			}
			b, _ := json.Marshal(doc["errors"])
			for kind := range doc["errors"].(map[string]any) {
				if kind != "driver_crashed" {
					t.Errorf("errors %s: only a crashed shared process's other callers may fail", b)
				}
			}
		})
	}
}
