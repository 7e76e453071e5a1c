package lockimpl_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// cycles acquires and releases key n times, failing t on any that does not
// succeed; when says under what conditions.
func cycles(t *testing.T, rl *lockimpl.Redlock, key string, n int, when string) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		lease, out, err := rl.Acquire(ctx, key, time.Minute)
		if out != lockimpl.OK {
			t.Fatalf("acquire %d %s: %v %v", i, when, out, err)
		}
		if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
			t.Fatalf("release %d %s: %v %v", i, when, out, err)
		}
	}
}

// warmRaw cycles the lock until its fan-outs go the raw way (the raw pools
// fill in the background), so a test exercises that path.
func warmRaw(t *testing.T, rl *lockimpl.Redlock) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		before := rl.RawCalls()
		cycles(t, rl, "warm", 1, "warming up")
		if rl.RawCalls() == before+2 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the raw fan-out never took over from the goroutine one")
}

// TestRedlockRawFanOutRunsScriptsAfterAFlush: a master that lost its script
// cache (a restart without persistence) answers EVALSHA with NOSCRIPT; the
// raw fan-out sends the script's source on the same connection and the
// release and renewal still act.
func TestRedlockRawFanOutRunsScriptsAfterAFlush(t *testing.T) {
	clients := composetest.Clients(t, composetest.Servers(t, 3))
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: time.Second})
	warmRaw(t, rl)
	raw := rl.RawCalls()
	ctx := context.Background()
	lease, out, err := rl.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK {
		t.Fatalf("acquire: %v %v", out, err)
	}
	flush := func() {
		for _, c := range clients {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush()
	if out, err := rl.Renew(ctx, &lease, 2*time.Minute); out != lockimpl.OK {
		t.Fatalf("renew after SCRIPT FLUSH: %v %v", out, err)
	}
	for i, c := range clients {
		if ttl := c.PTTL(ctx, "k").Val(); ttl < time.Minute {
			t.Errorf("master %d: ttl %v after renewing to 2m", i, ttl)
		}
	}
	flush()
	if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release after SCRIPT FLUSH: %v %v", out, err)
	}
	if n := keysLeft(t, clients, []bool{true, true, true}, "k"); n != 0 {
		t.Fatalf("%d masters still hold the key", n)
	}
	if got := rl.RawCalls() - raw; got != 3 {
		t.Fatalf("%d of 3 fan-outs went the raw way", got)
	}
}

// TestRedlockRawFanOutAuthenticatesAndSelects: the raw connections are
// dialled with the clients' credentials and database, and a wrong password is
// an error kind of its own, not contention.
func TestRedlockRawFanOutAuthenticatesAndSelects(t *testing.T) {
	var servers []*compose.Server
	for range 3 {
		servers = append(servers, composetest.Server(t, compose.ServerOptions{Args: []string{"--requirepass", "s3cret"}}))
	}
	connect := func(password string) []*redis.Client {
		var out []*redis.Client
		for _, s := range servers {
			c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: password, DB: 3, MaxRetries: -1, DialTimeout: time.Second})
			t.Cleanup(func() { _ = c.Close() })
			out = append(out, c)
		}
		return out
	}
	clients := connect("s3cret")
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: time.Second})
	warmRaw(t, rl)
	ctx := context.Background()
	lease, out, err := rl.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK {
		t.Fatalf("acquire: %v %v", out, err)
	}
	for i, c := range clients {
		if got := c.Get(ctx, "k").Val(); got != lease.Token {
			t.Errorf("master %d: database 3 holds %q, want the lease's token", i, got)
		}
	}
	if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release: %v %v", out, err)
	}

	// A wrong password never gets a raw connection into the pool (its
	// handshake is refused at dial), so the acquire goes the goroutine way.
	wrong := newRedlock(t, connect("wrong"), lockimpl.RedlockOptions{NodeTimeout: time.Second})
	_, out, err = wrong.Acquire(ctx, "k2", time.Minute)
	if wrong.RawCalls() != 0 {
		t.Fatal("a connection whose AUTH was refused was used for a raw fan-out")
	}
	if out != lockimpl.Failed || lockimpl.ErrorKind(err) != "no_quorum" {
		t.Fatalf("acquire with a wrong password: %v %v (kind %s), want a failed, no-quorum acquire", out, err, lockimpl.ErrorKind(err))
	}
	for i, c := range wrong.NodeCounts() {
		if c.Errors != 1 || c.Acquired+c.Contended != 0 {
			t.Errorf("master %d counts %+v, want one error", i, c)
		}
	}
}

// TestRedlockRawFanOutTimesOutAPausedMajority: with most masters paused an
// acquire ends at the node timeout as a failure, each paused master counted
// as a timeout, and no key is left once they resume.
func TestRedlockRawFanOutTimesOutAPausedMajority(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := composetest.Clients(t, servers)
	// The paused masters never answer, whatever the timeout: 500 ms, not
	// 30, so that the warm-up's and the running master's answers come
	// within it on a loaded machine (at 30 ms all three once timed out).
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	// Warm raw connections, so the paused masters' SETs are written on them.
	warmRaw(t, rl)
	raw := rl.RawCalls()
	resume1, resume2 := pausedMaster(t, servers[1]), pausedMaster(t, servers[2])
	_, out, err := rl.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.Failed {
		t.Fatalf("acquire with two of three masters paused: %v %v, want failed", out, err)
	}
	if rl.RawCalls() == raw {
		t.Fatal("the acquire did not go the raw way")
	}
	counts := rl.NodeCounts()
	if counts[1].Timeouts != 1 || counts[2].Timeouts != 1 || counts[0].Acquired < 2 {
		t.Fatalf("node counts %+v: want the paused masters' SETs counted as timeouts", counts)
	}
	resume1()
	resume2()
	rl.Wait()
	if n := keysLeft(t, clients, []bool{true, true, true}, "k"); n != 0 {
		t.Fatalf("%d masters hold the key after the failed acquire settled", n)
	}
}

// TestRedlockSlowDialHoldsUpNoOtherMaster: a master whose connections take
// the whole node timeout to open (a full accept queue, a blackholed host, a
// slow TLS handshake) must not keep the others from being asked: the
// acquire still reaches a quorum of the rest, every time, and the other
// masters see no failure.
func TestRedlockSlowDialHoldsUpNoOtherMaster(t *testing.T) {
	servers := composetest.Servers(t, 5)
	var clients []*redis.Client
	for i, s := range servers {
		o := &redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true,
			DisableIdentity: true, PoolSize: 8}
		if i == 1 {
			// As net.Dialer fails a connect that never completes.
			o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
				<-ctx.Done()
				return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
			}
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		clients = append(clients, c)
	}
	// Master 1's dial takes the whole node timeout (its dial timeout is
	// as long); the others answer within it even on a loaded machine (at
	// 50 ms, under load, too few of them did for a quorum).
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 200 * time.Millisecond})
	cycles(t, rl, "k", 10, "with master 1 never connecting")
	for i, c := range rl.NodeCounts() {
		if i != 1 && (c.Errors+c.Timeouts != 0 || c.Acquired != 10) {
			t.Errorf("master %d: %+v, want 10 acquired and nothing failed", i, c)
		}
	}
}

// TestRedlockRawFanOutSurvivesARestart: idle raw connections to a master
// that restarted are closed; the next acquire must not fail on them.
func TestRedlockRawFanOutSurvivesARestart(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := composetest.Clients(t, servers)
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: time.Second})
	warmRaw(t, rl)
	if err := servers[2].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := servers[2].Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	cycles(t, rl, "k", 5, "after a restart")
	if c := rl.NodeCounts()[2]; c.Errors+c.Timeouts != 0 {
		t.Fatalf("restarted master: %+v, want no failure (its old connections were closed, not used)", c)
	}
}
