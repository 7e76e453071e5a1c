package lockimpl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lockbench/lockbench/lockimpl/clock"
)

// RetryKind names an acquire retry strategy.
type RetryKind string

const (
	// RetryNone makes a single attempt.
	RetryNone RetryKind = "none"
	// RetryFixed waits the same delay between attempts.
	RetryFixed RetryKind = "fixed"
	// RetryExp waits a uniformly random delay in [0, min(cap, base·2^k)]
	// ("full jitter"), so that contenders spread out instead of retrying in step.
	RetryExp RetryKind = "exp"
)

// RetryPolicy says how an acquisition retries after a contended or failed attempt.
type RetryPolicy struct {
	// Kind is the strategy.
	Kind RetryKind
	// Delay is the fixed delay, or the exponential base.
	Delay time.Duration
	// Cap bounds the exponential delay.
	Cap time.Duration
	// Timeout bounds the whole acquisition, attempts and waits together.
	Timeout time.Duration
}

// RetrySpecHelp lists the accepted forms of a retry spec.
const RetrySpecHelp = "none, fixed:DELAY or exp:BASE,CAP (e.g. exp:1ms,100ms)"

// ParseRetry parses a retry spec: none, fixed:D or exp:BASE,CAP.
func ParseRetry(spec string) (RetryPolicy, error) {
	kind, args, _ := strings.Cut(strings.TrimSpace(spec), ":")
	switch RetryKind(kind) {
	case RetryNone:
		if args != "" {
			return RetryPolicy{}, fmt.Errorf("retry %q: none takes no arguments; want %s", spec, RetrySpecHelp)
		}
		return RetryPolicy{Kind: RetryNone}, nil
	case RetryFixed:
		d, err := positiveDuration(args)
		if err != nil {
			return RetryPolicy{}, fmt.Errorf("retry %q: %v; want %s", spec, err, RetrySpecHelp)
		}
		return RetryPolicy{Kind: RetryFixed, Delay: d}, nil
	case RetryExp:
		baseS, capS, ok := strings.Cut(args, ",")
		if !ok {
			return RetryPolicy{}, fmt.Errorf("retry %q: exp needs BASE,CAP; want %s", spec, RetrySpecHelp)
		}
		base, err := positiveDuration(baseS)
		if err != nil {
			return RetryPolicy{}, fmt.Errorf("retry %q: base %v; want %s", spec, err, RetrySpecHelp)
		}
		capD, err := positiveDuration(capS)
		if err != nil {
			return RetryPolicy{}, fmt.Errorf("retry %q: cap %v; want %s", spec, err, RetrySpecHelp)
		}
		if capD < base {
			return RetryPolicy{}, fmt.Errorf("retry %q: cap %v is below base %v; want %s", spec, capD, base, RetrySpecHelp)
		}
		return RetryPolicy{Kind: RetryExp, Delay: base, Cap: capD}, nil
	}
	return RetryPolicy{}, fmt.Errorf("retry %q: unknown strategy; want %s", spec, RetrySpecHelp)
}

func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%v is not positive", d)
	}
	return d, nil
}

// String renders the policy back in spec form.
func (p RetryPolicy) String() string {
	switch p.Kind {
	case RetryFixed:
		return fmt.Sprintf("fixed:%v", p.Delay)
	case RetryExp:
		return fmt.Sprintf("exp:%v,%v", p.Delay, p.Cap)
	}
	return string(RetryNone)
}

// Backoff returns the wait before retry number k (0 for the first retry).
func (p RetryPolicy) Backoff(k int, rng *rand.Rand) time.Duration {
	switch p.Kind {
	case RetryFixed:
		return p.Delay
	case RetryExp:
		ceiling := p.Cap
		if k < 62 && p.Delay<<k > 0 && p.Delay<<k < p.Cap {
			ceiling = p.Delay << k
		}
		return time.Duration(rng.Int64N(int64(ceiling) + 1))
	}
	return 0
}

// Attempt is one acquire attempt as the retry loop saw it.
type Attempt struct {
	// Latency is how long the attempt took.
	Latency time.Duration
	// End is when it returned (zero where the caller did not say), so an
	// observer need not read the clock again.
	End time.Time
	// Outcome is what it returned.
	Outcome Outcome
	// Err is set when Outcome is Failed.
	Err error
}

// Acquisition is the end of a retried acquisition.
type Acquisition struct {
	// Lease is valid when Outcome is OK.
	Lease Lease
	// Outcome is the last attempt's outcome.
	Outcome Outcome
	// Err is the last attempt's error, if it failed.
	Err error
	// Attempts counts every attempt made.
	Attempts int
}

// AcquireWithRetry tries key until it is acquired, the policy gives up, the
// timeout passes or ctx ends. observe sees every attempt, so none goes uncounted.
func AcquireWithRetry(ctx context.Context, l Locker, key string, ttl time.Duration, p RetryPolicy, rng *rand.Rand, observe func(Attempt)) Acquisition {
	var acq Acquisition
	AcquireInto(ctx, l, key, ttl, &p, rng, observe, &acq)
	return acq
}

// AcquireInto is AcquireWithRetry writing its end into acq: a caller that
// holds acq on its own frame passes no Acquisition and no policy by value.
// Its frame stays small too (the attempt is made by attemptOnce, the wait
// by backoff.wait): it sits on every worker's stack while the lock's call
// waits, and 10,000 workers' stacks are most of a run's memory.
func AcquireInto(ctx context.Context, l Locker, key string, ttl time.Duration, p *RetryPolicy, rng *rand.Rand, observe func(Attempt), acq *Acquisition) {
	// The timeout counts from the first attempt's start, which is read for
	// the attempt anyway: an acquisition that succeeds at once (most, and
	// every one of a pipelined run at its limit) reads the clock no more.
	var first time.Time
	var b backoff
	for k := 0; ; k++ {
		start := attemptOnce(ctx, l, key, ttl, observe, acq)
		acq.Attempts = k + 1
		if k == 0 {
			first = start
		}
		if acq.Outcome == OK || p.Kind == RetryNone || ctx.Err() != nil || !b.wait(ctx, p, k, rng, first) {
			b.stop()
			return
		}
	}
}

// attemptOnce makes one attempt at key, shows it to observe (if any), sets
// acq's lease, outcome and error to its own, and returns when it started.
//
//go:noinline
func attemptOnce(ctx context.Context, l Locker, key string, ttl time.Duration, observe func(Attempt), acq *Acquisition) time.Time {
	start := clock.Stamp()
	acq.Lease, acq.Outcome, acq.Err = l.Acquire(ctx, key, ttl)
	if observe != nil {
		end := clock.Stamp()
		observe(Attempt{Latency: end.Sub(start), End: end, Outcome: acq.Outcome, Err: acq.Err})
	}
	return start
}

// backoff waits between the attempts of one acquisition, on one timer.
type backoff struct{ timer *time.Timer }

// wait sleeps for p's backoff after attempt k (counted from 0) of an
// acquisition that began at first; false means stop trying: the wait would
// pass p's timeout, or ctx ended.
//
//go:noinline
func (b *backoff) wait(ctx context.Context, p *RetryPolicy, k int, rng *rand.Rand, first time.Time) bool {
	wait := p.Backoff(k, rng)
	if p.Timeout > 0 && clock.Stamp().Add(wait).After(first.Add(p.Timeout)) {
		return false
	}
	if b.timer == nil {
		b.timer = time.NewTimer(wait)
	} else {
		b.timer.Reset(wait)
	}
	select {
	case <-ctx.Done():
		return false
	case <-b.timer.C:
		return true
	}
}

// stop releases the timer, if one was made.
func (b *backoff) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}
