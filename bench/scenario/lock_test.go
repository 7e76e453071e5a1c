package scenario

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose/longtest"
)

func mustLookup(t *testing.T, name string) Scenario {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWithLock(t *testing.T) {
	gc, err := mustLookup(t, "gc-pause").WithLock("redsync", []string{"set-nx-on-extend"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range gc.Variants {
		names = append(names, v.Name+"="+v.Flags.Get("lock"))
	}
	if got := strings.Join(names, ", "); got != "redsync=redsync, redsync + renewal ttl/3=redsync, fenced=fenced, fenced + renewal ttl/3=fenced" {
		t.Fatalf("variants %s", got)
	}
	if gc.Variants[0].Flags.Get("peer-option") != "set-nx-on-extend" || gc.Variants[2].Flags.Has("peer-option") {
		t.Fatalf("peer options reach the wrong variants: %v / %v", gc.Variants[0].Flags, gc.Variants[2].Flags)
	}

	down, err := mustLookup(t, "redlock-node-down").WithLock("redsync", nil)
	if err != nil {
		t.Fatal(err)
	}
	ff := down.Variants[2]
	if ff.Name != "redsync: one killed, --fail-fast" || ff.Flags.Has("fail-fast") || ff.Flags.Get("peer-option") != "fail-fast" {
		t.Fatalf("fail-fast variant %q %v", ff.Name, ff.Flags)
	}
	// node-timeout 50ms at ttl 8s is redsync's timeout-factor 50ms/8s.
	restart, err := mustLookup(t, "redlock-restart").WithLock("redsync", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := restart.Variants[0].Flags; v.Has("node-timeout") || v.Get("peer-option") != "timeout-factor=0.00625" {
		t.Fatalf("restart flags %v", v)
	}

	// A user's own lock has its own timings: the recipe's settings of
	// lockbench's Redlock client are dropped, not handed to it.
	for _, lock := range []string{"exec:./mydriver", "go:mine"} {
		user, err := mustLookup(t, "redlock-restart").WithLock(lock, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := user.Variants[0].Flags; v.Has("node-timeout") || v.Has("fail-fast") || v.Has("drift-factor") || v.Get("lock") != lock {
			t.Fatalf("restart flags on %s: %v", lock, v)
		}
	}

	failover, err := mustLookup(t, "failover").WithLock("redislock", nil)
	if err != nil {
		t.Fatal(err)
	}
	if failover.Variants[0].Name != "redislock: no WAIT" || failover.Variants[1].Flags.Get("lock") != "single" {
		t.Fatalf("failover variants %+v", failover.Variants)
	}

	for _, tc := range []struct{ scenario, lock, says string }{
		{"naive-release", "redsync", "takes no --lock"},
		{"redlock-node-down", "redislock", "--lock"},
		{"gc-pause", "bogus", "--lock"},
		{"gc-pause", "single", "--peer-option"},
	} {
		var opts []string
		if tc.lock == "single" {
			opts = []string{"tries=2"}
		}
		_, err := mustLookup(t, tc.scenario).WithLock(tc.lock, opts)
		if err == nil || !plan.IsInputError(err) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s --lock %s: %v, want an input error saying %q", tc.scenario, tc.lock, err, tc.says)
		}
	}
}

// The gc-pause hazard, counted for redsync: its holders' stale writes are
// accepted, as single's are.
func TestGCPauseOnRedsync(t *testing.T) {
	longtest.Skip(t)
	s, err := mustLookup(t, "gc-pause").WithLock("redsync", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Variants = s.Variants[:1]
	v, err := Run(context.Background(), s, Options{Trials: 2}, execute)
	if err != nil {
		t.Fatal(err)
	}
	vv := v.Variants[0]
	if vv.Violated == 0 || vv.Trials[0].Result.Lock.Name != "redsync" {
		t.Fatalf("redsync under gc-pause: violated in %d/%d trials (lock %s), want stale writes accepted", vv.Violated, len(vv.Trials), vv.Trials[0].Result.Lock.Name)
	}
}
