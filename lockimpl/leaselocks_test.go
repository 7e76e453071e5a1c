package lockimpl_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// Helpers of the zk and nats-kv tests, which wait for a server's state to
// change (a session to expire, a leader to be elected) by outcomes, never
// by the clock: an operation is repeated while its outcome says to, for up
// to a minute, far more than a loaded machine needs.

// untilOK repeats an operation until it succeeds.
func untilOK(o lockimpl.Outcome) bool { return o != lockimpl.OK }

// whileFailed repeats an operation while it cannot be decided (a client
// reconnecting, a leader being elected).
func whileFailed(o lockimpl.Outcome) bool { return o == lockimpl.Failed }

// retryOutcome runs op every 50 ms while again says so of its outcome, for
// up to a minute, and returns its last answer.
func retryOutcome(op func() (lockimpl.Outcome, error), again func(lockimpl.Outcome) bool) (lockimpl.Outcome, error) {
	for end := time.Now().Add(time.Minute); ; {
		out, err := op()
		if !again(out) || time.Now().After(end) {
			return out, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// acquireRetrying is retryOutcome of l's Acquire, with its lease.
func acquireRetrying(ctx context.Context, l lockimpl.Locker, key string, ttl time.Duration,
	again func(lockimpl.Outcome) bool) (lockimpl.Lease, lockimpl.Outcome, error) {
	var lease lockimpl.Lease
	out, err := retryOutcome(func() (out lockimpl.Outcome, err error) {
		lease, out, err = l.Acquire(ctx, key, ttl)
		return out, err
	}, again)
	return lease, out, err
}

// exclusionRun has 8 workers, spread over locks (clients, in the servers'
// eyes), acquire and release key for 1.5 s, and fails t on an overlap
// inside the critical section, on a fence not larger than the previous
// holder's, or when nobody acquired. Failed attempts (a loaded machine's
// late answers) are counted, not judged: exclusion is.
func exclusionRun(t *testing.T, locks []lockimpl.Locker, key string, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	var inside, acquired, overlaps, fenceBackwards, failed, lastFence atomic.Int64
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for w := range 8 {
		l := locks[w%len(locks)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				lease, out, err := l.Acquire(ctx, key, ttl)
				if err != nil {
					failed.Add(1)
					continue
				}
				if out != lockimpl.OK {
					continue
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				// Holders follow one another, so each fence is larger.
				if lease.Fence <= lastFence.Swap(lease.Fence) {
					fenceBackwards.Add(1)
				}
				acquired.Add(1)
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				if out, err := l.Release(ctx, lease); out != lockimpl.OK && err == nil {
					t.Errorf("release: %v, want ok", out)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Logf("%d attempts failed (a busy machine)", failed.Load())
	}
	if acquired.Load() == 0 || overlaps.Load() != 0 || fenceBackwards.Load() != 0 {
		t.Fatalf("acquired %d, overlaps %d, fences not increasing %d; want some, none, none",
			acquired.Load(), overlaps.Load(), fenceBackwards.Load())
	}
}

// prefixDeleter is a lock that deletes a run's keys by their prefix.
type prefixDeleter interface {
	lockimpl.Locker
	DeletePrefix(ctx context.Context, prefix string) (int64, error)
}

// deletePrefixRun holds keys of two runs, deletes the first run's prefix,
// and checks that its keys are free and the other run's still held. Keys
// hold characters a backend must escape (':', '/', '.').
func deletePrefixRun(t *testing.T, l prefixDeleter, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	for _, k := range []string{"lockbench:run1:a", "lockbench:run1:b/c.d", "lockbench:run2:a"} {
		if _, out, err := l.Acquire(ctx, k, ttl); out != lockimpl.OK || err != nil {
			t.Fatalf("acquire %s: %v, %v", k, out, err)
		}
	}
	n, err := l.DeletePrefix(ctx, "lockbench:run1:")
	if n != 2 || err != nil {
		t.Fatalf("DeletePrefix: %d, %v; want 2", n, err)
	}
	if _, out, _ := l.Acquire(ctx, "lockbench:run1:b/c.d", ttl); out != lockimpl.OK {
		t.Fatalf("a deleted key: %v, want free", out)
	}
	if _, out, _ := l.Acquire(ctx, "lockbench:run2:a", ttl); out != lockimpl.Contended {
		t.Fatalf("another run's key: %v, want still held", out)
	}
}
