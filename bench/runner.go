// Package bench runs a workload against a lock: workers, the renewal loop,
// the recorder, the safety checks and the live progress line.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/workloads"
)

// Options configure a run besides the lock and the workload.
type Options struct {
	// Concurrency is the number of workers (in open loop: the most requests in flight).
	Concurrency int
	// Duration is the measured window.
	Duration time.Duration
	// Warmup runs before the window and is not recorded.
	Warmup time.Duration
	// Retry is the acquire retry policy, with its timeout.
	Retry lockimpl.RetryPolicy
	// KeyPrefix is put before every key; it names the run.
	KeyPrefix string
	// Seed seeds every worker's RNG (worker i uses Seed and i), so runs repeat.
	Seed uint64
	// Progress receives a live line once a second; nil for none.
	Progress io.Writer
	// OnWindowStart is called as the measured window begins, with its start
	// (to read server counters and time faults from it).
	OnWindowStart func(start time.Time)
	// OnTick is called once a second of the window with the elapsed time, so
	// scheduled faults can be fired and logged against the series.
	OnTick func(elapsed time.Duration)
	// LateThreshold is how far behind its intended start an open-loop request may
	// begin before it counts as late (default 1 ms).
	LateThreshold time.Duration
}

// Validate reports the first option that cannot work.
func (o Options) Validate() error {
	switch {
	case o.Concurrency < 1:
		return fmt.Errorf("concurrency %d: want at least 1", o.Concurrency)
	case o.Duration <= 0:
		return fmt.Errorf("duration %v: want more than 0", o.Duration)
	case o.Warmup < 0:
		return fmt.Errorf("warmup %v: want 0 or more", o.Warmup)
	}
	return nil
}

// validateWorkload checks what the runner relies on.
func validateWorkload(w workloads.Workload) error {
	switch {
	case w.Keys == nil:
		return errors.New("workload has no key chooser")
	case w.TTL <= 0:
		return fmt.Errorf("ttl %v: want more than 0", w.TTL)
	case w.RenewEvery < 0 || (w.RenewEvery > 0 && w.RenewEvery >= w.TTL):
		return fmt.Errorf("renew-every %v: want 0 (off) or less than the ttl %v", w.RenewEvery, w.TTL)
	case w.Rate < 0:
		return fmt.Errorf("rate %v: want 0 (closed loop) or more", w.Rate)
	}
	return nil
}

// run is the shared state of one Run.
type run struct {
	locker   lockimpl.Locker
	wl       workloads.Workload
	opts     Options
	resource *Resource
	on       atomic.Bool
	recs     []*recorder
	series   *seriesCollector
}

// Run drives the workload against locker and returns what it measured. It
// returns when the window ends or ctx is cancelled; then the result is marked
// partial. Workers never panic and never stop on errors: they count them.
func Run(ctx context.Context, locker lockimpl.Locker, wl workloads.Workload, opts Options) (*Measurement, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := validateWorkload(wl); err != nil {
		return nil, err
	}
	if opts.LateThreshold == 0 {
		opts.LateThreshold = time.Millisecond
	}
	wl = withDefaults(wl)
	r := &run{locker: locker, wl: wl, opts: opts, resource: NewResource()}
	for range opts.Concurrency {
		r.recs = append(r.recs, newRecorder(&r.on))
	}
	r.series = newSeriesCollector(r.recs, opts.Progress)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var requests chan time.Time
	if wl.Rate > 0 {
		requests = make(chan time.Time)
	}
	for i := range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(runCtx, i, requests)
		}()
	}
	start := time.Now()
	var sched *scheduler
	if wl.Rate > 0 {
		sched = &scheduler{rate: wl.Rate, start: start}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sched.run(runCtx, requests)
		}()
	}
	m := r.window(runCtx, start, sched)
	stop()
	wg.Wait()
	m.merge(r.recs)
	if sched != nil {
		// Requests are scheduled for the nominal window: a late-waking timer on a
		// loaded machine lengthens the run, not the schedule.
		from, to := m.WindowStart, m.WindowStart.Add(min(m.Elapsed, opts.Duration))
		m.Scheduled = sched.inWindow(from, to)
		m.counters.late += sched.neverStarted(from, to)
	}
	return m, nil
}

// window waits out the warm-up, records the measured window and collects.
// runCtx ends only when the caller's context does (Ctrl-C), so ending early
// means the result is partial.
func (r *run) window(runCtx context.Context, start time.Time, sched *scheduler) *Measurement {
	partial := !sleepUntil(runCtx, start.Add(r.opts.Warmup))
	windowStart := time.Now()
	if sched != nil {
		sched.stopAt.Store(windowStart.Add(r.opts.Duration).UnixNano())
	}
	// Recording starts with the window, before the hook: time the hook takes
	// (reading every server's INFO) is measured time, not a hole in it.
	r.on.Store(true)
	if r.opts.OnWindowStart != nil {
		r.opts.OnWindowStart(windowStart)
	}
	end := windowStart.Add(r.opts.Duration)
	if !partial {
		partial = r.series.collect(runCtx, windowStart, end, r.opts.OnTick)
	}
	r.on.Store(false)
	elapsed := time.Since(windowStart)
	return r.measurement(windowStart, elapsed, partial)
}

// withDefaults fills the distributions a workload may leave empty with zero work.
func withDefaults(w workloads.Workload) workloads.Workload {
	for _, d := range []*workloads.Dist{&w.Hold, &w.Think, &w.Pause} {
		if *d == nil {
			*d = workloads.Const(0)
		}
	}
	return w
}

// worker runs critical sections until ctx ends. In open loop it takes each
// request's intended start from requests.
func (r *run) worker(ctx context.Context, id int, requests <-chan time.Time) {
	w := &worker{run: r, id: id, rec: r.recs[id], rng: rand.New(rand.NewPCG(r.opts.Seed, uint64(id)+1)),
		releaseCtx: context.WithoutCancel(ctx)}
	w.keyBuf = append(w.keyBuf, r.opts.KeyPrefix...)
	for ctx.Err() == nil {
		wantAt := time.Now()
		if requests != nil {
			select {
			case intended := <-requests:
				wantAt = intended
				if time.Since(intended) > r.opts.LateThreshold {
					w.rec.count(func(c *counters) { c.late++ })
				}
			case <-ctx.Done():
				return
			}
		}
		w.criticalSection(ctx, wantAt)
		if requests == nil {
			sleepCtx(ctx, r.wl.Think.Sample(w.rng))
		}
	}
}

type worker struct {
	*run
	id     int
	rec    *recorder
	rng    *rand.Rand
	keyBuf []byte
	// releaseCtx outlives the run's context: the release of a lease taken
	// inside the window finishes even if the window has just closed, so the
	// run leaves no key behind. Made once, not per release.
	releaseCtx context.Context
}

func (w *worker) key(idx int) string {
	b := strconv.AppendInt(w.keyBuf[:len(w.opts.KeyPrefix)], int64(idx), 10)
	w.keyBuf = b
	return string(b)
}

// observeAttempt records one acquire attempt; the retry loop calls it for every try.
func (w *worker) observeAttempt(a lockimpl.Attempt) {
	w.rec.attempt(a.Latency, a.Outcome)
	if a.Outcome == lockimpl.Failed {
		w.rec.errorKind(lockimpl.ErrorKind(a.Err))
		if errors.Is(a.Err, lockimpl.ErrUnreplicated) {
			w.rec.count(func(c *counters) { c.unreplicated++ })
		}
	}
}

// criticalSection is one request: acquire, work, protected write, release.
func (w *worker) criticalSection(ctx context.Context, wantAt time.Time) {
	keyIdx := w.wl.Keys.Key(w.id, w.rng)
	key := w.key(keyIdx)
	acq := lockimpl.AcquireWithRetry(ctx, w.locker, key, w.wl.TTL, w.opts.Retry, w.rng, w.observeAttempt)
	if acq.Outcome != lockimpl.OK {
		if ctx.Err() == nil {
			w.rec.count(func(c *counters) { c.gaveUp++ })
		}
		return
	}
	lease := acq.Lease
	acquiredAt := time.Now()
	w.rec.acquired(acquiredAt.Sub(wantAt))

	entry, overlap, blocked := w.resource.Enter(keyIdx, acquiredAt)
	if overlap {
		w.rec.count(func(c *counters) { c.overlaps++ })
	}
	if blocked > 0 {
		w.rec.latency(opBlocked, blocked, false)
	}
	if w.wl.CrashProb > 0 && w.rng.Float64() < w.wl.CrashProb {
		// A dead client: it leaves the critical section and never releases.
		w.resource.Abandon(entry, time.Now())
		w.rec.count(func(c *counters) { c.crashed++ })
		return
	}
	if !w.work(ctx, &lease, acquiredAt) {
		w.resource.Exit(entry)
		if ctx.Err() != nil {
			w.releaseQuietly(lease)
		}
		return
	}
	w.write(entry, lease)
	w.resource.Exit(entry)
	w.rec.latency(opHold, time.Since(acquiredAt), false)
	w.release(lease)
}

// work holds the lock for the sampled hold time, renewing on schedule, then
// stalls if this holder is to pause. It returns false when the work was aborted
// (the lease was lost on renewal) or the run ended.
func (w *worker) work(ctx context.Context, lease *lockimpl.Lease, acquiredAt time.Time) bool {
	hold := w.wl.Hold.Sample(w.rng)
	end := acquiredAt.Add(hold)
	if w.wl.RenewEvery > 0 {
		for next := acquiredAt.Add(w.wl.RenewEvery); next.Before(end); next = next.Add(w.wl.RenewEvery) {
			if !sleepUntil(ctx, next) {
				return false
			}
			if !w.renew(ctx, lease) {
				w.rec.count(func(c *counters) { c.aborted++ })
				return false
			}
		}
	}
	if !sleepUntil(ctx, end) {
		return false
	}
	if w.wl.PauseProb > 0 && w.rng.Float64() < w.wl.PauseProb {
		w.rec.count(func(c *counters) { c.paused++ })
		// A stall is real time, blind to the run ending, as a GC stop would be.
		time.Sleep(w.wl.Pause.Sample(w.rng))
	}
	return ctx.Err() == nil
}

// renew extends the lease; false means the lease is lost and the work must stop.
func (w *worker) renew(ctx context.Context, lease *lockimpl.Lease) bool {
	start := time.Now()
	out, err := w.locker.Renew(ctx, lease, w.wl.TTL)
	w.rec.latency(opRenew, time.Since(start), out == lockimpl.Failed)
	switch {
	case out == lockimpl.OK:
		w.rec.count(func(c *counters) { c.renewed++ })
		return true
	case out.IsLost():
		w.rec.count(func(c *counters) { c.renewLost++ })
		return false
	}
	if ctx.Err() == nil {
		w.rec.errorKind(lockimpl.ErrorKind(err))
	}
	// An undecided renewal keeps working while the lease is still valid.
	return time.Now().Before(lease.ValidUntil())
}

// write is the protected write that ends the critical section.
func (w *worker) write(entry Entry, lease lockimpl.Lease) {
	now := time.Now()
	expired := now.After(lease.ValidUntil())
	verdict := w.resource.Write(entry, lease.Fence, expired)
	w.rec.count(func(c *counters) {
		c.writes++
		if expired {
			c.expired++
		}
		switch verdict {
		case WriteFencingRejected:
			c.fencingRejected++
		case WriteStaleAccepted:
			c.staleAccepted++
		}
	})
}

func (w *worker) release(lease lockimpl.Lease) {
	start := time.Now()
	out, err := w.locker.Release(w.releaseCtx, lease)
	w.rec.latency(opRelease, time.Since(start), out == lockimpl.Failed)
	switch {
	case out == lockimpl.OK:
		w.rec.count(func(c *counters) { c.released++ })
	case out.IsLost():
		w.rec.count(func(c *counters) { c.releaseLost++ })
	default:
		w.rec.errorKind(lockimpl.ErrorKind(err))
	}
}

// releaseQuietly gives a lease back when the run ends mid-work, unrecorded.
func (w *worker) releaseQuietly(lease lockimpl.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = w.locker.Release(ctx, lease)
}

// sleepUntil sleeps until t or ctx ends; it reports whether t was reached.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return sleepCtx(ctx, time.Until(t))
}

// sleepCtx sleeps for d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
