package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// worker runs critical sections until the window closes; drainCtx ends
// only on Ctrl-C or when the drain times out. In open loop it takes each
// request's intended start from requests.
func (r *run) worker(drainCtx context.Context, id int, requests <-chan request) {
	w := &worker{run: r, id: id, rec: r.recs[id%len(r.recs)], stats: &r.stats[id], rng: rand.New(rand.NewPCG(r.opts.Seed, uint64(id)+1)),
		releaseCtx: context.WithoutCancel(drainCtx), drainCtx: drainCtx}
	w.keyBuf = append(w.keyBuf, r.opts.KeyPrefix...)
	if requests != nil {
		w.openLoop(requests)
		return
	}
	for r.windowCtx.Err() == nil {
		w.criticalSection(r.windowCtx, time.Now(), closedLoop)
		sleepCtx(r.windowCtx, r.wl.Think.Sample(w.rng))
	}
}

// openLoop serves requests until the schedule ends. A request of the window
// runs to its end even after the window closed, acquisition included, so its
// time to acquire is measured rather than cut short.
func (w *worker) openLoop(requests <-chan request) {
	for {
		var req request
		select {
		case req = <-requests:
		case <-w.windowCtx.Done():
			return
		}
		intended := req.intended
		ofWindow := w.sched.ofWindow(req.index)
		if w.win.closed() {
			// Handed over after the close: a request of the window never
			// started in it; one of the warm-up is not run at all.
			if ofWindow {
				w.rec.dropped(w.win.closeTime().Sub(intended))
			}
			continue
		}
		if !ofWindow {
			// A warm-up request still waiting when the window opened is
			// the warm-up's backlog: dropped with it, not carried over.
			if time.Now().Before(w.win.start) {
				w.criticalSection(w.drainCtx, intended, notCounted)
			}
			continue
		}
		now := time.Now()
		late := now.Sub(intended) > w.opts.LateThreshold
		w.rec.count(func(c *counters) {
			c.Counters.Served++
			if late {
				c.Counters.Late++
			}
		})
		w.criticalSection(w.drainCtx, intended, counted)
	}
}

type worker struct {
	*run
	id     int
	rec    *recorder
	stats  *workerStats
	rng    *rand.Rand
	keyBuf []byte
	// releaseCtx outlives the run's context: the release of a lease taken
	// inside the window finishes even if the run was interrupted, so the run
	// leaves no key behind. Made once, not per release.
	releaseCtx context.Context
	// drainCtx carries a critical section of the window past the window's
	// close; it ends on Ctrl-C.
	drainCtx context.Context
}

// membership says how a critical section's events are counted: by the time
// they happen (closed loop), all of them (an open-loop request of the
// window) or none (a request of the warm-up).
type membership uint8

const (
	closedLoop membership = iota
	counted
	notCounted
)

func (w *worker) key(idx int) string {
	b := w.keyBuf[:len(w.opts.KeyPrefix)]
	if w.opts.HashTag {
		b = append(b, '{')
	}
	b = strconv.AppendInt(b, int64(idx), 10)
	if w.opts.HashTag {
		b = append(b, '}')
	}
	w.keyBuf = b
	return string(b)
}

// attempts records the acquire attempts of one critical section that belong
// to the window. An attempt cut short because the window closed is not a
// failure of the lock.
type attempts struct {
	w   *worker
	ctx context.Context
	m   membership
	// lastCounted says whether the latest attempt was counted: the
	// acquisition it made, if any, belongs to the window just as it does.
	lastCounted bool
}

func (at *attempts) observe(a lockimpl.Attempt) {
	w := at.w
	at.lastCounted = at.m == counted || (at.m == closedLoop && w.win.contains(time.Now()))
	if !at.lastCounted || (a.Outcome == lockimpl.Failed && at.ctx.Err() != nil) {
		return
	}
	w.rec.attempt(a.Latency, a.Outcome)
	if a.Outcome == lockimpl.Failed {
		w.rec.errorKind(lockimpl.ErrorKind(a.Err))
		if errors.Is(a.Err, lockimpl.ErrUnreplicated) {
			w.rec.count(func(c *counters) { c.Counters.Unreplicated++ })
		}
	}
}

// criticalSection is one request: acquire, work, protected write, release.
// ctx bounds the acquisition; once acquired, the section runs on drainCtx.
func (w *worker) criticalSection(ctx context.Context, wantAt time.Time, m membership) {
	keyIdx := w.wl.Keys.Key(w.id, w.rng)
	key := w.key(keyIdx)
	at := &attempts{w: w, ctx: ctx, m: m}
	acq := lockimpl.AcquireWithRetry(ctx, w.locker, key, w.wl.TTL, w.opts.Retry, w.rng, at.observe)
	now := time.Now()
	rec := at.lastCounted
	if acq.Outcome != lockimpl.OK {
		if rec && ctx.Err() == nil {
			w.rec.count(func(c *counters) { c.Contention.GaveUp++ })
		}
		return
	}
	s := section{worker: w, lease: acq.Lease, acquiredAt: now, recorded: rec}
	if rec {
		tta := now.Sub(wantAt)
		w.rec.acquired(now, tta)
		w.stats.acquired++
		w.stats.tta.record(toMicros(tta))
	}
	s.run(keyIdx)
}

// section is one held lease, from acquisition to its end. recorded says
// whether its acquisition belongs to the window; if so every event of it
// does, and it ends in exactly one counted way.
type section struct {
	*worker
	lease      lockimpl.Lease
	acquiredAt time.Time
	recorded   bool
}

func (s *section) count(f func(c *counters)) {
	if s.recorded {
		s.rec.count(f)
	}
}

func (s *section) latency(o op, d time.Duration, failed bool) {
	if s.recorded {
		s.rec.latency(o, d, failed)
	}
}

func (s *section) run(keyIdx int) {
	var entry Entry
	var overlap bool
	var blocked time.Duration
	s.protected(func(ctx context.Context) (err error) {
		entry, overlap, blocked, err = s.resource.Enter(ctx, keyIdx, s.acquiredAt)
		return err
	})
	if overlap {
		s.count(func(c *counters) { c.Incidents.Overlaps++ })
	}
	if blocked > 0 {
		s.latency(opBlocked, blocked, false)
	}
	if s.wl.CrashProb > 0 && s.rng.Float64() < s.wl.CrashProb {
		// A dead client: it leaves the critical section and never releases.
		s.protected(func(ctx context.Context) error { return s.resource.Abandon(ctx, entry, time.Now()) })
		s.count(func(c *counters) { c.Counters.Crashed++ })
		s.stats.abandoned = append(s.stats.abandoned, s.lease)
		return
	}
	switch s.work() {
	case workAborted:
		s.exit(entry)
		s.count(func(c *counters) { c.Incidents.WorkAborted++ })
		return
	case workInterrupted:
		s.exit(entry)
		s.count(func(c *counters) { c.Counters.Unfinished++ })
		s.releaseQuietly()
		return
	}
	s.write(entry)
	s.exit(entry)
	s.latency(opHold, time.Since(s.acquiredAt), false)
	s.release()
}

// exit records the holder leaving the critical section.
func (s *section) exit(e Entry) {
	s.protected(func(ctx context.Context) error { return s.resource.Exit(ctx, e) })
}

// protected makes one call to the protected resource. A shared resource's
// round trips are timed as op resource, apart from the lock's latencies, and
// a failed one is counted as an error of kind resource: its verdict (no
// overlap, write accepted) is then unknown, not safe.
func (s *section) protected(call func(ctx context.Context) error) {
	if !s.resource.Remote() {
		_ = call(s.drainCtx)
		return
	}
	ctx, cancel := context.WithTimeout(s.releaseCtx, 2*time.Second)
	start := time.Now()
	err := call(ctx)
	cancel()
	s.latency(opResource, time.Since(start), false)
	if err != nil && s.recorded {
		s.rec.errorKind("resource")
	}
}

// workEnd is how a holder's work ended.
type workEnd uint8

const (
	workDone workEnd = iota
	// workAborted: a renewal found the lease lost, so the work stopped.
	workAborted
	// workInterrupted: the run was interrupted (Ctrl-C) or its drain timed out.
	workInterrupted
)

// work holds the lock for the sampled hold time, renewing on schedule, then
// stalls if this holder is to pause.
func (s *section) work() workEnd {
	ctx := s.drainCtx
	hold := s.wl.Hold.Sample(s.rng)
	end := s.acquiredAt.Add(hold)
	if s.wl.RenewEvery > 0 {
		for next := s.acquiredAt.Add(s.wl.RenewEvery); next.Before(end); next = next.Add(s.wl.RenewEvery) {
			if !sleepUntil(ctx, next) {
				return workInterrupted
			}
			if !s.renew(ctx) {
				return workAborted
			}
		}
	}
	if !sleepUntil(ctx, end) {
		return workInterrupted
	}
	if s.wl.PauseProb > 0 && s.rng.Float64() < s.wl.PauseProb {
		s.count(func(c *counters) { c.Counters.Paused++ })
		// A stall is real time, blind to the run ending, as a GC stop would be.
		time.Sleep(s.wl.Pause.Sample(s.rng))
	}
	if ctx.Err() != nil {
		return workInterrupted
	}
	return workDone
}

// renew extends the lease; false means the lease is lost and the work must stop.
func (s *section) renew(ctx context.Context) bool {
	start := time.Now()
	out, err := s.locker.Renew(ctx, &s.lease, s.wl.TTL)
	s.latency(opRenew, time.Since(start), out == lockimpl.Failed)
	switch {
	case out == lockimpl.OK:
		s.count(func(c *counters) { c.Counters.Renewed++ })
		return true
	case out.IsLost():
		s.count(func(c *counters) { c.Incidents.RenewLost++ })
		return false
	}
	if ctx.Err() == nil && s.recorded {
		s.rec.errorKind(lockimpl.ErrorKind(err))
	}
	// An undecided renewal keeps working while the lease is still valid.
	return time.Now().Before(s.lease.ValidUntil())
}

// write is the protected write that ends the critical section.
func (s *section) write(entry Entry) {
	now := time.Now()
	expired := now.After(s.lease.ValidUntil())
	var verdict WriteVerdict
	s.protected(func(ctx context.Context) (err error) {
		verdict, err = s.resource.Write(ctx, entry, s.lease.Fence, expired)
		return err
	})
	if expired {
		s.latency(opOverrun, now.Sub(s.lease.ValidUntil()), false)
	}
	s.count(func(c *counters) {
		c.Counters.Writes++
		if expired {
			c.Incidents.ExpiredDuringWork++
		}
		switch verdict {
		case WriteFencingRejected:
			c.Incidents.FencingRejected++
		case WriteStaleAccepted:
			c.Incidents.StaleWritesAccepted++
		}
	})
}

func (s *section) release() {
	start := time.Now()
	out, err := s.locker.Release(s.releaseCtx, s.lease)
	s.latency(opRelease, time.Since(start), out == lockimpl.Failed)
	switch {
	case out == lockimpl.OK:
		s.count(func(c *counters) { c.Counters.Released++ })
	case out.IsLost():
		s.count(func(c *counters) { c.Incidents.ReleaseLost++ })
	case s.recorded:
		s.rec.errorKind(lockimpl.ErrorKind(err))
	}
}

// releaseQuietly gives a lease back when the run ends mid-work, unrecorded.
func (s *section) releaseQuietly() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = s.locker.Release(ctx, s.lease)
}
