package bench

import (
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// Live lets a reader (the Prometheus endpoint of --metrics-addr) see a run's
// figures while it runs. Reading costs the workers nothing: a snapshot takes
// each recorder shard's lock once, as the per-second tick does.
type Live struct {
	mu  sync.Mutex
	run *run
}

// NewLive returns a Live to pass in Options; it shows nothing until the run
// starts.
func NewLive() *Live { return &Live{} }

// current is the run attached, nil before it starts.
func (l *Live) current() *run {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.run
}

func (l *Live) attach(r *run) {
	l.mu.Lock()
	l.run = r
	l.mu.Unlock()
}

// LiveSnapshot is what a run recorded in its window so far.
type LiveSnapshot struct {
	// Counts are every counter of the catalogue (results.CounterFigures)
	// by its name: contention.attempts, incidents.overlaps…
	Counts map[string]int64
	// Errors are failures by kind.
	Errors map[string]int64
	// Ops are each operation's latencies so far, in µs.
	Ops map[string]*hdr.Histogram
	// Window is how much of the measured window has passed: 0 in the
	// warm-up, its whole length once it closed. Counts / Window is the
	// stored result's rate at the window's end.
	Window time.Duration
	// Slowest is the slowest acquisition so far (zero before the first).
	Slowest Slowest
}

// Snapshot reads the run's figures so far; ok is false before it started.
func (l *Live) Snapshot() (s LiveSnapshot, ok bool) {
	r := l.current()
	if r == nil {
		return LiveSnapshot{}, false
	}
	var c counters
	ops := map[string]*hdr.Histogram{}
	for _, rec := range r.recs {
		rec.mu.Lock()
		c.add(&rec.c)
		for i, h := range rec.hists {
			if h != nil {
				into(ops, opResultNames[i]).Merge(h)
			}
		}
		if rec.iv.acquire.TotalCount() > 0 {
			into(ops, results.OpAcquire).Merge(rec.iv.acquire)
		}
		if rec.slowest.TimeToAcquire > s.Slowest.TimeToAcquire {
			s.Slowest = rec.slowest
		}
		rec.mu.Unlock()
	}
	if r.sched != nil {
		c.Counters.Scheduled = r.sched.dueBy(time.Now())
	}
	s.Ops, s.Errors, s.Counts, s.Window = ops, c.errs, map[string]int64{}, r.win.elapsed(time.Now())
	for _, f := range results.CounterFigures() {
		s.Counts[f.Name] = *f.Count(&c.Counts)
	}
	return s, true
}

// elapsed is how much of the window has passed at now: 0 before its start,
// its length once closed.
func (w *windowClock) elapsed(now time.Time) time.Duration {
	if c := w.closeTime(); !c.IsZero() {
		now = c
	}
	return max(now.Sub(w.start), 0)
}

// dueBy counts the open-loop requests of the window whose intended start
// is before t: the live reading of counters.scheduled, which at the window's
// end is every request intended in it.
func (s *scheduler) dueBy(t time.Time) int64 {
	n := sort.Search(int(s.inWindow()), func(k int) bool { return !s.intended(s.first + int64(k)).Before(t) })
	return int64(n)
}

func into(ops map[string]*hdr.Histogram, op string) *hdr.Histogram {
	h := ops[op]
	if h == nil {
		h = results.NewHistogram()
		ops[op] = h
	}
	return h
}
