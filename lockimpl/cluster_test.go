package lockimpl_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// On a Redis Cluster the locks go through one ClusterClient: mutual
// exclusion on one key under contention, the fencing counter in the lock's
// slot (hash tag), WAIT on the key's master, and a killed master's replica
// taking the lock over.
func TestLocksOnCluster(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1}, compose.UpOptions{})
	cc := topo.ClusterClient(compose.ClientOptions{PoolSize: 32})
	ctx := context.Background()
	const key = "lockbench:test:{7}"

	t.Run("mutual exclusion on one key", func(t *testing.T) {
		for _, name := range []string{"single", "fenced"} {
			l, err := lockimpl.New(name, []redis.Cmdable{cc}, lockimpl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var inside, overlaps, acquired, contended atomic.Int64
			var lastFence atomic.Int64
			var wg sync.WaitGroup
			deadline := time.Now().Add(700 * time.Millisecond)
			for range 16 {
				wg.Go(func() {
					for time.Now().Before(deadline) {
						lease, out, err := l.Acquire(ctx, key, time.Second)
						if err != nil {
							t.Errorf("%s acquire: %v", name, err)
							return
						}
						if out != lockimpl.OK {
							contended.Add(1)
							continue
						}
						acquired.Add(1)
						if inside.Add(1) > 1 {
							overlaps.Add(1)
						}
						if name == "fenced" {
							if prev := lastFence.Swap(lease.Fence); lease.Fence <= prev {
								t.Errorf("fence %d after %d", lease.Fence, prev)
							}
						}
						time.Sleep(100 * time.Microsecond)
						inside.Add(-1)
						if out, err := l.Release(ctx, lease); out != lockimpl.OK {
							t.Errorf("%s release: %v %v", name, out, err)
						}
					}
				})
			}
			wg.Wait()
			if overlaps.Load() != 0 || acquired.Load() == 0 || contended.Load() == 0 {
				t.Fatalf("%s: %d overlaps, %d acquired, %d contended; want no overlap under contention",
					name, overlaps.Load(), acquired.Load(), contended.Load())
			}
		}
	})

	t.Run("WAIT on the key's master", func(t *testing.T) {
		l, err := lockimpl.New("single", []redis.Cmdable{cc}, lockimpl.Options{Wait: lockimpl.WaitOptions{Replicas: 1, Timeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"lockbench:test:{1}", "lockbench:test:{2}", "lockbench:test:{3}", "lockbench:test:{4}"} {
			lease, out, err := l.Acquire(ctx, k, time.Minute)
			if out != lockimpl.OK {
				t.Fatalf("acquire %s with WAIT 1: %v %v", k, out, err)
			}
			if _, err := l.Release(ctx, lease); err != nil {
				t.Fatal(err)
			}
		}
		l, _ = lockimpl.New("single", []redis.Cmdable{cc}, lockimpl.Options{Wait: lockimpl.WaitOptions{Replicas: 2, Timeout: 50 * time.Millisecond}})
		if _, out, err := l.Acquire(ctx, key, time.Minute); out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrUnreplicated) {
			t.Fatalf("WAIT 2 with one replica: %v %v, want unreplicated", out, err)
		}
	})

	t.Run("killed master's replica takes the lock over", func(t *testing.T) {
		l := lockimpl.NewFenced(cc)
		shard := -1
		master, err := cc.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range topo.DataNodes() {
			if n.Addr == master.Options().Addr {
				shard = topo.Shard(n)
			}
		}
		before, out, err := l.Acquire(ctx, key, time.Minute)
		if out != lockimpl.OK {
			t.Fatalf("acquire before the kill: %v %v", out, err)
		}
		if _, err := l.Release(ctx, before); err != nil {
			t.Fatal(err)
		}
		// The counter must reach the replica before the kill, or the
		// promoted master would hand out an old token again.
		time.Sleep(200 * time.Millisecond)
		if _, err := topo.Apply(ctx, mustClusterFault(t, "at=0s kill master="+strconv.Itoa(shard))); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		var after lockimpl.Lease
		var lastErr error
		deadline := time.Now().Add(20 * time.Second)
		for {
			actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			after, out, lastErr = l.Acquire(actx, key, time.Minute)
			cancel()
			if out == lockimpl.OK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no acquisition on shard %d 20 s after its master was killed: %v %v", shard, out, lastErr)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("acquired on shard %d again %v after its master was killed", shard, time.Since(killed).Round(time.Millisecond))
		if after.Fence <= before.Fence {
			t.Errorf("fence after failover %d, before %d", after.Fence, before.Fence)
		}
		newMaster, err := topo.ShardMaster(ctx, shard)
		if err != nil || newMaster.Role != compose.RoleReplica {
			t.Errorf("shard %d master now %v, %v; want its old replica", shard, newMaster, err)
		}
	})
}

func mustClusterFault(t *testing.T, s string) compose.FaultSpec {
	t.Helper()
	f, err := compose.ParseFault(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
