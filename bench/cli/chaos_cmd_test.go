package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/chaos"
	"github.com/lockbench/lockbench/compose/longtest"
)

// TestChaosBadInput: a schedule file that does not parse, a fault in it
// that does not fit the topology, a seed that is not a number, drawing
// flags beside --schedule: one line, exit 2, before any server starts.
func TestChaosBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbled := write("garbled.schedule", "window 10s\nat=1s explode node=0\n")
	misfit := write("misfit.schedule", "window 10s\nat=1s isolate leader for=1s\n")
	noWindow := write("nowindow.schedule", "at=1s pause node=0 for=1s\n")
	out := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--schedule", garbled}, "line 2"},
		{[]string{"--schedule", noWindow}, "no window line"},
		{[]string{"--schedule", misfit}, "single has no leader"},
		{[]string{"--schedule", filepath.Join(dir, "absent")}, "--schedule"},
		{[]string{"--seed", "x"}, "--seed \"x\""},
		{[]string{"--seed", "-1"}, "--seed"},
		{[]string{"--schedule", garbled, "--seed", "3"}, "--seed"},
		{[]string{"--schedule", misfit, "--kinds", "pause"}, "--kinds"},
		{[]string{"--kinds", "explode"}, "unknown fault kind"},
		{[]string{"--kinds", "isolate"}, "isolate"},
		{[]string{"--fault-for", "5s..1s"}, "--fault-for"},
		{[]string{"--fault-rate", "0"}, "--fault-rate"},
		{[]string{"--overlap", "0"}, "--overlap"},
		{[]string{"-d", "3s"}, "--duration"},
		{[]string{"--budget", "5m"}, "--shrink"},
		{[]string{"--fault", "at=1s pause node=0 for=1s"}, "--fault"},
	} {
		args := append([]string{"chaos", "--out", out}, tc.args...)
		code, _, errs := lockbench(t, args...)
		if code != exitBadInput || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q", tc.args, code, errs, tc.says)
		}
	}
}

// TestChaosSeedReplays: the same seed draws the same schedule twice, on
// real servers, each stored beside its result; the stored file replays
// that schedule with --schedule.
func TestChaosSeedReplays(t *testing.T) {
	longtest.Skip(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	out := t.TempDir()
	args := []string{"chaos", "--out", out, "-q", "--topology", "single", "-d", "6s", "--warmup", "0", "--seed", "11",
		"--fault-rate", "30", "--fault-for", "500ms..1500ms", "--kinds", "latency,partition,pause", "--format", "json"}
	var drawn []string
	for range 2 {
		code, stdout, errs := lockbench(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var o struct {
			Seed         uint64   `json:"seed"`
			Faults       []string `json:"faults"`
			ScheduleFile string   `json:"schedule_file"`
			Verdict      string   `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if len(o.Faults) == 0 || o.Seed != 11 || o.Verdict != "safe" {
			t.Fatalf("outcome %+v", o)
		}
		b, err := os.ReadFile(o.ScheduleFile)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := chaos.Parse(string(b))
		if err != nil || strings.Join(stored.Specs(), "|") != strings.Join(o.Faults, "|") {
			t.Fatalf("stored schedule %v (%v), ran %v", stored.Specs(), err, o.Faults)
		}
		drawn = append(drawn, strings.Join(o.Faults, "|"))
		if len(drawn) == 2 {
			code, stdout, errs := lockbench(t, "chaos", "--out", out, "-q", "--warmup", "0", "--schedule", o.ScheduleFile, "--format", "json")
			if code != exitOK || !strings.Contains(stdout, `"faults": [`) {
				t.Fatalf("replay: exit %d: %s %s", code, stdout, errs)
			}
		}
	}
	if drawn[0] != drawn[1] {
		t.Errorf("seed 11 drew two schedules:\n%s\n%s", drawn[0], drawn[1])
	}
}

// TestChaosShrinksAPlantedUnsafeLock: the naive lock (release by GET then
// DEL) breaks under chaos; --shrink ends with a schedule of at most two
// faults, stored, that reproduces when replayed.
func TestChaosShrinksAPlantedUnsafeLock(t *testing.T) {
	longtest.Skip(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	out := t.TempDir()
	code, stdout, errs := lockbench(t, "chaos", "--out", out, "-q", "--workload", "naive-release-race", "-d", "8s", "--warmup", "0",
		"--seed", "5", "--fault-rate", "40", "--fault-for", "500ms..2s", "--kinds", "latency,partition,pause",
		"--shrink", "--shrink-tries", "8", "--format", "json")
	if code != exitUnsafe {
		t.Fatalf("exit %d, want %d: %s %s", code, exitUnsafe, stdout, errs)
	}
	var o struct {
		Faults []string `json:"faults"`
		Shrink *struct {
			Faults []string `json:"faults"`
			File   string   `json:"file"`
		} `json:"shrink"`
	}
	if err := json.Unmarshal([]byte(stdout), &o); err != nil || o.Shrink == nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(o.Shrink.Faults) > 2 {
		t.Fatalf("shrunk %d faults to %v, want at most two", len(o.Faults), o.Shrink.Faults)
	}
	code, stdout, errs = lockbench(t, "chaos", "--out", out, "-q", "--workload", "naive-release-race", "--warmup", "0",
		"--schedule", o.Shrink.File, "--format", "json")
	if code != exitUnsafe || !strings.Contains(stdout, `"unsafe": true`) {
		t.Errorf("the smallest schedule %s did not reproduce: exit %d: %s %s", o.Shrink.File, code, stdout, errs)
	}
}

// TestChaosInterruptHeals: Ctrl-C while a fault is in effect (the server
// paused) ends the run with its partial result and the schedule stored,
// exit 130, and no server this process started is left running or stopped.
func TestChaosInterruptHeals(t *testing.T) {
	longtest.Skip(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "pause.schedule")
	if err := os.WriteFile(file, []byte("window 20s\nat=1s pause node=0 for=15s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Long enough for the servers to start and the pause to strike on
		// a loaded host; the pause lasts until 16 s into the window.
		time.Sleep(8 * time.Second)
		cancel()
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"lockbench", "chaos", "--out", filepath.Join(dir, "runs"), "-q", "--warmup", "0", "--schedule", file}, &out, &errb)
	if code != exitSIGINT {
		t.Fatalf("exit %d, want %d: %s %s", code, exitSIGINT, out.String(), errb.String())
	}
	stored, _ := filepath.Glob(filepath.Join(dir, "runs", "*.schedule"))
	if len(stored) != 1 {
		t.Errorf("schedules stored: %v, want the run's", stored)
	}
	if left := childProcesses(t, "redis-server"); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// childProcesses lists this process's children named name, with their
// state (T for one still stopped).
func childProcesses(t *testing.T, name string) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i, j := strings.Index(s, "("), strings.LastIndex(s, ")")
		if i < 0 || j < i || s[i+1:j] != name {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, p+" state "+f[0])
		}
	}
	return out
}
