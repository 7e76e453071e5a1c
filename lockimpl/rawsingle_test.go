package lockimpl_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/redis/go-redis/v9"
)

// TestSingleRawPath: once the single lock's own connections are open, its
// commands go by hand, with the same typed outcomes as through go-redis
// (acquired, contended, renewed, released, lost), a script resent by EVAL
// after the server lost its cache, counted as sent, and a restart of the
// server failing no command.
func TestSingleRawPath(t *testing.T) {
	servers := composetest.Servers(t, 1)
	clients := composetest.Clients(t, servers)
	sent := lockimpl.NewSentCounter()
	l, err := lockimpl.New("single", lockimpl.Nodes(clients...), lockimpl.Options{Sent: sent})
	if err != nil {
		t.Fatal(err)
	}
	s := l.(*lockimpl.Single)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	warm := func(when string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); s.RawIdle() == 0; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the raw path never opened a connection", when)
			}
			lease, out, err := s.Acquire(ctx, "warm", time.Minute)
			if out != lockimpl.OK {
				t.Fatalf("%s: acquire: %v %v", when, out, err)
			}
			if out, err := s.Release(ctx, lease); out != lockimpl.OK {
				t.Fatalf("%s: release: %v %v", when, out, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	warm("warming up")
	before := sent.Read()
	lease, out, err := s.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK {
		t.Fatalf("acquire: %v %v", out, err)
	}
	if _, out, err := s.Acquire(ctx, "k", time.Minute); out != lockimpl.Contended || err != nil {
		t.Fatalf("second acquire: %v %v, want contended without error", out, err)
	}
	if err := clients[0].ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Renew(ctx, &lease, 2*time.Minute); out != lockimpl.OK {
		t.Fatalf("renew after SCRIPT FLUSH: %v %v", out, err)
	}
	if ttl := clients[0].PTTL(ctx, "k").Val(); ttl < time.Minute {
		t.Fatalf("ttl %v after renewing to 2m", ttl)
	}
	if out, err := s.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release: %v %v", out, err)
	}
	if out, err := s.Release(ctx, lease); out != lockimpl.Lost || err != nil {
		t.Fatalf("second release: %v %v, want lost without error", out, err)
	}
	d := sent.Read().Since(before)
	if d.ByCommand["set"] != 2 || d.ByCommand["evalsha"] != 3 || d.ByCommand["eval"] != 2 {
		t.Fatalf("sent %v: want 2 set, 3 evalsha and the renew and release scripts each resent once by eval after the flush, counted by the raw path", d.ByCommand)
	}
	if err := servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := servers[0].Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The connections the restart closed are found closed before use: the
	// first command after it goes through go-redis, not onto a dead socket.
	lease, out, err = s.Acquire(ctx, "k2", time.Minute)
	if out != lockimpl.OK {
		t.Fatalf("acquire after a restart: %v %v", out, err)
	}
	if out, err := s.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release after a restart: %v %v", out, err)
	}
	warm("after the restart")
}

// TestSingleRawPathWaitsItsTurn: with more callers than the pool's
// connections, a call that finds neither an idle connection of the lock's
// own nor a free slot of its client waits for a connection (in a shallow
// frame, not deep in go-redis's pool) and every acquisition and release
// still succeeds; the lock and its client together keep at most a pool's
// worth each.
func TestSingleRawPathWaitsItsTurn(t *testing.T) {
	server := composetest.Servers(t, 1)[0]
	const pool, callers, rounds = 2, 32, 20
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
		DisableIdentity: true, PoolSize: pool})
	t.Cleanup(func() { _ = client.Close() })
	l, err := lockimpl.New("single", lockimpl.Nodes(client), lockimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := l.(*lockimpl.Single)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	failures := make(chan string, callers*rounds)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for r := range rounds {
				key := fmt.Sprintf("turn:%d:%d", i, r)
				lease, out, err := s.Acquire(ctx, key, time.Minute)
				if out != lockimpl.OK {
					failures <- fmt.Sprintf("acquire %s: %v %v", key, out, err)
					continue
				}
				if out, err := s.Release(ctx, lease); out != lockimpl.OK {
					failures <- fmt.Sprintf("release %s: %v %v", key, out, err)
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if s.RawWaited() == 0 {
		t.Errorf("no call waited for a raw connection with %d callers on a pool of %d: the test did not exercise the wait", callers, pool)
	}
	if idle := s.RawIdle(); idle > pool {
		t.Errorf("%d raw connections idle, more than the pool's %d", idle, pool)
	}
	if total := client.PoolStats().TotalConns; total > pool {
		t.Errorf("the client holds %d connections, more than its pool's %d", total, pool)
	}
}
