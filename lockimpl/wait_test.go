package lockimpl_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// TestWaitReplicas: single and fenced with WAIT 1 give back a lock no
// replica acknowledged, and grant one the replica holds (fenced with its
// token, and the fence counter replicated too).
func TestWaitReplicas(t *testing.T) {
	for _, lock := range []string{lockimpl.LockSingle, lockimpl.LockFenced} {
		t.Run(lock, func(t *testing.T) { waitReplicas(t, lock) })
	}
}

func waitReplicas(t *testing.T, lock string) {
	primary := composetest.Server(t, compose.ServerOptions{Args: []string{"--repl-diskless-sync-delay", "0"}})
	pc := composetest.Client(t, primary)
	ctx := context.Background()
	opts := lockimpl.Options{Wait: lockimpl.WaitOptions{Replicas: 1, Timeout: 100 * time.Millisecond}}
	l, err := lockimpl.New(lock, []redis.Cmdable{pc}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// No replica: the SET lands but is never acknowledged, so it is given back.
	_, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrUnreplicated) {
		t.Fatalf("acquire without replicas: %v %v, want failed/unreplicated", out, err)
	}
	if pc.Exists(ctx, "k").Val() != 0 {
		t.Fatal("unreplicated lock left on the primary")
	}
	replica := composetest.Server(t, compose.ServerOptions{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port())}})
	rc := composetest.Client(t, replica)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(pc.Info(ctx, "replication").Val(), "state=online") {
		if time.Now().After(deadline) {
			t.Fatal("replica never connected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// WAIT returns as soon as the replica acknowledges: a long timeout costs
	// a healthy run nothing and keeps a loaded machine from failing the test.
	opts.Wait.Timeout = 5 * time.Second
	l, err = lockimpl.New(lock, []redis.Cmdable{pc}, opts)
	if err != nil {
		t.Fatal(err)
	}
	lease, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK {
		t.Fatalf("acquire with a replica: %v %v", out, err)
	}
	if v := rc.Get(ctx, "k").Val(); v != lease.Token {
		t.Fatalf("replica has %q, want the token: WAIT returned before replication", v)
	}
	if lock != lockimpl.LockFenced {
		return
	}
	if fence, err := rc.Get(ctx, lockimpl.FenceKey("k")).Int64(); err != nil || lease.Fence == 0 || fence != lease.Fence {
		t.Fatalf("fenced lease token %d, replica's fence counter %d (%v): want the same, replicated before the grant", lease.Fence, fence, err)
	}
	if _, out, _ := l.Acquire(ctx, "k", time.Minute); out != lockimpl.Contended {
		t.Fatalf("second fenced acquire with WAIT: %v, want contended", out)
	}
}
