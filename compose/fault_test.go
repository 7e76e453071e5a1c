package compose_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want compose.FaultSpec
		bad  string // a word the error must contain
	}{
		{in: "at=3s kill primary", want: compose.FaultSpec{At: 3 * time.Second, Kind: compose.FaultKill, Target: compose.TargetPrimary}},
		{in: "at=2s pause node=2 for=1500ms", want: compose.FaultSpec{At: 2 * time.Second, Kind: compose.FaultPause, Target: compose.TargetNode, Node: 2, For: 1500 * time.Millisecond}},
		{in: "at=2s restart node=1", want: compose.FaultSpec{At: 2 * time.Second, Kind: compose.FaultRestart, Target: compose.TargetNode, Node: 1}},
		{in: "at=1s latency node=0 300ms for=2s", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultLatency, Target: compose.TargetNode, Latency: 300 * time.Millisecond, For: 2 * time.Second}},
		{in: "at=1s partition node=3 for=2s", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultPartition, Target: compose.TargetNode, Node: 3, For: 2 * time.Second}},
		{in: "at=2s clock-jump node=2 +9s", want: compose.FaultSpec{At: 2 * time.Second, Kind: compose.FaultClockJump, Target: compose.TargetNode, Node: 2, Jump: 9 * time.Second}},
		{in: "at=2s clock-jump node=2 -2s", want: compose.FaultSpec{At: 2 * time.Second, Kind: compose.FaultClockJump, Target: compose.TargetNode, Node: 2, Jump: -2 * time.Second}},
		{in: "at=2s clock-jump primary 9s for=1s", want: compose.FaultSpec{At: 2 * time.Second, Kind: compose.FaultClockJump, Target: compose.TargetPrimary, Jump: 9 * time.Second, For: time.Second}},
		{in: "at=1s clock-speed node=1 2.0 for=2s", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultClockSpeed, Target: compose.TargetNode, Node: 1, Speed: 2, For: 2 * time.Second}},
		{in: "at=1s lag-replica for=3s", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultLagReplica, Target: compose.TargetReplica, For: 3 * time.Second}},
		{in: "  kill   replica at=0s ", want: compose.FaultSpec{Kind: compose.FaultKill, Target: compose.TargetReplica}},
		{in: "at=1s lag-replica replica for=3s", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultLagReplica, Target: compose.TargetReplica, For: 3 * time.Second}},

		{in: "at=1s isolate leader for=2s", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultIsolate, Target: compose.TargetLeader, For: 2 * time.Second}},
		{in: "at=1s isolate leader", bad: "needs for="},
		{in: "at=1s isolate shard=0 for=1s", bad: "takes master=S or node=N"},
		{in: "at=1s terminate holder", want: compose.FaultSpec{At: time.Second, Kind: compose.FaultTerminate, Target: compose.TargetHolder}},
		{in: "at=1s terminate node=0", bad: "its target is holder"},
		{in: "at=1s terminate holder for=1s", bad: "takes no for="},
		{in: "at=2s expire holder", want: compose.FaultSpec{At: 2 * time.Second, Kind: compose.FaultExpire, Target: compose.TargetHolder}},
		{in: "at=1s expire leader", bad: "its target is holder"},
		{in: "at=1s expire holder for=1s", bad: "takes no for="},
		{in: "", bad: "missing at="},
		{in: "kill primary", bad: "missing at="},
		{in: "at=1s", bad: "missing the fault kind"},
		{in: "at=1s explode primary", bad: `unknown fault "explode"`},
		{in: "at=soon kill primary", bad: "not a duration"},
		{in: "at=-1s kill primary", bad: "negative"},
		{in: "at=1s at=2s kill primary", bad: "twice"},
		{in: "at=1s kill", bad: "needs a target"},
		{in: "at=1s kill primary node=1", bad: "more than one target"},
		{in: "at=1s kill node=-1", bad: "not a data node index"},
		{in: "at=1s kill node=x", bad: "not a data node index"},
		{in: "at=1s kill primary for=2s", bad: "takes no for="},
		{in: "at=1s pause primary", bad: "needs for="},
		{in: "at=1s pause primary for=0s", bad: "must be positive"},
		{in: "at=1s pause primary for=1s extra", bad: `unexpected "extra"`},
		{in: "at=1s latency node=0 for=1s", bad: "needs its amount"},
		{in: "at=1s latency node=0 0ms for=1s", bad: "whole milliseconds"},
		{in: "at=1s latency node=0 1500us for=1s", bad: "whole milliseconds"},
		{in: "at=1s latency node=0 300ms 400ms for=1s", bad: "unexpected"},
		{in: "at=1s clock-jump node=0 0s", bad: "non-zero"},
		{in: "at=1s clock-jump node=0 +25h", bad: "at most"},
		{in: "at=1s clock-speed node=0 fast for=1s", bad: "factor"},
		{in: "at=1s clock-speed node=0 -2 for=1s", bad: "factor"},
		{in: "at=1s clock-speed node=0 NaN for=1s", bad: "factor"},
		{in: "at=1s clock-speed node=0 2", bad: "needs for="},
		{in: "at=1s lag-replica node=1 for=1s", bad: "drop the target"},
		{in: "at=1s lag-replica", bad: "needs for="},
		{in: "at=1s kill primary color=red", bad: `unknown key "color"`},
		{in: "at=25h kill primary", bad: "more than"},
	} {
		got, err := compose.ParseFault(tc.in)
		if tc.bad != "" {
			switch {
			case err == nil:
				t.Errorf("ParseFault(%q) accepted: %+v", tc.in, got)
			case !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "want one of") && !strings.Contains(err.Error(), "lockbench run --help") ||
				strings.Contains(err.Error(), "\n"):
				t.Errorf("ParseFault(%q) error %q: want one line with %q and where the accepted forms are", tc.in, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if again, err := compose.ParseFault(got.String()); err != nil || again != got {
			t.Errorf("ParseFault(%q).String() = %q reads back as %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

// FuzzParseFault checks that no input panics and that every accepted spec
// renders to a string that reads back to the same spec.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{
		"at=3s kill primary", "at=2s pause node=2 for=1500ms", "at=1s latency node=0 300ms for=2s",
		"at=2s clock-jump node=2 -2s", "at=1s clock-speed node=1 2.0 for=2s", "at=1s lag-replica for=3s",
		"at=1s clock-speed node=1 1e-300 for=1s", "node=99999999999999999999", "at==", "= = =",
		"at=1s kill master=2", "at=1s failover shard=0", "at=0s lag-replica shard=1 for=2s", "at=0s lag-replica replica for=1s",
		"at=2s terminate holder", "at=1s kill holder", "at=2s expire holder", "at=1s isolate leader for=2s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := compose.ParseFault(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("multi-line error for %q: %v", s, err)
			}
			return
		}
		again, err := compose.ParseFault(spec.String())
		if err != nil || again != spec {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, spec, spec.String(), again, err)
		}
	})
}

func mustFault(t *testing.T, s string) compose.FaultSpec {
	t.Helper()
	f, err := compose.ParseFault(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// apply applies a fault and returns its undo, failing the test on error.
func apply(t *testing.T, topo *compose.Topology, spec string) func() error {
	t.Helper()
	undo, err := topo.Apply(context.Background(), mustFault(t, spec))
	if err != nil {
		t.Fatalf("apply %q: %v", spec, err)
	}
	return undo
}

// direct is a fresh client straight to addr, closed at cleanup.
func direct(t *testing.T, addr string) *redis.Client {
	t.Helper()
	return composetest.ClientAt(t, addr)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func single(t *testing.T, opts compose.UpOptions) *compose.Topology {
	t.Helper()
	return composetest.Topology(t, compose.Spec{Kind: compose.KindSingle, Masters: 1}, opts)
}

func TestKillAndRestart(t *testing.T) {
	for _, tc := range []struct {
		persistence compose.Persistence
		keeps       bool
	}{{compose.PersistNone, false}, {compose.PersistAOFAlways, true}} {
		t.Run(string(tc.persistence), func(t *testing.T) {
			topo := single(t, compose.UpOptions{Persistence: tc.persistence})
			n := topo.DataNodes()[0]
			c := direct(t, n.Addr)
			if err := c.Set(ctxFor(t, 2*time.Second), "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}

			pid := n.Server.PID()
			if undo := apply(t, topo, "at=0s kill node=0"); undo != nil {
				t.Error("kill returned an undo")
			}
			if composetest.Alive(pid) || n.Server.PID() != 0 {
				t.Fatalf("pid %d still alive after kill", pid)
			}
			if _, err := net.DialTimeout("tcp", n.Addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("dial killed server: %v, want connection refused", err)
			}

			undo := apply(t, topo, "at=0s restart node=0")
			if n.Server.PID() != 0 {
				t.Fatal("restart did not kill the node first")
			}
			if err := undo(); err != nil {
				t.Fatalf("restart's start: %v", err)
			}
			if n.Server.PID() == 0 || n.Server.PID() == pid || n.Addr != n.Server.Addr() {
				t.Fatalf("restart: pid %d (was %d), addr %s", n.Server.PID(), pid, n.Server.Addr())
			}
			if err := c.Ping(ctxFor(t, 2*time.Second)).Err(); err != nil {
				// the old connection died with the process; a second try dials anew
				if err := c.Ping(ctxFor(t, 2*time.Second)).Err(); err != nil {
					t.Fatalf("PING after restart: %v", err)
				}
			}
			got, err := direct(t, n.Addr).Get(ctxFor(t, 2*time.Second), "k").Result()
			switch {
			case tc.keeps && (err != nil || got != "v"):
				t.Fatalf("with %s the key is %q, %v after restart; want v", tc.persistence, got, err)
			case !tc.keeps && !errors.Is(err, redis.Nil):
				t.Fatalf("with %s the key is %q, %v after restart; want it gone", tc.persistence, got, err)
			}
		})
	}
}

// A restart is logged twice: when the node was killed and when it came back.
func TestRestartDelayKeepsNodeDown(t *testing.T) {
	topo := single(t, compose.UpOptions{RestartDelay: 400 * time.Millisecond})
	n := topo.DataNodes()[0]
	events := make(chan compose.FaultEvent, 4)
	start := time.Now()
	stop := topo.Schedule(context.Background(), start, []compose.FaultSpec{mustFault(t, "at=0s restart node=0")},
		func(ev compose.FaultEvent) { events <- ev })
	defer stop()
	killed := <-events
	if killed.Done || killed.Err != nil || !strings.Contains(killed.Node, n.Addr) {
		t.Fatalf("first event %+v: want the kill, naming %s", killed, n.Addr)
	}
	if _, err := net.DialTimeout("tcp", n.Addr, time.Second); err == nil {
		t.Error("node answered during the restart delay")
	}
	back := <-events
	if !back.Done || back.Err != nil || back.End-back.At < 400*time.Millisecond {
		t.Fatalf("second event %+v: want the node back at least the 400ms delay after the kill", back)
	}
	if err := direct(t, n.Addr).Ping(ctxFor(t, 2*time.Second)).Err(); err != nil {
		t.Fatalf("PING after delayed restart: %v", err)
	}
	if down := topo.Down(); len(down) != 0 {
		t.Fatalf("Down() = %v after the restart", down)
	}
}

func TestPause(t *testing.T) {
	topo := single(t, compose.UpOptions{})
	n := topo.DataNodes()[0]
	c := direct(t, n.Addr)
	undo := apply(t, topo, "at=0s pause node=0 for=5s")
	// SIGSTOP is delivered asynchronously; give the kernel a moment.
	waitFor(t, time.Second, "the process to be stopped", func() bool { return composetest.Stopped(n.Server.PID()) })
	err := c.Ping(ctxFor(t, 300*time.Millisecond)).Err()
	if err == nil || !isTimeout(err) {
		t.Fatalf("PING to paused server: %v, want a timeout", err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if err := direct(t, n.Addr).Ping(ctxFor(t, 2*time.Second)).Err(); err != nil {
		t.Fatalf("PING after resume: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// pingTime is the best of three PINGs, to keep scheduler noise out.
func pingTime(t *testing.T, c *redis.Client) time.Duration {
	t.Helper()
	best := time.Hour
	for range 3 {
		start := time.Now()
		if err := c.Ping(ctxFor(t, 5*time.Second)).Err(); err != nil {
			t.Fatalf("PING: %v", err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

func TestLatencyThroughProxy(t *testing.T) {
	topo := single(t, compose.UpOptions{Proxy: true})
	n := topo.DataNodes()[0]
	c := topo.Client(0, compose.ClientOptions{})
	if n.ProxyAddr == "" || c.Options().Addr != n.ProxyAddr || n.ProxyAddr == n.Addr {
		t.Fatalf("client goes to %s; node %s, proxy %q", c.Options().Addr, n.Addr, n.ProxyAddr)
	}
	before := pingTime(t, c)
	const latency = 150 * time.Millisecond
	undo := apply(t, topo, "at=0s latency node=0 150ms for=5s")
	// The delay is a floor under every PING; before's own time is not
	// added, since a loaded machine's best of three varies more than it
	// (152 ms once, against 150 ms + 6.8 ms before).
	if during := pingTime(t, c); during < latency {
		t.Errorf("PING took %s with %s latency (before: %s)", during, latency, before)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if after := pingTime(t, c); after >= latency {
		t.Errorf("PING took %s after the latency was removed", after)
	}
}

func TestPartitionAndReconnect(t *testing.T) {
	topo := single(t, compose.UpOptions{Proxy: true})
	c := topo.Client(0, compose.ClientOptions{PoolSize: 4})
	if err := c.Set(ctxFor(t, 2*time.Second), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	undo := apply(t, topo, "at=0s partition node=0 for=5s")
	for i := range 3 {
		if err := c.Get(ctxFor(t, 2*time.Second), "k").Err(); err == nil {
			t.Fatalf("GET %d through a partition succeeded", i)
		}
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	// The same client, which errored during the partition, works again at once.
	if got, err := c.Get(ctxFor(t, 2*time.Second), "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET after the partition healed: %q, %v", got, err)
	}
}

func TestClockJumpExpiresEarly(t *testing.T) {
	topo := single(t, compose.UpOptions{ClockShim: true})
	n := topo.DataNodes()[0]
	c := direct(t, n.Addr)
	ctx := ctxFor(t, 10*time.Second)
	drift := func() time.Duration {
		tm, err := c.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return time.Until(tm)
	}
	if d := drift(); d.Abs() > time.Second {
		t.Fatalf("shimmed clock off by %s before any jump", d)
	}
	if err := c.Set(ctx, "k", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	apply(t, topo, "at=0s clock-jump node=0 +9s")
	// The shim re-reads its file every 200 ms; 9 s ahead the key has ≤ 1 s left.
	waitFor(t, time.Second, "the +9s jump to show in PTTL", func() bool {
		ttl, err := c.PTTL(ctx, "k").Result()
		return err == nil && ttl > 0 && ttl <= 1100*time.Millisecond
	})
	apply(t, topo, "at=0s clock-jump node=0 +2s")
	waitFor(t, 1500*time.Millisecond, "the key to expire after +11s", func() bool {
		n, err := c.Exists(ctx, "k").Result()
		return err == nil && n == 0
	})
	if real := time.Since(start); real > 5*time.Second {
		t.Errorf("took %s of real time; the jump should expire the key early", real)
	}
	if d := drift(); d < 10*time.Second || d > 12*time.Second {
		t.Errorf("server clock is %s ahead, want about 11s", d)
	}
}

func TestClockSpeed(t *testing.T) {
	topo := single(t, compose.UpOptions{ClockShim: true})
	c := direct(t, topo.DataNodes()[0].Addr)
	ctx := ctxFor(t, 10*time.Second)
	serverNow := func() time.Time {
		tm, err := c.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	undo := apply(t, topo, "at=0s clock-speed node=0 10 for=5s")
	time.Sleep(300 * time.Millisecond) // let the shim pick the speed up
	s0, r0 := serverNow(), time.Now()
	time.Sleep(500 * time.Millisecond)
	s1, r1 := serverNow(), time.Now()
	if ratio := float64(s1.Sub(s0)) / float64(r1.Sub(r0)); ratio < 7 || ratio > 13 {
		t.Errorf("clock ran at %.1f× real time, want about 10×", ratio)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	s0, r0 = serverNow(), time.Now()
	time.Sleep(300 * time.Millisecond)
	s1, r1 = serverNow(), time.Now()
	if ratio := float64(s1.Sub(s0)) / float64(r1.Sub(r0)); ratio < 0.7 || ratio > 1.3 {
		t.Errorf("after the undo the clock runs at %.1f× real time, want 1×", ratio)
	}
	if ahead := time.Until(serverNow()); ahead < 4*time.Second {
		t.Errorf("clock is %s ahead after running 10× for a while; it should keep what it gained", ahead)
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBuildClockShimWithoutCompiler(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := compose.BuildClockShim(t.TempDir()); !errors.Is(err, compose.ErrNoCCompiler) {
		t.Fatalf("BuildClockShim without cc: %v", err)
	}
	_, err := compose.Up(context.Background(), compose.Spec{Kind: compose.KindSingle, Masters: 1}, compose.UpOptions{ClockShim: true})
	if !errors.Is(err, compose.ErrNoCCompiler) {
		t.Fatalf("Up with the clock shim and no cc: %v", err)
	}
}

func TestCheckFault(t *testing.T) {
	srv := composetest.Server(t, compose.ServerOptions{})
	ext := composetest.Topology(t, compose.Spec{Kind: compose.KindSingle, Masters: 1}, compose.UpOptions{URLs: []string{"redis://" + srv.Addr()}})
	extProxied := composetest.Topology(t, compose.Spec{Kind: compose.KindSingle, Masters: 1}, compose.UpOptions{URLs: []string{"redis://" + srv.Addr()}, Proxy: true})
	local := composetest.Topology(t, compose.Spec{Kind: compose.KindRedlock, Masters: 2}, compose.UpOptions{})
	for _, tc := range []struct {
		topo  *compose.Topology
		fault string
		bad   string
	}{
		{ext, "at=1s kill node=0", "external"},
		{ext, "at=1s restart primary", "external"},
		{ext, "at=1s pause node=0 for=1s", "external"},
		{ext, "at=1s clock-jump node=0 +9s", "external"},
		{ext, "at=1s latency node=0 10ms for=1s", "UpOptions.Proxy"},
		{ext, "at=1s partition node=0 for=1s", "UpOptions.Proxy"},
		{ext, "at=1s lag-replica for=1s", "no replica"},
		{ext, "at=1s kill replica", "no replica"},
		{ext, "at=1s kill node=1", "out of range"},
		{extProxied, "at=1s latency node=0 10ms for=1s", ""},
		{extProxied, "at=1s partition primary for=1s", ""},
		{local, "at=1s kill node=1", ""},
		{local, "at=1s kill node=2", "out of range"},
		{local, "at=1s kill primary", "no primary"},
		{local, "at=1s clock-jump node=0 +1s", "clock shim"},
		{local, "at=1s latency node=0 10ms for=1s", "UpOptions.Proxy"},
	} {
		err := tc.topo.CheckFault(mustFault(t, tc.fault))
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: CheckFault(%q) refused: %v", tc.topo.Spec, tc.fault, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s: CheckFault(%q) = %v, want an error about %q", tc.topo.Spec, tc.fault, err, tc.bad)
		}
		if tc.bad != "" {
			if _, aerr := tc.topo.Apply(context.Background(), mustFault(t, tc.fault)); aerr == nil {
				t.Errorf("Apply(%q) went ahead on %s", tc.fault, tc.topo.Spec)
			}
		}
	}
}

func TestSchedule(t *testing.T) {
	topo := single(t, compose.UpOptions{})
	n := topo.DataNodes()[0]
	faults := []compose.FaultSpec{
		mustFault(t, "at=100ms pause node=0 for=300ms"),
		mustFault(t, "at=900ms pause node=0 for=1h"),
		mustFault(t, "at=1h kill node=0"),
	}
	events := make(chan compose.FaultEvent, 16)
	stop := topo.Schedule(context.Background(), time.Now(), faults, func(ev compose.FaultEvent) { events <- ev })

	first := <-events
	if first.Index != 0 || first.Done || first.Err != nil || first.At < 100*time.Millisecond || first.At > time.Second {
		t.Fatalf("first event %+v", first)
	}
	waitFor(t, 200*time.Millisecond, "the server to be stopped by the scheduled pause", func() bool { return composetest.Stopped(n.Server.PID()) })
	end := <-events
	if end.Index != 0 || !end.Done || end.Err != nil || end.End-end.At < 300*time.Millisecond || end.End-end.At > time.Second {
		t.Fatalf("end event %+v", end)
	}
	waitFor(t, time.Second, "the server to run again after the pause", func() bool { return !composetest.Stopped(n.Server.PID()) })
	if ev := <-events; ev.Index != 1 || ev.Done {
		t.Fatalf("second pause event %+v", ev)
	}
	// Stopping undoes the hour-long pause now and skips the kill.
	stop()
	stop() // idempotent
	close(events)
	var sawUndo, sawSkip bool
	for ev := range events {
		switch {
		case ev.Index == 1 && ev.Done && ev.Err == nil && ev.End > 0:
			sawUndo = true
		case ev.Index == 2 && ev.Done && errors.Is(ev.Err, compose.ErrFaultSkipped):
			sawSkip = true
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
	if !sawUndo || !sawSkip {
		t.Errorf("after stop: undo reported %v, skip reported %v", sawUndo, sawSkip)
	}
	if err := direct(t, n.Addr).Ping(ctxFor(t, 2*time.Second)).Err(); err != nil {
		t.Fatalf("server does not answer after stop: %v", err)
	}
}

// TestEveryFaultIsWhole checks each registered fault kind against itself:
// registered once, its form in FaultHelp and starting with its name, a
// sample of its form that parses and reads back, and a kind that takes it
// from some provider.
func TestEveryFaultIsWhole(t *testing.T) {
	samples := strings.NewReplacer("TARGET", "node=0", "DELAY", "5ms", "±DURATION", "+1s", "FACTOR", "2",
		"[shard=S]", "", "[for=DURATION]", "", "shard=S", "shard=0", "for=DURATION", "for=1s")
	seen := map[compose.FaultKind]bool{}
	for _, k := range compose.Faults() {
		info := k.Info()
		if seen[info.Kind] {
			t.Errorf("fault kind %s registered twice", info.Kind)
		}
		seen[info.Kind] = true
		if !strings.HasPrefix(info.Form, string(info.Kind)+" ") || !strings.Contains(compose.FaultHelp(), " "+info.Form+" ") &&
			!strings.Contains(compose.FaultHelp(), " "+info.Form+";") {
			t.Errorf("%s: form %q is not its own or not in FaultHelp %q", info.Kind, info.Form, compose.FaultHelp())
		}
		sample := "at=1s " + samples.Replace(info.Form)
		f, err := compose.ParseFault(sample)
		if err != nil || f.Kind != info.Kind {
			t.Errorf("%s: its form's sample %q: %+v %v", info.Kind, sample, f, err)
		} else if back, err := compose.ParseFault(f.String()); err != nil || back != f {
			t.Errorf("%s: %q does not read back: %+v %v", info.Kind, f.String(), back, err)
		}
		var on []string
		for _, sh := range compose.Shapes() {
			spec, _ := compose.ParseSpec(sh.Info().Sample)
			for p, takes := range spec.Info().Faults {
				if slices.Contains(takes, info.Kind) {
					on = append(on, string(sh.Info().Kind)+" from "+p)
				}
			}
		}
		if len(on) == 0 {
			t.Errorf("%s: no kind takes it from any provider", info.Kind)
		}
	}
}
