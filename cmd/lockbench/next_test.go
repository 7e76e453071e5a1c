package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/results"
)

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Every command that stores something ends with the commands that show
// it: a sweep (runs stored through the cell runner, which capacity,
// tune-ttl, lock-cost, scenario and advise share) and results collect; a
// command that stores nothing ends without one.
func TestStoringCommandsEndWithNextStep(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := lockbench(t, "sweep", "--concurrency", "1,2", "-d", "300ms", "--warmup", "0", "--keys", "unique", "--out", dir)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	rs, skipped, err := results.List(dir)
	if err != nil || len(skipped) > 0 || len(rs) != 2 {
		t.Fatalf("sweep stored %d results (%v %v), want 2", len(rs), err, skipped)
	}
	want := "next: lockbench results compare --out " + dir + " "
	if got := lastLine(errs); !strings.HasPrefix(got, want) || !strings.Contains(got, "results report --out "+dir) {
		t.Errorf("sweep ends with %q, want %q… and the report", got, want)
	}

	// Two generators' results printed to logs, collected.
	var logs bytes.Buffer
	for _, r := range rs {
		if err := job.WriteMarked(&logs, r); err != nil {
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(t.TempDir(), "pods.log")
	if err := os.WriteFile(logFile, logs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	collected := t.TempDir()
	code, _, errs = lockbench(t, "results", "collect", "--logs", logFile, "--out", collected)
	if code != 0 || !strings.HasPrefix(lastLine(errs), "next: lockbench results compare --out "+collected) {
		t.Errorf("collect: exit %d, stderr %q: want it to end with the next step", code, errs)
	}

	code, _, errs = lockbench(t, "results", "ls", "--out", dir)
	if code != 0 || strings.Contains(errs, "next:") {
		t.Errorf("results ls: exit %d, stderr %q: stores nothing, so no next step", code, errs)
	}
}
