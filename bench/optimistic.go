package bench

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// optimisticSection is one request on a lock that takes no lock
// (lockimpl.Optimistic, occ): read the version, work, write by
// compare-and-set. A write that lost the race is a contended attempt, and
// the whole try (read, work, write) is made again as --retry allows. The
// acquisition counted is the try whose write committed, at the moment its
// read ended; there is no critical section to exclude, so no entry or exit
// is recorded.
func (w *worker) optimisticSection(ctx context.Context, wantAt time.Time, m membership) {
	keyIdx := w.wl.Keys.Key(w.id, w.rng)
	key := w.key(keyIdx)
	at := &attempts{w: w, ctx: ctx, m: m, key: keyIdx}
	p := w.opts.Retry
	var deadline time.Time
	if p.Timeout > 0 {
		deadline = time.Now().Add(p.Timeout)
	}
	for k := 0; ; k++ {
		start := time.Now()
		lease, out, err := w.locker.Acquire(ctx, key, w.wl.TTL)
		read := time.Since(start)
		if out == lockimpl.OK {
			var done bool
			out, done = w.optimisticTry(at, lease, keyIdx, wantAt, read)
			if done {
				return
			}
		} else {
			at.observe(lockimpl.Attempt{Latency: read, Outcome: out, Err: err})
		}
		wait := p.Backoff(k, w.rng)
		if p.Kind == lockimpl.RetryNone || ctx.Err() != nil || (!deadline.IsZero() && time.Now().Add(wait).After(deadline)) ||
			!sleepCtx(ctx, wait) {
			if at.lastCounted && ctx.Err() == nil {
				w.rec.count(func(c *counters) { c.Contention.GaveUp++ })
			}
			return
		}
	}
}

// optimisticTry works on what lease read and writes; done is true when the
// try ended the request (written, or cut short), false on a conflict.
func (w *worker) optimisticTry(at *attempts, lease lockimpl.Lease, keyIdx int, wantAt time.Time, read time.Duration) (lockimpl.Outcome, bool) {
	acquiredAt := time.Now()
	// Whether the try counts is decided by its read, as an attempt's is.
	s := section{worker: w, lease: lease, acquiredAt: acquiredAt,
		recorded: at.m == counted || (at.m == closedLoop && w.win.contains(acquiredAt))}
	if s.work(Entry{key: keyIdx}) != workDone {
		at.observeAt(lockimpl.Attempt{Latency: read, Outcome: lockimpl.OK}, acquiredAt)
		s.count(func(c *counters) { c.Counters.Unfinished++ })
		return lockimpl.OK, true
	}
	var verdict WriteVerdict
	s.protected(func(ctx context.Context) (err error) {
		verdict, _, err = s.resource.Write(ctx, Entry{key: keyIdx}, lease, false)
		return err
	})
	if verdict == WriteConflict {
		at.observeAt(lockimpl.Attempt{Latency: read, Outcome: lockimpl.Contended}, acquiredAt)
		return lockimpl.Contended, false
	}
	at.observeAt(lockimpl.Attempt{Latency: read, Outcome: lockimpl.OK}, acquiredAt)
	if s.recorded {
		tta := acquiredAt.Sub(wantAt)
		w.rec.acquired(w.id, acquiredAt, tta)
		w.stats.acquired++
		w.stats.tta.record(toMicros(tta))
	}
	s.count(func(c *counters) {
		c.Counters.Writes++
		c.Counters.Released++
	})
	s.latency(opHold, time.Since(acquiredAt), false)
	return lockimpl.OK, true
}
