package composetest

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// Topology brings spec up for t and closes it at cleanup; then it fails t if
// any process of the topology is still running, so that a test cannot leak
// servers or sentinels. A server restarted by a fault is checked by the PID
// it has at cleanup; a test that kills one checks that PID itself.
func Topology(t testing.TB, spec compose.Spec, opts compose.UpOptions) *compose.Topology {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	topo, err := compose.Up(ctx, spec, opts)
	if err != nil {
		t.Fatalf("bring up %s: %v", spec, err)
	}
	t.Cleanup(func() {
		var pids []int
		for _, n := range topo.Nodes {
			if n.Server != nil {
				pids = append(pids, n.Server.PID())
			}
		}
		if err := topo.Close(); err != nil {
			t.Errorf("close %s: %v", spec, err)
		}
		for _, pid := range pids {
			if Alive(pid) {
				t.Errorf("process %d of %s still running after Close", pid, spec)
			}
		}
	})
	return topo
}

// Alive reports whether pid is a running process; an exited process not yet
// reaped (a zombie) counts as gone.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	st, readable := compose.ProcessState(pid)
	if !readable {
		// No /proc entry: gone; one that cannot be read: ask the kernel.
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			return false
		}
		return syscall.Kill(pid, 0) == nil
	}
	return st != "Z"
}

// Stopped reports whether pid is stopped by a signal (SIGSTOP), from its
// /proc state.
func Stopped(pid int) bool {
	st, _ := compose.ProcessState(pid)
	return st == "T"
}
