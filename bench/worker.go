package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/clock"
	"github.com/lockbench/lockbench/workloads"
)

// worker runs critical sections until the window closes; drainCtx ends
// only on Ctrl-C or when the drain times out. In open loop it takes each
// request's intended start from requests.
func (r *run) worker(drainCtx context.Context, id int, requests <-chan request) {
	// The lock's calls carry the worker: a lock that keeps a process per
	// worker (a driver) serves each from its own.
	drainCtx = lockimpl.WithWorker(drainCtx, id)
	w := &worker{run: r, id: id, rec: r.recs[id%len(r.recs)], stats: &r.stats[id], rng: rand.New(rand.NewPCG(r.opts.Seed, uint64(id)+1)),
		releaseCtx: context.WithoutCancel(drainCtx), drainCtx: drainCtx, windowCtx: lockimpl.WithWorker(r.windowCtx, id)}
	defer w.settleLeaseEnd()
	w.keyBuf = append(w.keyBuf, r.opts.KeyPrefix...)
	if r.opts.History != nil {
		w.hist = r.opts.History.Buffer(id)
	}
	if requests != nil {
		w.openLoop(requests)
		return
	}
	for w.windowCtx.Err() == nil {
		w.criticalSection(w.windowCtx, clock.Stamp(), closedLoop)
		sleepCtx(w.windowCtx, r.wl.Think.Sample(w.rng))
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
			if clock.Stamp().Before(w.win.start) {
				w.criticalSection(w.drainCtx, intended, notCounted)
			}
			continue
		}
		now := clock.Stamp()
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
	// lastKey is the name of key lastKeyIdx ("" before the first).
	lastKeyIdx int
	lastKey    string
	// hist receives the worker's events when the run keeps a history; nil
	// when it does not.
	hist *history.Buffer
	// releaseCtx outlives the run's context: the release of a lease taken
	// inside the window finishes even if the run was interrupted, so the run
	// leaves no key behind. Made once, not per release.
	releaseCtx context.Context
	// drainCtx carries a critical section of the window past the window's
	// close; it ends on Ctrl-C.
	drainCtx context.Context
	// windowCtx is the run's window, marked with the worker.
	windowCtx context.Context
	// written is the worker's last written lease whose end a session lock
	// may still report (see settleLeaseEnd); nil for any other lock.
	written *writtenLease
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

// key is key idx's name. The last one is kept: a worker that comes back to
// its key (keys unique, few keys) makes no new string. Not inlined, so its
// buffers stay off the frame that waits for the lock.
//
//go:noinline
func (w *worker) key(idx int) string {
	if idx == w.lastKeyIdx && w.lastKey != "" {
		return w.lastKey
	}
	b := w.keyBuf[:len(w.opts.KeyPrefix)]
	if w.opts.HashTag {
		b = append(b, '{')
	}
	b = strconv.AppendInt(b, int64(idx), 10)
	if w.opts.HashTag {
		b = append(b, '}')
	}
	w.keyBuf = b
	w.lastKeyIdx, w.lastKey = idx, string(b)
	return w.lastKey
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
	// key is the key's index and lastCall when the latest attempt began,
	// for the history.
	key      int
	lastCall time.Time
	// lastEnd is when the latest attempt returned, where known (zero
	// otherwise): the acquisition's time, without another clock read.
	lastEnd time.Time
}

func (at *attempts) observe(a lockimpl.Attempt) {
	// The attempt's call time is its end less its latency: the lock's-calls
	// rule compares it, whatever the loop, so the end is read when the lock
	// did not give it.
	now := a.End
	if now.IsZero() {
		now = clock.Stamp()
	}
	at.observeAt(a, now)
}

// observeAt records an attempt that ended at now (an optimistic try ends at
// its read, though its outcome is known only at its write).
func (at *attempts) observeAt(a lockimpl.Attempt, now time.Time) {
	w := at.w
	at.lastEnd = now
	at.lastCounted = at.m == counted || (at.m == closedLoop && w.win.contains(now))
	counts := at.lastCounted && !(a.Outcome == lockimpl.Failed && at.ctx.Err() != nil)
	at.lastCall = now.Add(-a.Latency)
	if w.hist != nil && a.Outcome != lockimpl.OK {
		// An acquired lease goes in with its token once the acquisition returns.
		w.hist.Add(history.Event{Key: at.key, Op: history.OpAcquire, Out: historyOutcome(a.Outcome), Window: counts,
			Call: w.hist.Since(at.lastCall), Return: w.hist.Since(now), Err: errKind(a)})
	}
	if !counts {
		return
	}
	w.rec.attempt(a.Latency, a.Outcome)
	if a.Outcome == lockimpl.Failed {
		w.rec.acquireErrorKind(lockimpl.ErrorKind(a.Err))
		if errors.Is(a.Err, lockimpl.ErrUnreplicated) {
			w.rec.count(func(c *counters) { c.Counters.Unreplicated++ })
		}
	}
}

// criticalSection is one request: acquire, work, protected write, release.
// ctx bounds the acquisition; once acquired, the section runs on drainCtx.
//
// Its frame is kept small, and what follows an acquisition is a call of its
// own (holdAcquired): this frame sits on every worker's stack while the
// lock's call waits, and at 10,000 workers the stacks are most of a run's
// memory (a path deeper than a 4 KB stack doubles it).
func (w *worker) criticalSection(ctx context.Context, wantAt time.Time, m membership) {
	w.settleLeaseEnd()
	if w.optimistic {
		w.optimisticSection(ctx, wantAt, m)
		return
	}
	keyIdx := w.wl.Keys.Key(w.id, w.rng)
	at := attempts{w: w, ctx: ctx, m: m, key: keyIdx}
	w.startAcquiring(wantAt, m)
	var acq lockimpl.Acquisition
	lockimpl.AcquireInto(ctx, w.locker, w.key(keyIdx), w.wl.TTL, &w.opts.Retry, w.rng, at.observe, &acq)
	if acq.Outcome != lockimpl.OK {
		w.notAcquired(ctx, &at)
		return
	}
	w.holdAcquired(&acq.Lease, &at, wantAt)
}

// startAcquiring tells the lock's-calls ledger an acquisition begins. The
// ledger needs a lower bound of the acquisition's first call: in closed
// loop the worker read one just now (wantAt); an open-loop request's
// intended start may lie far back and would hold the ledger's pruning.
//
//go:noinline
func (w *worker) startAcquiring(wantAt time.Time, m membership) {
	from := wantAt
	if m != closedLoop {
		from = clock.Stamp()
	}
	w.calls.acquiringFrom(w.id, from)
}

// notAcquired ends an acquisition that got no lease: counted as given up
// when its last attempt belongs to the window and the run did not end it.
//
//go:noinline
func (w *worker) notAcquired(ctx context.Context, at *attempts) {
	w.calls.notAcquiring(w.id)
	if at.lastCounted && ctx.Err() == nil {
		w.rec.count(func(c *counters) { c.Contention.GaveUp++ })
	}
}

// holdAcquired runs the section of an acquired lease: the ledger's and the
// history's record of the acquisition, then the work, the write and the
// release.
//
//go:noinline
func (w *worker) holdAcquired(lease *lockimpl.Lease, at *attempts, wantAt time.Time) {
	var s section // set field by field: a literal would take a second copy on this frame
	s.worker, s.lease, s.recorded, s.key = w, *lease, at.lastCounted, at.key
	w.acquired(&s, at, wantAt)
	h := &w.holdings[w.id]
	defer h.released()
	s.run(at.key)
}

// acquired records section s's acquisition (its last attempt at) in the
// lock's-calls ledger, the history, the exposure and the counts, setting
// s's acquisition time and the ledger's verdict.
//
//go:noinline
func (w *worker) acquired(s *section, at *attempts, wantAt time.Time) {
	validUntil := s.lease.ValidUntil()
	s.acquiredAt, s.byCalls, s.ledger = w.calls.acquired(w.id, at.key, s.lease.Token, at.lastCall, validUntil)
	if w.hist != nil {
		w.historyAcquired(&s.lease, at, s.acquiredAt)
	}
	w.holdings[w.id].hold(at.key, validUntil)
	if s.recorded {
		tta := s.acquiredAt.Sub(wantAt)
		w.rec.acquired(w.id, s.acquiredAt, tta)
		w.stats.acquired++
		w.stats.tta.record(toMicros(tta))
	}
}

// historyAcquired records an acquisition that returned at now in the
// history, with its lease's token.
//
//go:noinline
func (w *worker) historyAcquired(lease *lockimpl.Lease, at *attempts, now time.Time) {
	w.hist.Add(history.Event{Key: at.key, Op: history.OpAcquire, Out: history.OutOK, Window: at.lastCounted, Call: w.hist.Since(at.lastCall),
		Return: w.hist.Since(now), Token: lease.Token, Fence: lease.Fence, Valid: w.hist.Since(lease.ValidUntil())})
}

// section is one held lease, from acquisition to its end. recorded says
// whether its acquisition belongs to the window; if so every event of it
// does, and it ends in exactly one counted way.
type section struct {
	*worker
	lease      lockimpl.Lease
	acquiredAt time.Time
	recorded   bool
	key        int
	// byCalls is the lock's-calls verdict on the acquisition.
	byCalls history.CallVerdict
	// ledger is the key's lock's-calls ledger, for the release.
	ledger keyLedger
	// beside is the section's renewer goroutine (--renewer goroutine)
	// while it runs; nil for a holder that renews itself.
	beside *besideRenewer
}

// event records one event of the section in the history, with the
// section's key, lease and window membership.
func (s *section) event(op history.Op, out history.Outcome, call, ret time.Time, seq uint64, err error) {
	e := history.Event{Key: s.key, Op: op, Out: out, Window: s.recorded, Call: s.hist.Since(call), Return: s.hist.Since(ret),
		Token: s.lease.Token, Fence: s.lease.Fence, Seq: seq}
	if _, unfenced := s.resource.(unfencedWrites); unfenced && op == history.OpWrite {
		e.Fence = 0 // the write carried no token, as the resource saw it
	}
	switch op {
	case history.OpEnter, history.OpRenew, history.OpRenewed, history.OpWrite:
		e.Valid = s.hist.Since(s.lease.ValidUntil())
	}
	if op == history.OpEnter {
		e.Granted = s.hist.Since(s.acquiredAt)
	}
	if err != nil {
		e.Err = lockimpl.ErrorKind(err)
		if op.Resource() {
			e.Err, e.Out = "resource", history.OutFailed
		}
	}
	s.hist.Add(e)
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

// run is the held lease's section: enter, work, write, exit, release. Its
// frame is kept small (entering and a crash are calls of their own): it
// sits on the stack of every worker whose release waits for the lock.
func (s *section) run(keyIdx int) {
	entry := s.enter(keyIdx)
	if s.wl.CrashProb > 0 && s.rng.Float64() < s.wl.CrashProb {
		s.crash(entry)
		return
	}
	switch s.work(entry) {
	case workAborted:
		s.exit(entry)
		s.stopRenewer(entry)
		s.count(func(c *counters) { c.Incidents.WorkAborted++ })
		return
	case workInterrupted:
		s.exit(entry)
		s.stopRenewer(entry)
		s.count(func(c *counters) { c.Counters.Unfinished++ })
		s.releaseQuietly()
		return
	}
	s.write(entry)
	s.exit(entry)
	s.stopRenewer(entry)
	s.release()
}

// enter records the holder entering the critical section of key keyIdx,
// and the overlap the resource or the lock's-calls ledger saw.
//
//go:noinline
func (s *section) enter(keyIdx int) Entry {
	var entry Entry
	var overlap Overlap
	var blocked time.Duration
	grant := Grant{At: s.acquiredAt, ValidUntil: s.lease.ValidUntil(), Drift: history.DriftAllowance(s.wl.TTL)}
	s.protected(func(ctx context.Context) (err error) {
		var st Stamp
		entry, overlap, blocked, st, err = s.resource.Enter(ctx, keyIdx, grant)
		if s.hist != nil {
			s.event(history.OpEnter, enterOutcome(overlap), st.At, st.At, st.Seq, err)
		}
		return err
	})
	// A grant inside another token's lease is a double grant whether or
	// not the resource saw the other holder still inside (check does the same).
	switch {
	case overlap == DoubleGrant || s.byCalls.Certain:
		s.count(func(c *counters) { c.Incidents.Overlaps++; c.Incidents.DoubleGrants++ })
	case overlap == Overrun:
		s.count(func(c *counters) { c.Incidents.Overlaps++; c.Incidents.Overruns++ })
	case s.byCalls.Possible:
		s.count(func(c *counters) { c.Incidents.PossibleDoubleGrants++ })
	}
	if blocked > 0 {
		s.latency(opBlocked, blocked, false)
	}
	return entry
}

// crash is a dead client: it leaves the critical section and never
// releases.
//
//go:noinline
func (s *section) crash(entry Entry) {
	s.holdings[s.id].left()
	if c, ok := s.locker.(lockimpl.Crasher); ok {
		// The holder lives in another process (a driver): that process is
		// killed, a real crash of the real client, and a new one started.
		// A successor that cannot start fails the lock, which ends the run.
		_ = c.Crash(s.lease)
	}
	s.protected(func(ctx context.Context) error {
		st, err := s.resource.Abandon(ctx, entry, clock.Stamp())
		if s.hist != nil {
			s.event(history.OpAbandon, history.OutOK, st.At, st.At, st.Seq, err)
		}
		return err
	})
	s.count(func(c *counters) { c.Counters.Crashed++ })
	s.stats.abandoned = append(s.stats.abandoned, s.lease)
}

// exit records the holder leaving the critical section.
func (s *section) exit(e Entry) {
	s.holdings[s.id].left()
	s.protected(func(ctx context.Context) error {
		st, err := s.resource.Exit(ctx, e)
		if s.hist != nil {
			s.event(history.OpExit, history.OutOK, st.At, st.At, st.Seq, err)
		}
		return err
	})
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
	start := clock.Stamp()
	err := call(ctx)
	cancel()
	s.latency(opResource, clock.Stamp().Sub(start), false)
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
func (s *section) work(entry Entry) workEnd {
	ctx := s.drainCtx
	hold := s.wl.Hold.Sample(s.rng)
	end := s.acquiredAt.Add(hold)
	if s.wl.RenewEvery > 0 && s.wl.Renewer == workloads.RenewGoroutine {
		s.startRenewer()
		if w := s.workBeside(entry, hold, end); w != workDone {
			return w
		}
	} else if w := s.workInline(ctx, entry, hold, end); w != workDone {
		return w
	}
	if s.wl.PauseProb > 0 && s.rng.Float64() < s.wl.PauseProb {
		s.count(func(c *counters) { c.Counters.Paused++ })
		// A stall is real time, blind to the run ending, as a GC stop would be.
		pause := s.wl.Pause.Sample(s.rng)
		if st, ok := s.locker.(lockimpl.Staller); ok {
			// The holder lives in another process (a driver): that
			// process is stopped, a real pause of the real client.
			st.Stall(s.lease, pause)
		} else {
			time.Sleep(pause)
		}
	}
	switch {
	case ctx.Err() != nil:
		return workInterrupted
	case s.heard(entry):
		// The check right before the write: a renewer's answer that came
		// meanwhile is recorded, and stops the holder if it ended the lease.
		return workAborted
	}
	return workDone
}

// workInline is the work of a holder that renews its lease itself,
// between the sleeps of its work (after its burst, if it bursts).
func (s *section) workInline(ctx context.Context, entry Entry, hold time.Duration, end time.Time) workEnd {
	s.maybeBurst()
	if s.wl.RenewEvery > 0 {
		for next := s.acquiredAt.Add(s.wl.RenewEvery); next.Before(end); next = next.Add(s.wl.RenewEvery) {
			if !sleepUntil(ctx, next) {
				return workInterrupted
			}
			if !s.renew(ctx, entry) {
				return workAborted
			}
		}
	}
	// No work is no wait: the clock is not read (the context is, below).
	if hold > 0 && !sleepUntil(ctx, end) {
		return workInterrupted
	}
	return workDone
}

// renew extends the lease; false means the lease is lost and the work must
// stop. A renewed lease's validity is told to the resource, which judges a
// later grant against it.
func (s *section) renew(ctx context.Context, entry Entry) bool {
	return s.renewed(ctx, entry, s.callRenew(ctx))
}

// renewal is one renewal call and its answer, not yet recorded.
type renewal struct {
	lease      lockimpl.Lease
	out        lockimpl.Outcome
	err        error
	start, end time.Time
}

// callRenew makes one renewal call of the section's lease.
func (s *section) callRenew(ctx context.Context) renewal {
	return renewCall{locker: s.locker, calls: s.calls, key: s.key, ttl: s.wl.TTL}.do(ctx, s.lease)
}

// renewCall is what a renewal call needs: a renewer goroutine holds one
// instead of the section.
type renewCall struct {
	locker lockimpl.Locker
	calls  *callLedgers
	key    int
	ttl    time.Duration
}

// do renews lease once and records nothing but the lock's-calls ledger.
// The lease is renewed as a copy: the section's own passed by address to
// the lock would move every section to the heap, renewing or not.
func (c renewCall) do(ctx context.Context, lease lockimpl.Lease) renewal {
	start := clock.Stamp()
	out, err := c.locker.Renew(ctx, &lease, c.ttl)
	var end time.Time
	if out == lockimpl.OK {
		end = c.calls.renewed(c.key, lease.Token, lease.ValidUntil())
	} else {
		end = clock.Stamp()
	}
	return renewal{lease: lease, out: out, err: err, start: start, end: end}
}

// renewed records renewal rn and says whether the work may go on.
func (s *section) renewed(ctx context.Context, entry Entry, rn renewal) bool {
	out, err := rn.out, rn.err
	s.lease = rn.lease
	s.latency(opRenew, rn.end.Sub(rn.start), out == lockimpl.Failed)
	if s.hist != nil {
		s.event(history.OpRenew, historyOutcome(out), rn.start, rn.end, 0, err)
	}
	switch {
	case out == lockimpl.OK:
		s.holdings[s.id].renewed(s.lease.ValidUntil())
		s.count(func(c *counters) { c.Counters.Renewed++ })
		s.protected(func(ctx context.Context) error {
			st, err := s.resource.Renewed(ctx, entry, s.lease.ValidUntil())
			if s.hist != nil {
				s.event(history.OpRenewed, history.OutOK, st.At, st.At, st.Seq, err)
			}
			return err
		})
		return true
	case out.IsLost():
		s.count(func(c *counters) { c.Incidents.RenewLost++ })
		return false
	}
	if ctx.Err() == nil && s.recorded {
		s.rec.errorKind(lockimpl.ErrorKind(err))
	}
	// An undecided renewal keeps working while the lease is still valid.
	return clock.Stamp().Before(s.lease.ValidUntil())
}

// write is the protected write that ends the critical section.
func (s *section) write(entry Entry) {
	s.noteLeaseEnd()
	now := clock.Stamp()
	expired := now.After(s.lease.ValidUntil())
	var verdict WriteVerdict
	s.protected(func(ctx context.Context) (err error) {
		var st Stamp
		verdict, st, err = s.resource.Write(ctx, entry, s.lease, expired)
		if s.hist != nil {
			s.event(history.OpWrite, writeOutcome(verdict), now, st.At, st.Seq, err)
		}
		return err
	})
	if expired {
		s.latency(opOverrun, now.Sub(s.lease.ValidUntil()), false)
	} else {
		s.rememberWrite(now)
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

// release gives the lease back; the instant it starts (read in the key's
// order by the lock's-calls ledger) also ends the hold.
func (s *section) release() {
	start := s.calls.releasing(s.ledger, s.lease.Token)
	s.latency(opHold, start.Sub(s.acquiredAt), false)
	out, err := s.locker.Release(s.releaseCtx, s.lease)
	s.released(start, out, err)
}

// released records the release that began at start and returned out and
// err; a call of its own, so its frame is not on the stack while the
// release waits.
//
//go:noinline
func (s *section) released(start time.Time, out lockimpl.Outcome, err error) {
	end := s.calls.released(s.ledger, s.lease.Token)
	s.latency(opRelease, end.Sub(start), out == lockimpl.Failed)
	if s.hist != nil {
		s.event(history.OpRelease, historyOutcome(out), start, end, 0, err)
	}
	switch {
	case out == lockimpl.OK:
		s.givenBack()
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
	start := s.calls.releasing(s.ledger, s.lease.Token)
	out, err := s.locker.Release(ctx, s.lease)
	end := s.calls.released(s.ledger, s.lease.Token)
	if s.hist != nil {
		s.recorded = false
		s.event(history.OpRelease, historyOutcome(out), start, end, 0, err)
	}
}

// historyOutcome is a lock call's outcome in the history.
func historyOutcome(o lockimpl.Outcome) history.Outcome {
	switch {
	case o == lockimpl.OK:
		return history.OutOK
	case o == lockimpl.Contended:
		return history.OutContended
	case o.IsLost():
		return history.OutLost
	}
	return history.OutFailed
}

// enterOutcome is an entry's outcome in the history.
func enterOutcome(o Overlap) history.Outcome {
	switch o {
	case DoubleGrant:
		return history.OutDoubleGrant
	case Overrun:
		return history.OutOverrun
	}
	return history.OutOK
}

// writeOutcome is a write's outcome in the history.
func writeOutcome(v WriteVerdict) history.Outcome {
	switch v {
	case WriteFencingRejected:
		return history.OutFencingRejected
	case WriteStaleAccepted:
		return history.OutStaleAccepted
	}
	return history.OutOK
}

// errKind is a failed attempt's error kind, "" for an answered one.
func errKind(a lockimpl.Attempt) string {
	if a.Outcome != lockimpl.Failed {
		return ""
	}
	return lockimpl.ErrorKind(a.Err)
}
