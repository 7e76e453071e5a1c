package lockimpl_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// newPipelined is the single lock (or fenced) over a pipe to c's server,
// closed with the test.
func newPipelined(t *testing.T, c *redis.Client, fenced bool, opts lockimpl.PipeOptions) *lockimpl.Pipelined {
	t.Helper()
	l := lockimpl.NewPipelined(c, fenced, opts)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// pairs acquires and releases n keys of prefix at once, each from a
// goroutine of its own so that they share batches, and returns the error of
// the first that did not succeed.
func pairs(l lockimpl.Locker, prefix string, n int) error {
	ctx := context.Background()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := prefix + strconv.Itoa(i)
			lease, out, err := l.Acquire(ctx, key, time.Minute)
			if out != lockimpl.OK {
				errs <- errors.Join(errors.New("acquire "+key+": "+out.String()), err)
				return
			}
			if out, err := l.Release(ctx, lease); out != lockimpl.OK {
				errs <- errors.Join(errors.New("release "+key+": "+out.String()), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// TestPipeRunsScriptsAfterAFlush: a server that lost its script cache (a
// restart without persistence) answers EVALSHA with NOSCRIPT; the pipe
// sends the source by EVAL on the same connection, and the fenced acquire,
// the renewal and the release still act.
func TestPipeRunsScriptsAfterAFlush(t *testing.T) {
	c := composetest.Clients(t, composetest.Servers(t, 1))[0]
	l := newPipelined(t, c, true, lockimpl.PipeOptions{})
	ctx := context.Background()
	flush := func() {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	lease, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK || lease.Fence != 1 {
		t.Fatalf("fenced acquire after SCRIPT FLUSH: %v %v (fence %d), want ok with fence 1", out, err, lease.Fence)
	}
	flush()
	if out, err := l.Renew(ctx, &lease, 2*time.Minute); out != lockimpl.OK {
		t.Fatalf("renew after SCRIPT FLUSH: %v %v", out, err)
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl < time.Minute {
		t.Errorf("ttl %v after renewing to 2m", ttl)
	}
	flush()
	if out, err := l.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release after SCRIPT FLUSH: %v %v", out, err)
	}
	if n := c.Exists(ctx, "k").Val(); n != 0 {
		t.Fatal("the key is still there after its release")
	}
}

// TestPipeErrorsPerCommand: a command the server refuses (a release of a
// key that holds a hash: WRONGTYPE) fails alone, with the server's error
// and its own kind, while the commands batched beside it succeed; and a
// contended acquire is contention, not an error.
func TestPipeErrorsPerCommand(t *testing.T) {
	c := composetest.Clients(t, composetest.Servers(t, 1))[0]
	l := newPipelined(t, c, false, lockimpl.PipeOptions{Conns: 1})
	ctx := context.Background()
	if err := c.HSet(ctx, "hash", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "held", "someone", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				out, err := l.Release(ctx, lockimpl.Lease{Key: "hash", Token: "t"})
				if out != lockimpl.Failed || lockimpl.ErrorKind(err) != "wrongtype" {
					t.Errorf("release of a hash: %v %v (kind %s), want failed with wrongtype", out, err, lockimpl.ErrorKind(err))
				}
			case 1:
				_, out, err := l.Acquire(ctx, "held", time.Minute)
				if out != lockimpl.Contended || err != nil {
					t.Errorf("acquire of a held key: %v %v, want contended without an error", out, err)
				}
			default:
				if err := pairs(l, "ok"+strconv.Itoa(i)+":", 1); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// TestPipeSurvivesARestart: while its server is down every command fails
// with a connection error (never contention), and once it is back the pipe
// dials again and every pair succeeds.
func TestPipeSurvivesARestart(t *testing.T) {
	server := composetest.Servers(t, 1)[0]
	c := composetest.Client(t, server)
	l := newPipelined(t, c, false, lockimpl.PipeOptions{})
	if err := pairs(l, "before:", 20); err != nil {
		t.Fatal(err)
	}
	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	_, out, err := l.Acquire(context.Background(), "down", time.Minute)
	if out != lockimpl.Failed || err == nil {
		t.Fatalf("acquire with the server down: %v %v, want failed with an error", out, err)
	}
	if err := server.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A connection the kill closed may fail one more batch before the
	// pipe notices; the pipe must recover within a few.
	var last error
	for range 5 {
		if last = pairs(l, "after:", 20); last == nil {
			return
		}
	}
	t.Fatalf("after a restart: %v", last)
}

// TestPipeEndsAtTheCallersDeadline: a paused server does not hold a caller
// past its own deadline, and the command counts as a timeout.
func TestPipeEndsAtTheCallersDeadline(t *testing.T) {
	server := composetest.Servers(t, 1)[0]
	l := newPipelined(t, composetest.Client(t, server), false, lockimpl.PipeOptions{})
	if err := pairs(l, "warm:", 4); err != nil {
		t.Fatal(err)
	}
	pausedMaster(t, server)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.Failed || lockimpl.ErrorKind(err) != "timeout" {
		t.Fatalf("acquire on a paused server: %v %v (kind %s), want failed with a timeout", out, err, lockimpl.ErrorKind(err))
	}
}

// TestPipeClosed: a lock whose pipe was closed fails its commands with
// ErrPipeClosed, and closing twice is harmless.
func TestPipeClosed(t *testing.T) {
	l := newPipelined(t, composetest.Clients(t, composetest.Servers(t, 1))[0], false, lockimpl.PipeOptions{})
	if err := pairs(l, "k", 4); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	_ = l.Close()
	if _, out, err := l.Acquire(context.Background(), "k", time.Minute); out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrPipeClosed) {
		t.Fatalf("acquire after close: %v %v, want failed with %v", out, err, lockimpl.ErrPipeClosed)
	}
}

// TestPipeCountsWhatItSends: the sent counter sees every command by name
// (the first releases find no script cached and go again by EVAL), and a
// batch as one round trip, so round trips never exceed commands.
func TestPipeCountsWhatItSends(t *testing.T) {
	sent := lockimpl.NewSentCounter()
	l := newPipelined(t, composetest.Clients(t, composetest.Servers(t, 1))[0], false, lockimpl.PipeOptions{Sent: sent})
	if err := pairs(l, "k", 64); err != nil {
		t.Fatal(err)
	}
	got := sent.Read()
	by := got.ByCommand
	if by["set"] != 64 || by["evalsha"] != 64 || by["eval"] > 64 || got.Commands != 128+by["eval"] {
		t.Fatalf("sent %+v, want 64 SETs, 64 EVALSHAs and an EVAL for each NOSCRIPT", got)
	}
	if got.RoundTrips < 1 || got.RoundTrips > got.Commands {
		t.Fatalf("%d round trips for %d commands", got.RoundTrips, got.Commands)
	}
}

// TestPipeAuthenticatesAndSelects: the pipe's connections are dialled with
// the client's credentials and database, and a wrong password fails each
// command with the server's refusal, not as contention.
func TestPipeAuthenticatesAndSelects(t *testing.T) {
	s := composetest.Server(t, compose.ServerOptions{Args: []string{"--requirepass", "s3cret"}})
	connect := func(password string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: password, DB: 3, MaxRetries: -1, DialTimeout: time.Second})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c := connect("s3cret")
	l := newPipelined(t, c, false, lockimpl.PipeOptions{})
	ctx := context.Background()
	lease, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK {
		t.Fatalf("acquire: %v %v", out, err)
	}
	if got := c.Get(ctx, "k").Val(); got != lease.Token {
		t.Fatalf("database 3 holds %q, want the lease's token", got)
	}
	wrong := newPipelined(t, connect("wrong"), false, lockimpl.PipeOptions{})
	_, out, err = wrong.Acquire(ctx, "k2", time.Minute)
	if out != lockimpl.Failed || err == nil {
		t.Fatalf("acquire with a wrong password: %v %v, want failed with an error", out, err)
	}
}

// TestPipeLeaseStartsAtItsBatch: a pipelined lease (and a renewal's) starts
// when its batch was written: after the call began and before it returned,
// so its validity never runs past the server's TTL; tokens are 32 hex digits.
func TestPipeLeaseStartsAtItsBatch(t *testing.T) {
	c := composetest.Clients(t, composetest.Servers(t, 1))[0]
	ctx := context.Background()
	for _, fenced := range []bool{false, true} {
		l := newPipelined(t, c, fenced, lockimpl.PipeOptions{})
		before := time.Now()
		lease, out, err := l.Acquire(ctx, "start:"+strconv.FormatBool(fenced), time.Minute)
		after := time.Now()
		if out != lockimpl.OK || err != nil {
			t.Fatalf("fenced=%v: acquire %v %v", fenced, out, err)
		}
		if lease.Start.Before(before) || lease.Start.After(after) || len(lease.Token) != 32 {
			t.Errorf("fenced=%v: lease start %v not within the call [%v, %v], or token %q not 32 hex digits", fenced, lease.Start, before, after, lease.Token)
		}
		before = time.Now()
		if out, err := l.Renew(ctx, &lease, time.Minute); out != lockimpl.OK || err != nil {
			t.Fatalf("fenced=%v: renew %v %v", fenced, out, err)
		}
		if after = time.Now(); lease.Start.Before(before) || lease.Start.After(after) {
			t.Errorf("fenced=%v: renewed lease start %v not within the call [%v, %v]", fenced, lease.Start, before, after)
		}
	}
}
