package lockimpl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// natsTTL is the lease of the tests' keys: NATS's shortest (key TTLs count
// in whole seconds), so that expiry tests end soon.
const natsTTL = time.Second

// natsTestTimeout bounds each request of the tests' locks: generous, since
// these tests judge outcomes, not latency.
const natsTestTimeout = 10 * time.Second

// newNatsKV connects to urls for t and returns the lock on bucket, closed
// at cleanup.
func newNatsKV(t testing.TB, urls []string, opts lockimpl.NatsKVOptions) *lockimpl.NatsKV {
	t.Helper()
	js, closeConn, err := lockimpl.NatsJetStream(urls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeConn)
	if opts.Timeout == 0 {
		opts.Timeout = natsTestTimeout
	}
	opts.Nodes = len(urls)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := lockimpl.NewNatsKV(ctx, js, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestNatsKV runs the nats-kv lock's cases against one server, started once.
func TestNatsKV(t *testing.T) {
	c := composetest.NatsCluster(t, 1)
	urls := c.URLs()
	t.Run("MutualExclusion", func(t *testing.T) { testNatsMutualExclusion(t, urls) })
	t.Run("ContendedReleaseAndForeign", func(t *testing.T) { testNatsContended(t, urls) })
	t.Run("RenewExtends", func(t *testing.T) { testNatsRenew(t, urls) })
	t.Run("ExpiryByKeyTTL", func(t *testing.T) { testNatsExpiry(t, urls) })
	t.Run("TTLInWholeSeconds", func(t *testing.T) { testNatsTTLRefused(t, urls) })
	t.Run("DeletePrefix", func(t *testing.T) { testNatsDeletePrefix(t, urls) })
	t.Run("Remaining", func(t *testing.T) { testNatsRemaining(t, urls) })
}

// testNatsRemaining reads a key's remaining TTL as the server keeps it:
// absent before the acquisition, at most the TTL after it (and after a
// renewal, which sets a fresh TTL, not an added one), absent after the
// release (its purge marker is not the key), and absent once the TTL
// passed.
func testNatsRemaining(t *testing.T, urls []string) {
	l := newNatsKV(t, urls, lockimpl.NatsKVOptions{})
	ctx := context.Background()
	const ttl = 3 * time.Second
	key := "lockbench:test:nats-remaining"
	present := func(step string, wantPresent bool, atMost time.Duration) {
		t.Helper()
		left, ok, err := l.Remaining(ctx, key)
		if err != nil || ok != wantPresent || ok && (left <= 0 || left > atMost) {
			t.Fatalf("%s: %v left, present %v, %v; want present %v with at most %v", step, left, ok, err, wantPresent, atMost)
		}
	}
	present("before", false, 0)
	a, out, err := l.Acquire(ctx, key, ttl)
	if out != lockimpl.OK {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	present("acquired", true, ttl)
	if out, err := l.Renew(ctx, &a, ttl); out != lockimpl.OK {
		t.Fatalf("renew: %v, %v", out, err)
	}
	present("renewed", true, ttl)
	if out, err := l.Release(ctx, a); out != lockimpl.OK {
		t.Fatalf("release: %v, %v", out, err)
	}
	present("released", false, 0)
	if _, out, err := l.Acquire(ctx, key, natsTTL); out != lockimpl.OK {
		t.Fatalf("acquire again: %v, %v", out, err)
	}
	time.Sleep(natsTTL + 100*time.Millisecond)
	present("expired", false, 0)
}

func testNatsMutualExclusion(t *testing.T, urls []string) {
	// Two clients.
	exclusionRun(t, []lockimpl.Locker{newNatsKV(t, urls, lockimpl.NatsKVOptions{}), newNatsKV(t, urls, lockimpl.NatsKVOptions{})},
		"lockbench:test:nats-mutex", 5*natsTTL)
}

func testNatsContended(t *testing.T, urls []string) {
	l := newNatsKV(t, urls, lockimpl.NatsKVOptions{})
	ctx := context.Background()
	key := "lockbench:test:nats-contended"
	const ttl = 10 * time.Second // outlives the test: no expiry here
	a, out, err := l.Acquire(ctx, key, ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if a.Fence <= 0 || a.Validity != ttl || len(a.Token) != 32 {
		t.Fatalf("lease %+v: want a fence, the TTL as validity and a 128-bit token", a)
	}
	if _, out, err := l.Acquire(ctx, key, ttl); out != lockimpl.Contended || err != nil {
		t.Fatalf("acquire while held: %v, %v; want contended", out, err)
	}
	if out, err := l.Release(ctx, a); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	b, out, err := l.Acquire(ctx, key, ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after release (over the purge's marker): %v, %v", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d: want larger", b.Fence, a.Fence)
	}
	if out, err := l.Release(ctx, a); out != lockimpl.Taken || err != nil {
		t.Fatalf("release of a released lease while another holds: %v, %v; want taken", out, err)
	}
	if out, err := l.Renew(ctx, &a, ttl); out != lockimpl.Taken || err != nil {
		t.Fatalf("renew of a released lease while another holds: %v, %v; want taken", out, err)
	}
	if _, out, _ := l.Acquire(ctx, key, ttl); out != lockimpl.Contended {
		t.Fatalf("b's key freed by a's release or renew (acquire %v)", out)
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
}

func testNatsRenew(t *testing.T, urls []string) {
	l := newNatsKV(t, urls, lockimpl.NatsKVOptions{})
	ctx := context.Background()
	key := "lockbench:test:nats-renew"
	// 3 s leases renewed every 500 ms for 4 s: only renewals keep the key.
	const ttl = 3 * natsTTL
	lease, out, err := l.Acquire(ctx, key, ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	first, fence := lease.ValidUntil(), lease.Fence
	for range 8 {
		time.Sleep(500 * time.Millisecond)
		if out, err := l.Renew(ctx, &lease, ttl); out != lockimpl.OK || err != nil {
			t.Fatalf("renew: %v, %v", out, err)
		}
	}
	if !lease.ValidUntil().After(first.Add(3 * time.Second)) {
		t.Fatalf("validity not extended: %v then %v", first, lease.ValidUntil())
	}
	if lease.Fence != fence {
		t.Fatalf("renewal changed the fence %d to %d: a holder's token is its acquisition's", fence, lease.Fence)
	}
	if _, out, _ := l.Acquire(ctx, key, ttl); out != lockimpl.Contended {
		t.Fatalf("renewed key acquired by another: %v", out)
	}
	if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release after renewals: %v, %v", out, err)
	}
}

// testNatsExpiry lets a lease run out unrenewed: the server deletes the key
// by its TTL, another holder acquires with a larger fence, and the old
// holder's renewal and release are refused as taken.
func testNatsExpiry(t *testing.T, urls []string) {
	l := newNatsKV(t, urls, lockimpl.NatsKVOptions{})
	ctx := context.Background()
	key := "lockbench:test:nats-expire"
	a, out, err := l.Acquire(ctx, key, natsTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	var b lockimpl.Lease
	b, out, err = acquireRetrying(ctx, l, key, 10*natsTTL, untilOK)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after the TTL: %v, %v", out, err)
	}
	if !time.Now().After(a.ValidUntil()) {
		t.Fatalf("acquired at %v, before the first lease's end %v", time.Now(), a.ValidUntil())
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d: want larger", b.Fence, a.Fence)
	}
	if out, err := l.Renew(ctx, &a, natsTTL); out != lockimpl.Taken || err != nil {
		t.Fatalf("renew of an expired lease: %v, %v; want taken", out, err)
	}
	if out, err := l.Release(ctx, a); out != lockimpl.Taken || err != nil {
		t.Fatalf("release of an expired lease: %v, %v; want taken", out, err)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
}

func testNatsTTLRefused(t *testing.T, urls []string) {
	l := newNatsKV(t, urls, lockimpl.NatsKVOptions{})
	for _, ttl := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 0} {
		if _, out, err := l.Acquire(context.Background(), "lockbench:test:nats-ttl", ttl); out != lockimpl.Failed || err == nil || !strings.Contains(err.Error(), "whole seconds") {
			t.Errorf("ttl %v: %v, %v; want refused", ttl, out, err)
		}
	}
}

func testNatsDeletePrefix(t *testing.T, urls []string) {
	deletePrefixRun(t, newNatsKV(t, urls, lockimpl.NatsKVOptions{}), 30*time.Second)
}

// TestNatsKVStreamLeaderLost kills the leader of the bucket's stream on a
// cluster of three while a key is held: the replicas elect another
// leader, the key is still held, and later holders' fences keep growing.
func TestNatsKVStreamLeaderLost(t *testing.T) {
	c := composetest.NatsCluster(t, 3)
	l := newNatsKV(t, c.URLs(), lockimpl.NatsKVOptions{Replicas: 3, Bucket: "leaderloss"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	key := "lockbench:test:nats-leader"
	const ttl = 30 * time.Second
	a, out, err := l.Acquire(ctx, key, ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	leader, err := c.WaitStreamLeader(ctx, "KV_leaderloss", nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	// An election takes seconds (NATS's raft waits 4 to 9 s before it
	// calls one); the bound is for a machine at a load of 20.
	killed := time.Now()
	if _, err := c.WaitStreamLeader(ctx, "KV_leaderloss", leader, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("a new stream leader after %v", time.Since(killed).Round(time.Millisecond))
	// Until the client finds the new leader, attempts fail; none succeeds.
	_, out, err = acquireRetrying(ctx, l, key, ttl, whileFailed)
	if out != lockimpl.Contended {
		t.Fatalf("acquire of a held key after the leader's loss: %v, %v; want contended", out, err)
	}
	if out, err := l.Release(ctx, a); out != lockimpl.OK || err != nil {
		t.Fatalf("release after the leader's loss: %v, %v", out, err)
	}
	// Create over the release's marker reads the key's last revision, a
	// direct get any replica may answer: one that lags still shows the
	// released key, and the attempt is contended until it catches up.
	var b lockimpl.Lease
	b, out, err = acquireRetrying(ctx, l, key, ttl, untilOK)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after release: %v, %v", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d across a new leader: want larger", b.Fence, a.Fence)
	}
	if err := leader.Restart(ctx); err != nil {
		t.Fatalf("restart %s: %v", leader.Name, err)
	}
	_, _ = l.Release(ctx, b)
	if kind := lockimpl.NatsErrorKind(nats.ErrTimeout); kind != "nats_timeout" {
		t.Errorf("kind of a timeout: %q", kind)
	}
}
