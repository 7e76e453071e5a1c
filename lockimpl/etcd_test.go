package lockimpl_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// etcdLock starts a one-member etcd for t and returns the lock over it.
func etcdLock(t *testing.T) *lockimpl.Etcd { t.Helper(); return etcdLockOn(t, 1) }

// etcdLockOn is the etcd lock on a local etcd:members.
func etcdLockOn(t *testing.T, members int) *lockimpl.Etcd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topo, err := compose.Up(ctx, compose.Spec{Kind: compose.KindEtcd, Masters: members}, compose.UpOptions{})
	if err != nil {
		t.Fatalf("up etcd:%d: %v", members, err)
	}
	t.Cleanup(func() { _ = topo.Close() })
	c, err := topo.EtcdClient()
	if err != nil {
		t.Fatal(err)
	}
	return lockimpl.NewEtcd(c, members, 0)
}

const etcdTTL = 2 * time.Second // a cluster's minimum with etcd's default timing

func TestEtcdMutualExclusion(t *testing.T) {
	l := etcdLock(t)
	ctx := context.Background()
	var inside, acquired, overlaps atomic.Int64
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				lease, out, err := l.Acquire(ctx, "lockbench:test:mutex", etcdTTL)
				if err != nil {
					t.Errorf("acquire: %v", err)
					return
				}
				if out != lockimpl.OK {
					continue
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				acquired.Add(1)
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
					t.Errorf("release: %v, %v", out, err)
				}
			}
		}()
	}
	wg.Wait()
	if acquired.Load() == 0 || overlaps.Load() != 0 {
		t.Fatalf("acquired %d, overlaps %d; want some and none", acquired.Load(), overlaps.Load())
	}
}

func TestEtcdExpiryLostAndNonOwnerRefused(t *testing.T) {
	l := etcdLock(t)
	ctx := context.Background()
	key := "lockbench:test:expire"
	a, out, err := l.Acquire(ctx, key, etcdTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if _, out, _ := l.Acquire(ctx, key, etcdTTL); out != lockimpl.Contended {
		t.Fatalf("second acquire while held: %v, want contended", out)
	}
	// The server revokes expired leases on its own tick: wait past it.
	var b lockimpl.Lease
	for end := time.Now().Add(10 * time.Second); ; {
		b, out, err = l.Acquire(ctx, key, etcdTTL)
		if out == lockimpl.OK || time.Now().After(end) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after expiry: %v, %v", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d: want larger", b.Fence, a.Fence)
	}
	// a's lease expired and b holds the key: a's release and renew must
	// not touch b's key.
	if out, err := l.Release(ctx, a); out != lockimpl.Taken || err != nil {
		t.Fatalf("non-owner release: %v, %v; want taken", out, err)
	}
	if out, err := l.Renew(ctx, &a, etcdTTL); out != lockimpl.Lost || err != nil {
		t.Fatalf("renew of an expired lease: %v, %v; want lost", out, err)
	}
	if _, out, _ := l.Acquire(ctx, key, etcdTTL); out != lockimpl.Contended {
		t.Fatalf("b's key was deleted by a's release (acquire %v)", out)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("owner release: %v, %v", out, err)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.Lost || err != nil {
		t.Fatalf("second release: %v, %v; want lost", out, err)
	}
	if out, err := l.Release(ctx, lockimpl.Lease{Key: key}); out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrForeignLease) {
		t.Fatalf("foreign lease release: %v, %v", out, err)
	}
}

func TestEtcdRenewExtends(t *testing.T) {
	l := etcdLock(t)
	ctx := context.Background()
	key := "lockbench:test:renew"
	lease, out, err := l.Acquire(ctx, key, etcdTTL)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	first := lease.ValidUntil()
	for range 4 {
		time.Sleep(time.Second)
		if out, err := l.Renew(ctx, &lease, etcdTTL); out != lockimpl.OK || err != nil {
			t.Fatalf("renew: %v, %v", out, err)
		}
	}
	// 4 s after a 2 s lease: still ours only because renewals extended it.
	if !lease.ValidUntil().After(first.Add(3 * time.Second)) {
		t.Fatalf("validity not extended: %v then %v", first, lease.ValidUntil())
	}
	if _, out, _ := l.Acquire(ctx, key, etcdTTL); out != lockimpl.Contended {
		t.Fatalf("renewed key acquired by another: %v", out)
	}
	if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
}

func TestEtcdFencesIncreasePerKey(t *testing.T) {
	l := etcdLock(t)
	ctx := context.Background()
	var last int64
	for i := range 20 {
		key := "lockbench:test:fence"
		if i%2 == 1 {
			// Writes to another key in between move the revision too.
			key = "lockbench:test:other"
		}
		lease, out, err := l.Acquire(ctx, key, etcdTTL)
		if out != lockimpl.OK || err != nil {
			t.Fatalf("acquire %d: %v, %v", i, out, err)
		}
		if i%2 == 0 {
			if lease.Fence <= last {
				t.Fatalf("fence %d after %d", lease.Fence, last)
			}
			last = lease.Fence
		}
		if out, _ := l.Release(ctx, lease); out != lockimpl.OK {
			t.Fatalf("release %d: %v", i, out)
		}
	}
	if !l.Info().Fencing {
		t.Error("etcd lock not reported as fenced")
	}
}

// TestEtcdTTLChecks asks real members for the floor their timing gives
// (lockimpl.EtcdLocalTiming): a cluster raises a 1 s lease, a lone
// member grants it.
func TestEtcdTTLChecks(t *testing.T) {
	ctx := context.Background()
	cluster := etcdLockOn(t, 3)
	for _, tc := range []struct {
		ttl time.Duration
		ok  bool
	}{{2 * time.Second, true}, {5 * time.Second, true}, {time.Second, false}, {1500 * time.Millisecond, false}, {100 * time.Millisecond, false}} {
		err := cluster.CheckTTL(ctx, tc.ttl)
		if (err == nil) != tc.ok {
			t.Errorf("etcd:3: CheckTTL(%v) = %v", tc.ttl, err)
		}
	}
	l := etcdLock(t)
	for _, tc := range []struct {
		ttl time.Duration
		ok  bool
	}{{time.Second, true}, {2 * time.Second, true}, {1500 * time.Millisecond, false}, {100 * time.Millisecond, false}} {
		err := l.CheckTTL(ctx, tc.ttl)
		if (err == nil) != tc.ok {
			t.Errorf("etcd:1: CheckTTL(%v) = %v", tc.ttl, err)
		}
	}
	if _, out, err := l.Acquire(ctx, "lockbench:test:k", 2500*time.Millisecond); out != lockimpl.Failed || err == nil {
		t.Errorf("acquire with a rounded ttl: %v, %v", out, err)
	}
}
