package compose_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// TestZkExpireHolder is Curator #727 through the fault: on a real
// zookeeper:1, expire holder ends the holder's session; another client is
// granted the key with a larger czxid while the first still holds its
// lease, and the first learns only afterwards that its lease is gone.
func TestZkExpireHolder(t *testing.T) {
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec, err := compose.ParseSpec("zookeeper:1")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := compose.Up(ctx, spec, compose.UpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := topo.Close(); err != nil {
			t.Error(err)
		}
		if left := compose.ZkLeftovers(os.Getpid()); len(left) > 0 {
			t.Errorf("zookeeper left behind: %v", left)
		}
	}()
	expire, err := compose.ParseFault("at=0s expire holder")
	if err != nil {
		t.Fatal(err)
	}
	// Nobody holds anything yet: refused, not a crash.
	if _, err := topo.Apply(ctx, expire); err == nil {
		t.Fatal("expire holder with no holder: want an error")
	}
	const ttl = 4 * time.Second
	holder := newZkLock(t, ctx, topo, ttl)
	other := newZkLock(t, ctx, topo, ttl)
	key := "lockbench:test:expire"
	a, out, err := holder.Acquire(ctx, key, ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if _, out, err := other.Acquire(ctx, key, ttl); out != lockimpl.Contended || err != nil {
		t.Fatalf("second acquire while held: %v, %v; want contended", out, err)
	}
	if _, err := topo.Apply(ctx, expire); err != nil {
		t.Fatalf("expire holder: %v", err)
	}
	// The node went with the session at once: the other client is granted
	// without waiting out a session timeout (contended answers mean the
	// ensemble has not applied the close yet; retried, not timed).
	var b lockimpl.Lease
	for range 200 {
		b, out, err = other.Acquire(ctx, key, ttl)
		if out != lockimpl.Contended {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after expire holder: %v, %v", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("new holder's czxid %d, expired holder's %d: want larger", b.Fence, a.Fence)
	}
	// The expired holder learns its lease is gone when it next asks.
	for range 200 {
		out, err = holder.Release(ctx, a)
		if out != lockimpl.Failed {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out != lockimpl.Taken {
		t.Fatalf("release of the expired holder's lease: %v, %v; want taken", out, err)
	}
	if out, err := other.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("new holder's release: %v, %v", out, err)
	}
}

func newZkLock(t *testing.T, ctx context.Context, topo *compose.Topology, ttl time.Duration) *lockimpl.Zk {
	t.Helper()
	l, err := lockimpl.NewZk(ctx, lockimpl.ZkOptions{Servers: topo.Addrs(), SessionTimeout: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}
