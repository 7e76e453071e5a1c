package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// zkTTL is the session timeout of the tests' locks: long enough that a
// busy machine (the race detector, other packages' tests) does not make
// the client give its connection up (it waits two thirds of it for an
// answer), short enough that a partitioned holder's session expires soon.
const zkTTL = 3 * time.Second

// zkTestTimeout bounds each request of the tests' locks: generous, since
// these tests judge outcomes, not latency.
const zkTestTimeout = 10 * time.Second

// newZk connects a zk lock to addrs for t, closed at cleanup.
func newZk(t testing.TB, addrs []string, opts lockimpl.ZkOptions) *lockimpl.Zk {
	t.Helper()
	opts.Servers = addrs
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = zkTTL
	}
	if opts.Timeout == 0 {
		opts.Timeout = zkTestTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	z, err := lockimpl.NewZk(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Close)
	return z
}

// fencedRegister is a protected resource that enforces fencing tokens
// itself: a write with a token below the largest it has seen is stale and
// refused. Without the check it would accept every write.
type fencedRegister struct {
	mu     sync.Mutex
	max    int64
	fenced bool
}

func (r *fencedRegister) write(fence int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fenced && fence < r.max {
		return false
	}
	r.max = max(r.max, fence)
	return true
}

// TestZk runs the zk lock's cases against one ensemble, started once:
// a JVM's start is the slowest part of the package.
func TestZk(t *testing.T) {
	e := composetest.ZkEnsemble(t, 1)
	addrs := e.Addrs()
	t.Run("MutualExclusion", func(t *testing.T) { testZkMutualExclusion(t, addrs) })
	t.Run("ContendedReleaseAndForeign", func(t *testing.T) { testZkContended(t, addrs) })
	t.Run("RenewConfirmsTheSession", func(t *testing.T) { testZkRenew(t, addrs) })
	t.Run("WaitWatchesThePredecessor", func(t *testing.T) { testZkWait(t, addrs) })
	t.Run("SessionTimeoutClamped", func(t *testing.T) { testZkClamp(t, addrs, e.Tick()) })
	t.Run("SessionExpiryFenced", func(t *testing.T) { testZkSessionExpiry(t, addrs) })
	t.Run("DeletePrefix", func(t *testing.T) { testZkDeletePrefix(t, addrs) })
	t.Run("OrphanNodeDeleted", func(t *testing.T) { testZkOrphan(t, addrs) })
}

// testZkOrphan: a node an attempt left in a key's queue (its create's
// answer lost with the connection, as after a leader's kill) sorts first
// and blocks the key for the session's life; one the lock remembered is
// deleted by the next attempt, which then holds the key.
func testZkOrphan(t *testing.T, addrs []string) {
	l := newZk(t, addrs, lockimpl.ZkOptions{})
	ctx := context.Background()
	for _, tc := range []struct {
		remembered bool
		want       lockimpl.Outcome
	}{{false, lockimpl.Contended}, {true, lockimpl.OK}} {
		key := fmt.Sprintf("lockbench:test:zk-orphan-%v", tc.remembered)
		if err := l.PlantZkNode(ctx, key, tc.remembered); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, out, err := l.Acquire(ctx, key, zkTTL); out != tc.want || err != nil {
				t.Fatalf("remembered %v: acquire %v, %v; want %v", tc.remembered, out, err, tc.want)
			}
			if tc.want == lockimpl.OK {
				break
			}
		}
	}
}

func testZkMutualExclusion(t *testing.T, addrs []string) {
	// Two clients (processes, in Curator's terms), the second with two
	// sessions.
	exclusionRun(t, []lockimpl.Locker{newZk(t, addrs, lockimpl.ZkOptions{}), newZk(t, addrs, lockimpl.ZkOptions{Sessions: 2})},
		"lockbench:test:zk-mutex", zkTTL)
}

func testZkContended(t *testing.T, addrs []string) {
	l := newZk(t, addrs, lockimpl.ZkOptions{})
	ctx := context.Background()
	key := "lockbench:test:zk-contended"
	a, out, err := l.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if a.Fence <= 0 || a.Validity != zkTTL || len(a.Token) != 32 {
		t.Fatalf("lease %+v: want a fence, the session timeout as validity and a 128-bit token", a)
	}
	for range 3 {
		if _, out, err := l.Acquire(ctx, key, zkTTL); out != lockimpl.Contended || err != nil {
			t.Fatalf("acquire while held: %v, %v; want contended", out, err)
		}
	}
	if out, err := l.Release(ctx, a); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	// The contended attempts left no node behind: the key is free.
	b, out, err := l.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after release: %v, %v (a contended attempt's node left in the queue?)", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d: want larger", b.Fence, a.Fence)
	}
	if out, err := l.Release(ctx, a); out != lockimpl.Taken || err != nil {
		t.Fatalf("release of a lease already released while another holds: %v, %v; want taken", out, err)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.Lost || err != nil {
		t.Fatalf("second release: %v, %v; want lost", out, err)
	}
	if out, err := l.Release(ctx, lockimpl.Lease{Key: key}); out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrForeignLease) {
		t.Fatalf("foreign lease release: %v, %v", out, err)
	}
	if _, out, err := l.Acquire(ctx, key, 3*zkTTL); out != lockimpl.Failed || err == nil || !strings.Contains(err.Error(), "session timeout") {
		t.Fatalf("acquire with another ttl: %v, %v; want refused", out, err)
	}
}

func testZkRenew(t *testing.T, addrs []string) {
	l := newZk(t, addrs, lockimpl.ZkOptions{})
	ctx := context.Background()
	key := "lockbench:test:zk-renew"
	lease, out, err := l.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	first := lease.ValidUntil()
	// Two session timeouts: the session lives on the client's pings, and
	// each renewal confirms it and moves the validity on.
	for range 4 {
		time.Sleep(zkTTL / 2)
		if out, err := l.Renew(ctx, &lease, zkTTL); out != lockimpl.OK || err != nil {
			t.Fatalf("renew: %v, %v", out, err)
		}
	}
	if !lease.ValidUntil().After(first.Add(zkTTL)) {
		t.Fatalf("validity not moved on: %v then %v", first, lease.ValidUntil())
	}
	if _, out, _ := l.Acquire(ctx, key, zkTTL); out != lockimpl.Contended {
		t.Fatalf("a renewed key acquired by another: %v", out)
	}
	if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	if out, err := l.Renew(ctx, &lease, zkTTL); out != lockimpl.Lost || err != nil {
		t.Fatalf("renew after release: %v, %v; want lost", out, err)
	}
}

func testZkWait(t *testing.T, addrs []string) {
	holder := newZk(t, addrs, lockimpl.ZkOptions{})
	// Generous: the test judges the order of events, not the time.
	waiter := newZk(t, addrs, lockimpl.ZkOptions{Wait: 30 * time.Second})
	ctx := context.Background()
	key := "lockbench:test:zk-wait"
	a, out, err := holder.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		if out, err := holder.Release(ctx, a); out != lockimpl.OK || err != nil {
			t.Errorf("release: %v, %v", out, err)
		}
		close(released)
	}()
	b, out, err := waiter.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("waiting acquire: %v, %v; want the key once its holder released it", out, err)
	}
	select {
	case <-released:
	default:
		t.Fatal("the waiter acquired before the holder's release returned")
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d: want larger", b.Fence, a.Fence)
	}
	// A waiter whose wait ends first gives up, contended, and leaves no node.
	short := newZk(t, addrs, lockimpl.ZkOptions{Wait: 100 * time.Millisecond})
	if _, out, err := short.Acquire(ctx, key, zkTTL); out != lockimpl.Contended || err != nil {
		t.Fatalf("short wait: %v, %v; want contended", out, err)
	}
	if out, err := waiter.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	c, out, err := short.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after the short waiter gave up: %v, %v", out, err)
	}
	_, _ = short.Release(ctx, c)
}

func testZkClamp(t *testing.T, addrs []string, tick time.Duration) {
	lo, hi := compose.ZkSessionBounds(tick)
	cases := []struct {
		ask, granted time.Duration
	}{
		{lo / 2, lo},
		{lo, lo},
		{3 * lo, 3 * lo},
		{hi, hi},
		{hi * 3, hi},
	}
	for _, c := range cases {
		l := newZk(t, addrs, lockimpl.ZkOptions{SessionTimeout: c.ask})
		req, granted, clamped := l.Clamp()
		if req != c.ask || granted != c.granted || clamped != (c.ask != c.granted) {
			t.Errorf("ask %v: Clamp() = %v, %v, %v; want granted %v", c.ask, req, granted, clamped, c.granted)
		}
		note := l.ClampNote()
		if clamped != (note != "") || clamped && !strings.Contains(note, c.granted.String()) {
			t.Errorf("ask %v: note %q", c.ask, note)
		}
		if s := l.Info().Settings; s["session-timeout"] != c.granted.String() || s["requested-session-timeout"] != c.ask.String() {
			t.Errorf("ask %v: settings %v", c.ask, s)
		}
		// Acquisitions take the --ttl asked for; the lease is the granted
		// one. A session of 1 s may lose its connection on a loaded machine
		// (the client waits two thirds of it for an answer): tried again.
		var lease lockimpl.Lease
		var out lockimpl.Outcome
		var err error
		lease, out, err = acquireRetrying(context.Background(), l, "lockbench:test:zk-clamp", c.ask, whileFailed)
		if out != lockimpl.OK || err != nil || lease.Validity != c.granted {
			t.Errorf("ask %v: acquire %v, %v, validity %v", c.ask, out, err, lease.Validity)
			continue
		}
		_, _ = l.Release(context.Background(), lease)
	}
}

// testZkSessionExpiry is Curator #727's scenario: the holder is cut off
// from the ensemble while it works; the ensemble expires its session and
// deletes its node, another client acquires, and the old holder, not yet
// told, still believes it holds the key. Its write carries the older czxid
// and a fenced resource refuses it; an unfenced one takes both holders'
// writes.
func testZkSessionExpiry(t *testing.T, addrs []string) {
	proxy := composetest.NewCutProxy(t, addrs[0])
	holder := newZk(t, []string{proxy.Addr()}, lockimpl.ZkOptions{})
	other := newZk(t, addrs, lockimpl.ZkOptions{})
	ctx := context.Background()
	key := "lockbench:test:zk-727"
	a, out, err := holder.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	fenced, unfenced := &fencedRegister{fenced: true}, &fencedRegister{}
	if !fenced.write(a.Fence) || !unfenced.write(a.Fence) {
		t.Fatal("the holder's first write refused")
	}
	if _, ended := holder.LeaseEnded(a); ended {
		t.Fatal("a live session's lease reported ended")
	}
	cutAt := time.Now()
	proxy.Cut()
	// The ensemble expires the session one timeout (and a tick) after it
	// last heard from the holder; until then the key is held.
	var b lockimpl.Lease
	b, out, err = acquireRetrying(ctx, other, key, zkTTL, untilOK)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after the holder's session expired: %v, %v", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("new holder's czxid %d, old holder's %d: want larger", b.Fence, a.Fence)
	}
	if !fenced.write(b.Fence) || !unfenced.write(b.Fence) {
		t.Fatal("the new holder's write refused")
	}
	// Two holders now: the old one's stale write.
	if fenced.write(a.Fence) {
		t.Fatal("the fenced resource accepted the stale holder's write (czxid fence failed)")
	}
	if !unfenced.write(a.Fence) {
		t.Fatal("the unfenced resource refused a write: it cannot tell a stale holder")
	}
	proxy.Heal()
	// Back in touch, the client learns its session expired (and starts a
	// new one): the old lease is taken, on renewal and on release.
	out, err = retryOutcome(func() (lockimpl.Outcome, error) { return holder.Renew(ctx, &a, zkTTL) }, whileFailed)
	if out != lockimpl.Taken || err != nil {
		t.Fatalf("renew of the expired session's lease: %v, %v; want taken", out, err)
	}
	if out, err := holder.Release(ctx, a); out != lockimpl.Taken || err != nil {
		t.Fatalf("release of the expired session's lease: %v, %v; want taken", out, err)
	}
	// The lock reports the old session's end, from the client's
	// disconnection: after the cut, before the client learnt it.
	if end, ended := holder.LeaseEnded(a); !ended || end.Before(cutAt) || end.After(time.Now()) {
		t.Fatalf("the expired session's lease: ended %v at %v; want ended between the cut at %v and now", ended, end, cutAt)
	}
	if _, ended := other.LeaseEnded(b); ended {
		t.Fatal("the other client's live lease reported ended")
	}
	if out, err := other.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("the new holder's release: %v, %v", out, err)
	}
	// The old holder's client works on in its new session.
	c, out, err := holder.Acquire(ctx, key, zkTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire in the new session: %v, %v", out, err)
	}
	if c.Fence <= b.Fence {
		t.Fatalf("fence %d after %d: want larger", c.Fence, b.Fence)
	}
	if _, ended := holder.LeaseEnded(c); ended {
		t.Fatal("the new session's lease reported ended with the old session")
	}
	_, _ = holder.Release(ctx, c)
}

func testZkDeletePrefix(t *testing.T, addrs []string) {
	deletePrefixRun(t, newZk(t, addrs, lockimpl.ZkOptions{}), zkTTL)
}

// TestZkLeaderLost kills the ensemble's leader while a key is held: the
// survivors elect another within the session timeout (10 s, the local
// members' largest), the holder's client moves its session to a live
// member, and the key stays held: renewed by its holder, contended for
// others, released by its holder; the next holder's fence is larger.
func TestZkLeaderLost(t *testing.T) {
	e := composetest.ZkEnsemble(t, 3)
	const ttl = 10 * time.Second
	holder := newZk(t, e.Addrs(), lockimpl.ZkOptions{SessionTimeout: ttl})
	other := newZk(t, e.Addrs(), lockimpl.ZkOptions{SessionTimeout: ttl})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	key := "lockbench:test:zk-leader"
	a, out, err := holder.Acquire(ctx, key, ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	// An election takes seconds; the bound is for a machine at a load of 20.
	killed := time.Now()
	if _, err := e.WaitLeader(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("a new leader after %v", time.Since(killed).Round(time.Millisecond))
	// Until the client has moved its session, requests fail; none is lost.
	out, err = retryOutcome(func() (lockimpl.Outcome, error) { return holder.Renew(ctx, &a, ttl) }, whileFailed)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("renew after the leader's loss: %v, %v; want ok (the session outlives an election)", out, err)
	}
	_, out, err = acquireRetrying(ctx, other, key, ttl, whileFailed)
	if out != lockimpl.Contended {
		t.Fatalf("another's acquire of the held key: %v, %v; want contended", out, err)
	}
	if out, err := holder.Release(ctx, a); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	var b lockimpl.Lease
	b, out, err = acquireRetrying(ctx, other, key, ttl, untilOK)
	if out != lockimpl.OK || b.Fence <= a.Fence {
		t.Fatalf("acquire after release: %v, %v, fence %d after %d; want ok and larger", out, err, b.Fence, a.Fence)
	}
	if err := leader.Restart(ctx); err != nil {
		t.Fatalf("restart member %d: %v", leader.ID, err)
	}
	_, _ = other.Release(ctx, b)
}
