package lockimpl_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// ctxPeers are the peer libraries whose lock is a context the library
// extends itself: rueidislock and valkeylock.
var ctxPeers = []struct{ lock, module string }{
	{lockimpl.LockRueidislock, lockimpl.RueidislockModule},
	{lockimpl.LockValkeylock, lockimpl.ValkeylockModule},
}

// newCtxPeer builds lock over a fresh redis-server; the lock is closed
// when the test ends.
func newCtxPeer(t *testing.T, lock string) (lockimpl.Locker, *redis.Client) {
	t.Helper()
	clients := composetest.Clients(t, composetest.Servers(t, 1))
	l, err := lockimpl.New(lock, lockimpl.Nodes(clients...), lockimpl.Options{})
	if err != nil {
		t.Fatalf("new %s: %v", lock, err)
	}
	t.Cleanup(func() { _ = l.(interface{ Close() error }).Close() })
	return l, clients[0]
}

// keysUnder lists the server's keys that start with prefix, and all keys.
func keysUnder(t *testing.T, c *redis.Client, prefix string) (under, all []string) {
	t.Helper()
	all, err := c.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if strings.HasPrefix(k, prefix) {
			under = append(under, k)
		}
	}
	return under, all
}

// TestCtxPeerContention: a held key is Contended (not an error) for
// another attempt, free again once released; the library's keys are under
// the run's prefix (so the run's cleanup reaches them) and gone after the
// release; a second release is Lost.
func TestCtxPeerContention(t *testing.T) {
	for _, p := range ctxPeers {
		t.Run(p.lock, func(t *testing.T) {
			l, c := newCtxPeer(t, p.lock)
			ctx := context.Background()
			const key = "lbtest:run1:k:7"
			a, out, err := l.Acquire(ctx, key, 2*time.Second)
			if out != lockimpl.OK || err != nil || a.Token == "" || a.Validity != 2*time.Second {
				t.Fatalf("first acquire: %v %v %+v", out, err, a)
			}
			if _, out, err := l.Acquire(ctx, key, 2*time.Second); out != lockimpl.Contended || err != nil {
				t.Fatalf("second acquire of a held key: %v %v, want contended", out, err)
			}
			under, all := keysUnder(t, c, "lbtest:run1:")
			if len(under) == 0 || len(under) != len(all) {
				t.Errorf("keys %v: want the library's keys, all under the run's prefix", all)
			}
			if out, err := l.Release(ctx, a); out != lockimpl.OK || err != nil {
				t.Fatalf("release: %v %v", out, err)
			}
			if out, err := l.Release(ctx, a); out != lockimpl.Lost || err != nil {
				t.Errorf("second release: %v %v, want lost", out, err)
			}
			if _, all := keysUnder(t, c, ""); len(all) != 0 {
				t.Errorf("keys after the release: %v", all)
			}
			b, out, err := l.Acquire(ctx, key, 2*time.Second)
			if out != lockimpl.OK || err != nil {
				t.Fatalf("acquire after the release: %v %v", out, err)
			}
			if b.Token == a.Token {
				t.Errorf("two leases with one token %s", a.Token)
			}
			if _, ok := l.(lockimpl.SessionLocker).LeaseEnded(b); ok {
				t.Errorf("a held lease reported ended")
			}
			if out, err := l.Renew(ctx, &b, time.Second); out != lockimpl.Failed || err == nil {
				t.Errorf("renew: %v %v, want refused (the library extends by itself)", out, err)
			}
			if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
				t.Errorf("release: %v %v", out, err)
			}
		})
	}
}

// TestCtxPeerOutlivesTTL: the library extends its keys itself, so a lease
// held for three TTLs is still held (another attempt is contended).
func TestCtxPeerOutlivesTTL(t *testing.T) {
	for _, p := range ctxPeers {
		t.Run(p.lock, func(t *testing.T) {
			l, _ := newCtxPeer(t, p.lock)
			ctx := context.Background()
			const ttl = 400 * time.Millisecond
			a, out, err := l.Acquire(ctx, "lbtest:run2:k:1", ttl)
			if out != lockimpl.OK || err != nil {
				t.Fatalf("acquire: %v %v", out, err)
			}
			time.Sleep(3 * ttl)
			if _, out, err := l.Acquire(ctx, "lbtest:run2:k:1", ttl); out != lockimpl.Contended || err != nil {
				t.Errorf("after 3 TTLs: %v %v, want contended (extended by the library)", out, err)
			}
			if end, ok := l.(lockimpl.SessionLocker).LeaseEnded(a); ok {
				t.Errorf("lease ended at %v while the library extends it", end)
			}
			if out, err := l.Release(ctx, a); out != lockimpl.OK || err != nil {
				t.Errorf("release: %v %v", out, err)
			}
		})
	}
}

// TestCtxPeerLeaseEnded: keys deleted behind the holder's back (as a
// server restarted empty would) end the lease when the library next
// extends: LeaseEnded reports it, the release is Lost, and the key can be
// taken again.
func TestCtxPeerLeaseEnded(t *testing.T) {
	for _, p := range ctxPeers {
		t.Run(p.lock, func(t *testing.T) {
			l, c := newCtxPeer(t, p.lock)
			ctx := context.Background()
			const key, ttl = "lbtest:run3:k:1", 400 * time.Millisecond
			a, out, err := l.Acquire(ctx, key, ttl)
			if out != lockimpl.OK || err != nil {
				t.Fatalf("acquire: %v %v", out, err)
			}
			under, _ := keysUnder(t, c, "lbtest:run3:")
			deleted := time.Now()
			if err := c.Del(ctx, under...).Err(); err != nil {
				t.Fatal(err)
			}
			var end time.Time
			ended := false
			for deadline := time.Now().Add(20 * ttl); !ended && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				end, ended = l.(lockimpl.SessionLocker).LeaseEnded(a)
			}
			if !ended || end.Before(deleted) {
				t.Fatalf("lease ended %v at %v (keys deleted at %v): want an end after the deletion", ended, end, deleted)
			}
			if out, err := l.Release(ctx, a); out != lockimpl.Lost || err != nil {
				t.Errorf("release of an ended lease: %v %v, want lost", out, err)
			}
			b, out, err := l.Acquire(ctx, key, ttl)
			if out != lockimpl.OK || err != nil {
				t.Fatalf("acquire after the end: %v %v", out, err)
			}
			_, _ = l.Release(ctx, b)
		})
	}
}

// TestCtxPeerMutualExclusion: 8 goroutines on one key, retrying, never
// two inside.
func TestCtxPeerMutualExclusion(t *testing.T) {
	for _, p := range ctxPeers {
		t.Run(p.lock, func(t *testing.T) {
			l, _ := newCtxPeer(t, p.lock)
			ctx := context.Background()
			var inside, maxInside, acquired atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
						lease, out, err := l.Acquire(ctx, "lbtest:run4:k:1", 5*time.Second)
						if err != nil || out != lockimpl.OK {
							time.Sleep(time.Millisecond)
							continue
						}
						n := inside.Add(1)
						for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
						}
						time.Sleep(time.Millisecond)
						inside.Add(-1)
						acquired.Add(1)
						if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
							t.Errorf("release: %v %v", out, err)
						}
					}
				})
			}
			wg.Wait()
			if maxInside.Load() != 1 || acquired.Load() == 0 {
				t.Errorf("at most %d inside at once over %d acquisitions: want 1, and some", maxInside.Load(), acquired.Load())
			}
		})
	}
}

// TestCtxPeerInfoAndTopologies: the library and its version linked into
// the binary are named; several masters are refused, naming the lock.
func TestCtxPeerInfoAndTopologies(t *testing.T) {
	for _, p := range ctxPeers {
		t.Run(p.lock, func(t *testing.T) {
			l, _ := newCtxPeer(t, p.lock)
			if in := l.Info(); in.Name != p.lock || in.Library != p.module || in.Version == "" || in.Nodes != 1 {
				t.Errorf("info %+v", in)
			}
			d, ok := lockimpl.Describe(p.lock)
			if !ok || !d.Peer || !d.Lease || d.Renewable || d.Backend != lockimpl.BackendRedis {
				t.Errorf("descriptor %+v", d)
			}
			clients := composetest.Clients(t, composetest.Servers(t, 2))
			if _, err := lockimpl.New(p.lock, lockimpl.Nodes(clients...), lockimpl.Options{}); err == nil || !strings.Contains(err.Error(), p.lock) {
				t.Errorf("two masters: %v, want a refusal naming %s", err, p.lock)
			}
		})
	}
}
