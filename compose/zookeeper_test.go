package compose

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/longtest"
)

func TestParseZkSrvr(t *testing.T) {
	cases := []struct {
		name, in string
		want     ZkServerInfo
		bad      bool
	}{
		{name: "leader", in: "Zookeeper version: 3.8.0-debian, built on 2024-06-16\nLatency min/avg/max: 0/0.0/0\nZxid: 0x100000002\nMode: leader\nNode count: 5\n",
			want: ZkServerInfo{Version: "3.8.0-debian, built on 2024-06-16", Mode: ZkModeLeader, Zxid: 0x100000002}},
		{name: "standalone", in: "Zxid: 0x0\nMode: standalone\n", want: ZkServerInfo{Mode: ZkModeStandalone}},
		{name: "not serving", in: "This ZooKeeper instance is not currently serving requests\n", bad: true},
		{name: "bad zxid", in: "Zxid: 0xnope\nMode: follower\n", bad: true},
		{name: "empty", in: "", bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseZkSrvr(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestZkConfigBounds(t *testing.T) {
	min, max := ZkSessionBounds(DefaultZkTick)
	if min != time.Second || max != 10*time.Second {
		t.Fatalf("bounds at the default tick: %v..%v, want 1s..10s", min, max)
	}
	if _, err := StartZkEnsemble(context.Background(), ZkOptions{Members: 2}); !IsInputError(err) {
		t.Fatalf("an ensemble of 2: %v, want bad input", err)
	}
}

// TestZkEnsembleLifecycle starts three members, kills the leader and sees
// another elected, restarts the killed member into the ensemble, pauses
// and resumes a member, then stops them all and checks that no process and
// no directory is left.
func TestZkEnsembleLifecycle(t *testing.T) {
	if !ZkInstalled() {
		t.Skip(ErrNoZooKeeper)
	}
	testZkEnsemble(t, 3)
}

// TestZkStandalone starts one member: it reports standalone and leads.
func TestZkStandalone(t *testing.T) {
	if !ZkInstalled() {
		t.Skip(ErrNoZooKeeper)
	}
	testZkEnsemble(t, 1)
}

// TestZkEnsembleOfFive is the largest ensemble: five JVMs take a while to
// start on a small machine, so it runs with the long suites.
func TestZkEnsembleOfFive(t *testing.T) {
	longtest.Skip(t)
	if !ZkInstalled() {
		t.Skip(ErrNoZooKeeper)
	}
	testZkEnsemble(t, 5)
}

func testZkEnsemble(t *testing.T, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := StartZkEnsemble(ctx, ZkOptions{Members: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	if v, err := e.Version(ctx); err != nil || v == "" {
		t.Fatalf("version: %q, %v", v, err)
	}
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pids := e.Processes()
	if len(pids) != n {
		t.Fatalf("%d processes for %d members", len(pids), n)
	}
	if n == 1 {
		if mode, _ := leader.Mode(ctx); mode != ZkModeStandalone {
			t.Fatalf("one member's mode %q, want standalone", mode)
		}
	} else {
		if err := leader.Kill(); err != nil {
			t.Fatal(err)
		}
		// Seconds, on a quiet machine; the bound is for a load of 20.
		next, err := e.WaitLeader(ctx, 2*time.Minute)
		if err != nil {
			t.Fatalf("after the leader's kill: %v", err)
		}
		if next == leader {
			t.Fatalf("member %d still leads after its kill", leader.ID)
		}
		if err := leader.Restart(ctx); err != nil {
			t.Fatalf("restart member %d: %v", leader.ID, err)
		}
		if mode, err := leader.Mode(ctx); err != nil || mode != ZkModeFollower {
			t.Fatalf("restarted member %d: mode %q, %v; want follower", leader.ID, mode, err)
		}
		pids = append(pids, leader.PID())
	}
	m := e.Members()[0]
	if err := m.Pause(); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = m.Mode(short)
	cancelShort()
	if err == nil {
		t.Error("a paused member answered srvr")
	}
	if err := m.Resume(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.WaitLeader(ctx, 2*time.Minute); err != nil {
		t.Fatalf("after resume: %v", err)
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d of the ensemble still runs after Stop", p)
		}
	}
	for _, m := range e.Members() {
		if _, err := os.Stat(m.Dir()); !os.IsNotExist(err) {
			t.Errorf("member %d's directory %s left after Stop (stat: %v)", m.ID, m.Dir(), err)
		}
	}
	if left := ZkLeftovers(os.Getpid()); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
