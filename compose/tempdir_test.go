package compose

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTempDirOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"lockbench-etcd-4242-1234567", 4242, true},
		{"lockbench-redis-server-17-99", 17, true},
		{"lockbench-postgres-8-0", 8, true},
		{"lockbench-topology-123-456", 123, true},
		// Names made before they carried the process: never taken for one.
		{"lockbench-etcd-1234567", 0, false},
		{"lockbench-redis-server-2809275425", 0, false},
		{"lockbench-topology-456", 0, false},
		{"lockbench-etcd-0-5", 0, false},
		{"lockbench-etcd-x-5", 0, false},
		{"other-etcd-42-5", 0, false},
	} {
		pid, ok := tempDirOwner(tc.name)
		if pid != tc.pid || ok != tc.ok {
			t.Errorf("tempDirOwner(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A SIGKILLed lockbench leaves its servers' data directories, named by its
// pid; the next run removes those, and only those: a running process's, one
// a running server still works in, and the old names without a pid stay.
func TestRemoveStaleDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := deadPID(t)
	mk := func(name string) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	var left []string
	for _, what := range []string{"etcd", "etcd", "redis-server", "postgres", "topology"} {
		dir, err := os.MkdirTemp("", tempDirPattern(what, dead))
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, dir)
	}
	mine, err := makeTempDir("etcd")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mine, tmp) {
		t.Fatalf("makeTempDir made %s outside TMPDIR %s", mine, tmp)
	}
	busy := mk(tempDirPattern("redis-server", dead) + "77")
	server := exec.Command("sleep", "60")
	server.Dir = busy
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	old := mk("lockbench-etcd-1234567")
	other := mk("unrelated-" + tempDirPattern("etcd", dead) + "5")

	removed, err := RemoveStaleDirs()
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(left) {
		t.Errorf("removed %v, want the %d directories of pid %d", removed, len(left), dead)
	}
	for _, dir := range left {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s of the dead lockbench %d is still there (%v)", dir, dead, err)
		}
	}
	for _, dir := range []string{mine, busy, old, other} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s removed: %v", dir, err)
		}
	}

	// Up says what it removed before it starts anything.
	mk(tempDirPattern("etcd", dead) + "9")
	var log bytes.Buffer
	_, _ = Up(context.Background(), Spec{}, UpOptions{Log: &log, Provider: "bogus"})
	if log.Len() != 0 {
		t.Errorf("Up with a bad provider said %q; want nothing removed before the input is checked", log.String())
	}
	removeStaleDirs(&log)
	if !strings.Contains(log.String(), "removed 1 data directories left by lockbench processes no longer running") {
		t.Errorf("log %q: want the removal said", log.String())
	}
}
