// Package bench runs a workload against a lock: workers, the renewal loop,
// the recorder, the safety checks and the live progress line.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/workloads"
)

// Options configure a run besides the lock and the workload.
type Options struct {
	// Concurrency is the number of workers (in open loop: the most requests in flight).
	Concurrency int
	// Duration is the measured window; with a staged rate, the stages' sum.
	Duration time.Duration
	// Warmup runs before the window and is not recorded.
	Warmup time.Duration
	// Retry is the acquire retry policy, with its timeout.
	Retry lockimpl.RetryPolicy
	// KeyPrefix is put before every key; it names the run.
	KeyPrefix string
	// HashTag wraps each key's own part in braces (prefix{17}), so that a
	// Redis Cluster hashes the key and its fencing counter (key:fence) to
	// one slot, and the keys of a run still spread over every shard.
	HashTag bool
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
	// Live, when set, is attached to the run so its figures can be read
	// while it runs.
	Live *Live
	// Resource is the protected resource; nil keeps an exact one in process.
	Resource Protected
	// UnfencedWrites makes every protected write carry no fencing token, as
	// when the resource cannot check one: what a fencing lock's token is
	// worth shows against the same lock with it.
	UnfencedWrites bool
	// StartAt, when set, is when the warm-up starts, so generators of one
	// run start together; the run waits for it. Zero starts at once.
	StartAt time.Time
	// NodeErrors, when set, reads the lock's per-master errors and timeouts
	// so far, for the live line: a quorum lock can hide a failing master.
	NodeErrors func() int64
	// LateThreshold is how far behind its intended start an open-loop request may
	// begin before it counts as late (default DefaultLateThreshold).
	LateThreshold time.Duration
	// History, when set, receives every operation of the run (one buffer
	// per worker: make it with as many buffers as Concurrency).
	History *history.Writer
	// DrainTimeout bounds how long critical sections of the window may go on
	// after it closed (default 30 s); those still unfinished are counted so.
	DrainTimeout time.Duration
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
	case o.History != nil && o.History.Workers() < o.Concurrency:
		return fmt.Errorf("history made for %d workers, run has %d", o.History.Workers(), o.Concurrency)
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
	case w.Rate.Start < 0:
		return fmt.Errorf("rate %v: want 0 (closed loop) or more", w.Rate.Start)
	}
	return nil
}

// validateStages checks that a staged rate's stages are the window: the
// window is their sum, and any other duration would cut them short or run
// past them at no rate.
func validateStages(w workloads.Workload, o Options) error {
	if w.Rate.Staged() && w.Rate.Window() != o.Duration {
		return fmt.Errorf("duration %v: the rate's stages (%s) last %v, which is the window", o.Duration, w.Rate, w.Rate.Window())
	}
	return nil
}

// windowClock says which events belong to the measured window. Its start is
// fixed before any worker runs; its close is the moment the runner ends it.
type windowClock struct {
	start time.Time
	// nominalEnd is start + duration: the open-loop schedule's end, however
	// late the window's own timer wakes.
	nominalEnd time.Time
	// closedAt is the close in unix ns, 0 while the window is open.
	closedAt atomic.Int64
}

// contains reports whether an event at t falls in the window: at or after its
// start and before its close.
func (w *windowClock) contains(t time.Time) bool {
	if t.Before(w.start) {
		return false
	}
	c := w.closedAt.Load()
	return c == 0 || t.UnixNano() < c
}

// closed reports whether the window has closed.
func (w *windowClock) closed() bool { return w.closedAt.Load() != 0 }

// closeAt ends the window at t.
func (w *windowClock) closeAt(t time.Time) { w.closedAt.Store(t.UnixNano()) }

// closeTime is when the window closed (zero while open).
func (w *windowClock) closeTime() time.Time {
	c := w.closedAt.Load()
	if c == 0 {
		return time.Time{}
	}
	return time.Unix(0, c)
}

// run is the shared state of one Run.
type run struct {
	locker lockimpl.Locker
	// optimistic is set for a lock that takes no lock (occ): its requests
	// run optimisticSection.
	optimistic bool
	// sessions is the lock as a session lock, whose leases end with its
	// client's session (zk); nil for any other.
	sessions lockimpl.SessionLocker
	wl       workloads.Workload
	opts     Options
	resource Protected
	win      *windowClock
	// recs are the recorder shards, a few per CPU, shared by the workers
	// that map to them: memory and the per-second tick grow with CPUs, not
	// with workers.
	recs []*recorder
	// stats are each worker's own acquisitions and times to acquire.
	stats []workerStats
	// holdings are each worker's current lease, read when a fault fires.
	holdings []holding
	// calls judges every acquisition by the lock's own calls.
	calls  *callLedgers
	series *seriesCollector
	sched  *scheduler
	// spin runs the workload's CPU bursts; nil when it has none.
	spin *spinner
	// windowCtx ends when the window closes: closed-loop workers start no
	// new critical section and stop acquisitions still in progress.
	windowCtx context.Context
}

// DefaultLateThreshold is how far behind its intended start an open-loop
// request may begin before it counts as late, unless Options say otherwise.
const DefaultLateThreshold = time.Millisecond

// Run drives the workload against locker and returns what it measured. It
// returns when the window ends and the critical sections begun in it have
// finished, or when ctx is cancelled; then the result is marked partial.
// Workers never panic and never stop on errors: they count them.
//
// Which events count: in closed loop, a critical section belongs to the
// window its acquisition fell in, and is followed to its end (release,
// release lost, crash, aborted work) even after the window closed, so that
// every acquisition ends in exactly one counted way. An attempt counts when
// it ended inside the window. In open loop, a request belongs to the window
// its intended start fell in, whenever it is served; a request of the window
// that never started before the window closed is dropped, and recorded in
// time_to_acquire with the window's end as a lower bound of its wait. The
// warm-up's requests that had not started when the window opened are
// skipped: the window starts without the warm-up's backlog.
func Run(ctx context.Context, locker lockimpl.Locker, wl workloads.Workload, opts Options) (*Measurement, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := validateWorkload(wl); err != nil {
		return nil, err
	}
	if err := validateStages(wl, opts); err != nil {
		return nil, err
	}
	if opts.LateThreshold == 0 {
		opts.LateThreshold = DefaultLateThreshold
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	wl = withDefaults(wl)
	defer leanGC(opts.Concurrency)()
	start := time.Now()
	var offset time.Duration
	if !opts.StartAt.IsZero() {
		if !sleepUntil(ctx, opts.StartAt) {
			m := &Measurement{Partial: true, BeforeWindow: true}
			return m, nil
		}
		// The schedule counts from the instant given, however late this
		// process woke; how late is recorded.
		start, offset = opts.StartAt, time.Since(opts.StartAt)
	}
	win := &windowClock{start: start.Add(opts.Warmup)}
	win.nominalEnd = win.start.Add(opts.Duration)
	resource := opts.Resource
	if resource == nil {
		resource = InProcess()
		if opts.History == nil {
			resource = untimedInProcess()
		}
	}
	_, optimistic := locker.(lockimpl.Optimistic)
	if _, versioned := resource.(Versioned); optimistic && !versioned {
		return nil, fmt.Errorf("lock %s takes no lock: its write is a compare-and-set that only the PostgreSQL resource checks", locker.Info().Name)
	}
	if opts.UnfencedWrites {
		resource = unfencedWrites{resource}
	}
	r := &run{locker: locker, optimistic: optimistic, wl: wl, opts: opts, resource: resource, win: win}
	r.sessions, _ = locker.(lockimpl.SessionLocker)
	if wl.BurstProb > 0 {
		r.spin = newSpinner()
	}
	for range recorderShards(opts.Concurrency) {
		r.recs = append(r.recs, newRecorder())
	}
	r.stats = make([]workerStats, opts.Concurrency)
	r.holdings = make([]holding, opts.Concurrency)
	origin := start
	if opts.History != nil {
		origin = opts.History.Origin()
	}
	r.calls = newCallLedgers(history.DriftAllowance(wl.TTL), origin, opts.Concurrency)
	r.series = newSeriesCollector(r.recs, opts.Progress)
	r.series.nodeErrors = opts.NodeErrors
	if opts.Live != nil {
		opts.Live.attach(r)
	}

	// drainCtx outlives the window by at most DrainTimeout; Ctrl-C ends it at once.
	drainCtx, stopDrain := context.WithCancel(ctx)
	defer stopDrain()
	windowCtx, closeWindow := context.WithCancel(drainCtx)
	defer closeWindow()
	r.windowCtx = windowCtx
	var requests chan request
	if wl.Rate.Open() {
		requests = make(chan request)
		r.sched = newScheduler(NewPacer(wl.Rate, opts.Warmup), start, win)
		r.series.offered = r.sched.offered
	}
	var wg sync.WaitGroup
	for i := range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(drainCtx, i, requests)
		}()
	}
	if r.sched != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.sched.run(windowCtx, requests)
		}()
	}
	m := r.window(ctx)
	closeWindow()
	drained := make(chan struct{})
	go func() {
		wg.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(opts.DrainTimeout):
		stopDrain()
		<-drained
	}
	m.merge(r.recs, r.stats)
	m.StartOffset = offset
	m.Partial = m.Partial || ctx.Err() != nil
	if r.sched != nil {
		m.Scheduled = r.sched.inWindow()
		r.sched.recordNeverStarted(m, win.closeTime())
	}
	return m, nil
}

// window waits out the warm-up, records the measured window and closes it.
func (r *run) window(ctx context.Context) *Measurement {
	partial := !sleepUntil(ctx, r.win.start)
	if r.opts.OnWindowStart != nil && !partial {
		r.opts.OnWindowStart(r.win.start)
	}
	if !partial {
		partial = r.series.collect(ctx, r.win.start, r.win.nominalEnd, r.opts.OnTick)
	}
	closedAt := time.Now()
	if closedAt.Before(r.win.start) {
		closedAt = r.win.start
	}
	r.win.closeAt(closedAt)
	return r.measurement(r.win.start, closedAt.Sub(r.win.start), partial)
}

// leanGCWorkers is the concurrency from which a run collects garbage more
// often: ten thousand workers' stacks count toward Go's heap goal, which
// then lets garbage grow to twice what is live.
const leanGCWorkers = 1000

// leanGC sets GOGC to 50 for a run of many workers, unless the user set
// GOGC, and returns what restores it: at -c 10000 that takes the peak RSS
// from ~210 MB to ~190 MB for about 2% more GC CPU.
func leanGC(workers int) (restore func()) {
	if workers < leanGCWorkers || os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(50)
	return func() { debug.SetGCPercent(old) }
}

// recorderShards is how many recorders the workers share: two per CPU Go
// may use, so a shard's lock is rarely contended (a worker holds it for a
// histogram update), and never more than the workers. Each shard costs up to
// 1.7 MB of histograms, so more would cost memory for nothing.
func recorderShards(workers int) int {
	return max(1, min(workers, 2*runtime.GOMAXPROCS(0)))
}

// withDefaults fills the distributions a workload may leave empty with zero work.
func withDefaults(w workloads.Workload) workloads.Workload {
	for _, d := range []*workloads.Dist{&w.Hold, &w.Think, &w.Pause, &w.Burst} {
		if *d == nil {
			*d = workloads.Const(0)
		}
	}
	return w
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
