package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// newLock builds a lock over fresh servers. Redlock gets a per-node timeout
// that a loaded CI machine running -race can meet; the default (ttl/100) is
// tested on its own. A name ending in pipeSuffix is that lock over a pipe
// (--pipeline auto), closed with the test.
func newLock(t *testing.T, name string, masters int) (lockimpl.Locker, []*redis.Client) {
	t.Helper()
	clients := composetest.Clients(t, composetest.Servers(t, masters))
	opts := lockimpl.Options{Redlock: lockimpl.RedlockOptions{NodeTimeout: 250 * time.Millisecond}}
	if base, ok := strings.CutSuffix(name, pipeSuffix); ok {
		name, opts.Pipe = base, &lockimpl.PipeOptions{}
	}
	l, err := lockimpl.New(name, lockimpl.Nodes(clients...), opts)
	if err != nil {
		t.Fatalf("new %s: %v", name, err)
	}
	if c, ok := l.(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return l, clients
}

// pipeSuffix marks a lock name in these tests as the lock over a pipe.
const pipeSuffix = "+pipe"

// TestMutualExclusion hammers one key from many goroutines and checks, in
// process, that no two are ever inside the critical section at once.
func TestMutualExclusion(t *testing.T) {
	for _, tc := range []struct {
		lock    string
		masters int
	}{{"single", 1}, {"fenced", 1}, {"redlock", 1}, {"redlock", 5}, {"single" + pipeSuffix, 1}, {"fenced" + pipeSuffix, 1}} {
		t.Run(tc.lock+"/"+string(rune('0'+tc.masters)), func(t *testing.T) {
			l, _ := newLock(t, tc.lock, tc.masters)
			ctx := context.Background()
			// Jittered backoff: with several masters, contenders retrying in step
			// split the votes and nobody reaches a quorum.
			policy := lockimpl.RetryPolicy{Kind: lockimpl.RetryExp, Delay: time.Millisecond, Cap: 20 * time.Millisecond, Timeout: 30 * time.Second}
			var inside, maxInside, acquired atomic.Int64
			var lastFence atomic.Int64
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(1, uint64(w)))
					for range 40 {
						acq := lockimpl.AcquireWithRetry(ctx, l, "mutex", 10*time.Second, policy, rng, nil)
						if acq.Outcome != lockimpl.OK {
							t.Errorf("acquire: %v %v", acq.Outcome, acq.Err)
							return
						}
						// A CAS loop: a plain load-then-store could overwrite
						// a 2 with a 1 and hide the very overlap looked for.
						for n := inside.Add(1); ; {
							m := maxInside.Load()
							if n <= m || maxInside.CompareAndSwap(m, n) {
								break
							}
						}
						if acq.Lease.Fence > 0 && acq.Lease.Fence <= lastFence.Load() {
							t.Errorf("fence %d not above previous %d", acq.Lease.Fence, lastFence.Load())
						}
						lastFence.Store(acq.Lease.Fence)
						time.Sleep(50 * time.Microsecond)
						inside.Add(-1)
						acquired.Add(1)
						if out, err := l.Release(ctx, acq.Lease); out != lockimpl.OK {
							t.Errorf("release: %v %v", out, err)
						}
					}
				}()
			}
			wg.Wait()
			if maxInside.Load() != 1 {
				t.Fatalf("%d holders inside at once", maxInside.Load())
			}
			if acquired.Load() != 16*40 {
				t.Fatalf("acquired %d, want %d", acquired.Load(), 16*40)
			}
		})
	}
}

func TestOwnershipChecks(t *testing.T) {
	for _, name := range []string{"single", "fenced", "naive", "redlock", "single" + pipeSuffix, "fenced" + pipeSuffix} {
		t.Run(name, func(t *testing.T) {
			l, clients := newLock(t, name, 1)
			ctx := context.Background()
			lease, out, err := l.Acquire(ctx, "k", time.Minute)
			if out != lockimpl.OK {
				t.Fatalf("acquire: %v %v", out, err)
			}
			if _, out, _ := l.Acquire(ctx, "k", time.Minute); out != lockimpl.Contended {
				t.Fatalf("second acquire: %v, want contended", out)
			}
			stranger := lease
			stranger.Token = lockimpl.NewToken()
			if out, _ := l.Release(ctx, stranger); out != lockimpl.Taken {
				t.Errorf("release by non-owner: %v, want taken", out)
			}
			if out, _ := l.Renew(ctx, &stranger, time.Minute); out != lockimpl.Taken {
				t.Errorf("renew by non-owner: %v, want taken", out)
			}
			if v := clients[0].Get(ctx, "k").Val(); v != lease.Token {
				t.Fatalf("owner's key changed to %q by a non-owner", v)
			}
			before := lease.ValidUntil()
			time.Sleep(2 * time.Millisecond)
			if out, err := l.Renew(ctx, &lease, time.Minute); out != lockimpl.OK || !lease.ValidUntil().After(before) {
				t.Errorf("renew by owner: %v %v, valid until %v (was %v)", out, err, lease.ValidUntil(), before)
			}
			if out, _ := l.Release(ctx, lease); out != lockimpl.OK {
				t.Errorf("release by owner: %v", out)
			}
			if n := clients[0].Exists(ctx, "k").Val(); n != 0 {
				t.Errorf("key still there after release")
			}
		})
	}
}

func TestReleaseAfterExpiry(t *testing.T) {
	for _, name := range []string{"single", "fenced", "naive", "redlock", "single" + pipeSuffix, "fenced" + pipeSuffix} {
		t.Run(name, func(t *testing.T) {
			l, clients := newLock(t, name, 1)
			ctx := context.Background()
			a, out, err := l.Acquire(ctx, "k", 300*time.Millisecond)
			if out != lockimpl.OK {
				t.Fatalf("acquire: %v %v", out, err)
			}
			time.Sleep(400 * time.Millisecond)
			if out, _ := l.Release(ctx, a); out != lockimpl.Lost {
				t.Fatalf("release after expiry: %v, want lost", out)
			}
			a2, _, _ := l.Acquire(ctx, "k", 300*time.Millisecond)
			time.Sleep(400 * time.Millisecond)
			b, out, _ := l.Acquire(ctx, "k", time.Minute)
			if out != lockimpl.OK {
				t.Fatalf("B acquire: %v", out)
			}
			if out, _ := l.Release(ctx, a2); out != lockimpl.Taken {
				t.Fatalf("release of a key now held by another: %v, want taken", out)
			}
			if out, _ := l.Renew(ctx, &a2, time.Minute); out != lockimpl.Taken {
				t.Fatalf("renew of a key now held by another: %v, want taken", out)
			}
			if v := clients[0].Get(ctx, "k").Val(); v != b.Token {
				t.Fatalf("the other holder's lock was touched: %q", v)
			}
		})
	}
}

func TestRetryStrategies(t *testing.T) {
	l, _ := newLock(t, "single", 1)
	ctx := context.Background()
	if _, out, _ := l.Acquire(ctx, "busy", time.Minute); out != lockimpl.OK {
		t.Fatal("setup acquire failed")
	}
	for _, tc := range []struct {
		spec        string
		timeout     time.Duration
		minAttempts int
		maxAttempts int
		maxDuration time.Duration
	}{
		{"none", time.Second, 1, 1, 500 * time.Millisecond},
		// At least two attempts: it retried. A loaded machine stretches each
		// wait, so the upper bound (no faster than the delay) is the sharp one.
		{"fixed:20ms", 200 * time.Millisecond, 2, 11, 2 * time.Second},
		{"exp:1ms,20ms", 200 * time.Millisecond, 2, 400, 2 * time.Second},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			p, err := lockimpl.ParseRetry(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			p.Timeout = tc.timeout
			observed := 0
			start := time.Now()
			acq := lockimpl.AcquireWithRetry(ctx, l, "busy", time.Minute, p, rand.New(rand.NewPCG(1, 1)), func(a lockimpl.Attempt) {
				observed++
				if a.Outcome != lockimpl.Contended {
					t.Errorf("attempt outcome %v, want contended", a.Outcome)
				}
			})
			elapsed := time.Since(start)
			if acq.Outcome != lockimpl.Contended {
				t.Fatalf("outcome %v, want contended", acq.Outcome)
			}
			if observed != acq.Attempts {
				t.Fatalf("observed %d attempts, acquisition says %d: every attempt must be seen", observed, acq.Attempts)
			}
			if acq.Attempts < tc.minAttempts || acq.Attempts > tc.maxAttempts {
				t.Fatalf("%d attempts, want %d..%d", acq.Attempts, tc.minAttempts, tc.maxAttempts)
			}
			if p.Kind != lockimpl.RetryNone && elapsed > tc.timeout+tc.maxDuration {
				t.Fatalf("took %v, acquire timeout %v not respected", elapsed, tc.timeout)
			}
		})
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	l, _ := newLock(t, "single", 1)
	if _, out, _ := l.Acquire(context.Background(), "busy", time.Minute); out != lockimpl.OK {
		t.Fatal("setup acquire failed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p := lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: time.Hour}
	done := make(chan lockimpl.Acquisition)
	go func() {
		done <- lockimpl.AcquireWithRetry(ctx, l, "busy", time.Minute, p, rand.New(rand.NewPCG(1, 1)), nil)
	}()
	select {
	case acq := <-done:
		if acq.Outcome == lockimpl.OK {
			t.Fatal("acquired a held key")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("retry loop ignored context cancellation")
	}
}

func TestFencedTokensIncrease(t *testing.T) {
	for _, name := range []string{"fenced", "fenced" + pipeSuffix} {
		t.Run(name, func(t *testing.T) { fencesIncrease(t, name) })
	}
}

// fencesIncrease checks that each acquisition of one key by lock name
// carries a higher fence than the last.
func fencesIncrease(t *testing.T, name string) {
	l, _ := newLock(t, name, 1)
	ctx := context.Background()
	var last int64
	for range 20 {
		lease, out, err := l.Acquire(ctx, "f", time.Minute)
		if out != lockimpl.OK {
			t.Fatalf("acquire: %v %v", out, err)
		}
		if lease.Fence <= last {
			t.Fatalf("fence %d after %d", lease.Fence, last)
		}
		last = lease.Fence
		if out, _ := l.Release(ctx, lease); out != lockimpl.OK {
			t.Fatalf("release: %v", out)
		}
	}
}

func TestTokensAreUniqueAnd128Bit(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := lockimpl.NewToken()
		if len(tok) != 32 {
			t.Fatalf("token %q is not 128 bits of hex", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q repeated", tok)
		}
		seen[tok] = true
	}
}

func TestNewRefusesBadCombinations(t *testing.T) {
	clients := []*redis.Client{redis.NewClient(&redis.Options{}), redis.NewClient(&redis.Options{})}
	for _, name := range []string{"single", "fenced", "naive"} {
		if _, err := lockimpl.New(name, lockimpl.Nodes(clients...), lockimpl.Options{}); err == nil {
			t.Errorf("%s on two masters accepted", name)
		}
	}
	if _, err := lockimpl.New("bogus", lockimpl.Nodes(clients[:1]...), lockimpl.Options{}); err == nil {
		t.Error("unknown lock accepted")
	}
	if _, err := lockimpl.New("redlock", nil, lockimpl.Options{}); err == nil {
		t.Error("redlock without masters accepted")
	}
	piped := lockimpl.Options{Pipe: &lockimpl.PipeOptions{}}
	if _, err := lockimpl.New("naive", lockimpl.Nodes(clients[:1]...), piped); err == nil {
		t.Error("naive over a pipe accepted")
	}
	piped.Wait = lockimpl.WaitOptions{Replicas: 1, Timeout: time.Second}
	if _, err := lockimpl.New("single", lockimpl.Nodes(clients[:1]...), piped); err == nil {
		t.Error("single over a pipe with --wait-replicas accepted")
	}
}

// TestErrorKindByBackend: ErrorKind reaches each backend's classifier
// through the lock side's backend registry, wrapped errors included; an
// error none knows falls back to the Redis and connection kinds.
func TestErrorKindByBackend(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("acquire: %w", rpctypes.ErrNoLeader), "no_leader"},
		{fmt.Errorf("acquire: %w", rpctypes.ErrGRPCNoLeader), "unavailable"},
		{fmt.Errorf("acquire: %w", &pgconn.PgError{Code: "57P01"}), "admin_shutdown"},
		{fmt.Errorf("acquire: %w", zk.ErrSessionExpired), "zk_session_expired"},
		{fmt.Errorf("acquire: %w", nats.ErrTimeout), "nats_timeout"},
		{fmt.Errorf("acquire: %w", io.EOF), "eof"},
	} {
		if got := lockimpl.ErrorKind(tc.err); got != tc.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{lockimpl.ErrNoQuorum, "no_quorum"},
		{lockimpl.ErrSplitVote, "split_vote"},
		{fmt.Errorf("redlock acquire k: %w", lockimpl.ErrSplitVote), "split_vote"},
		{context.DeadlineExceeded, "timeout"},
		{errors.Join(errors.New("x"), lockimpl.ErrValidityExpired), "validity_expired"},
		{errors.New("mystery"), "other"},
		{lockimpl.ErrUnreplicated, "unreplicated"},
		{context.Canceled, "canceled"},
		{syscall.ECONNREFUSED, "conn_refused"},
		{syscall.ECONNRESET, "conn_reset"},
		{io.EOF, "eof"},
		{redis.ErrClosed, "client_closed"},
		{redisReply("READONLY You can't write against a read only replica."), "readonly"},
	} {
		got := lockimpl.ErrorKind(tc.err)
		if got != tc.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
		// --assert errors.KIND refuses kinds it does not know: every kind
		// lockbench reports must be in the results' list.
		if !slices.Contains(results.ErrorKinds(), got) {
			t.Errorf("kind %q is not in results.ErrorKinds", got)
		}
	}
}

// redisReply is an error reply as go-redis returns it.
type redisReply string

func (e redisReply) Error() string { return string(e) }
func (e redisReply) RedisError()   {}
