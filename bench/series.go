package bench

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// seriesCollector ticks once a second through the window, draining every
// worker's interval into one point of the per-second series and the live line.
type seriesCollector struct {
	recs     []*recorder
	progress io.Writer
	// nodeErrors, when set, reads the lock's per-master failures so far.
	nodeErrors func() int64
	points     []results.SeriesPoint
	agg        *hdr.Histogram
	// errors is the running total the live line shows.
	errors int64
	// start is the window's start, which acquisition times count from.
	start time.Time
}

func newSeriesCollector(recs []*recorder, progress io.Writer) *seriesCollector {
	return &seriesCollector{recs: recs, progress: progress, agg: results.NewHistogram()}
}

// collect ticks until end; it reports true when ctx ended first (interrupted).
func (s *seriesCollector) collect(ctx context.Context, start, end time.Time, onTick func(time.Duration)) (interrupted bool) {
	s.start = start
	for next := start.Add(time.Second); ; next = next.Add(time.Second) {
		if next.After(end) {
			next = end
		}
		if !sleepUntil(ctx, next) {
			s.tick(time.Since(start))
			s.finishLine()
			return true
		}
		elapsed := next.Sub(start)
		s.tick(elapsed)
		if onTick != nil && next.Before(end) {
			onTick(elapsed)
		}
		if !next.Before(end) {
			s.finishLine()
			return false
		}
	}
}

func (s *seriesCollector) tick(elapsed time.Duration) {
	s.agg.Reset()
	var p results.SeriesPoint
	for _, r := range s.recs {
		t := r.drainInterval(s.agg)
		p.Acquired += t.acquired
		p.Attempts += t.attempts
		p.Errors += t.errors
		p.Incidents += t.incidents
		s.acquisitionTimes(&p, t.firstAcq, t.lastAcq)
	}
	p.ElapsedS = elapsed.Seconds()
	p.P99US = float64(s.agg.ValueAtQuantile(99))
	s.points = append(s.points, p)
	s.errors += p.Errors
	if s.progress != nil {
		masters := ""
		if s.nodeErrors != nil {
			// A quorum hides a failing master from the acquire errors.
			masters = fmt.Sprintf(" (master errors %d)", s.nodeErrors())
		}
		fmt.Fprintf(s.progress, "\r[%6.1fs] %8.0f acq/s  p99 acquire %-9s errors %d%s  incidents %d ",
			p.ElapsedS, float64(p.Acquired), results.FormatUS(p.P99US), s.errors, masters, p.Incidents)
	}
}

func (s *seriesCollector) finishLine() {
	if s.progress != nil {
		fmt.Fprintln(s.progress)
	}
}

// scheduler emits open-loop requests at a constant rate. When every worker is
// busy it falls behind but never skips: late requests still go out, and their
// time-to-acquire counts from the intended start, so coordinated omission
// shows in the figures instead of hiding. It stops at the window's nominal
// end, or when the window closes, whichever comes first.
type scheduler struct {
	rate  float64
	start time.Time
	win   *windowClock
	// first and last are the window's first request index and the first
	// after it, fixed before the schedule starts.
	first, last int64
	// next is the index of the next request to hand out: every request
	// before it was taken by a worker or skipped as the warm-up's.
	next atomic.Int64
}

// request is one open-loop lock request: its place in the schedule and the
// instant it was meant to start.
type request struct {
	index    int64
	intended time.Time
}

func newScheduler(rate float64, start time.Time, win *windowClock) *scheduler {
	s := &scheduler{rate: rate, start: start, win: win}
	s.first, s.last = ceilDiv(win.start.Sub(start), rate), ceilDiv(win.nominalEnd.Sub(start), rate)
	return s
}

func (s *scheduler) intended(i int64) time.Time {
	return s.start.Add(time.Duration(float64(i) * float64(time.Second) / s.rate))
}

// run hands out the requests in order. The warm-up's backlog is not carried
// into the window: a warm-up request not handed out when the window opens is
// skipped, so the window measures its own requests, not how long the
// warm-up was.
func (s *scheduler) run(ctx context.Context, out chan<- request) {
	for i := int64(0); i < s.last; i++ {
		if i < s.first && !time.Now().Before(s.win.start) {
			i = s.first
		}
		at := s.intended(i)
		if !sleepUntil(ctx, at) {
			return
		}
		select {
		case out <- request{index: i, intended: at}:
			s.next.Store(i + 1)
		case <-ctx.Done():
			return
		}
	}
}

// ofWindow reports whether request i belongs to the window: its intended
// start lies in [start, nominal end).
func (s *scheduler) ofWindow(i int64) bool { return i >= s.first && i < s.last }

// inWindow counts the requests whose intended start fell in the window.
func (s *scheduler) inWindow() int64 { return max(0, s.last-s.first) }

// recordNeverStarted records each request of the window that no worker took
// before the run ended as dropped, waiting at least until the window closed.
func (s *scheduler) recordNeverStarted(m *Measurement, closedAt time.Time) {
	h := m.hists[opTimeToAcquire]
	for i := max(s.first, s.next.Load()); i < s.last; i++ {
		_ = h.RecordValue(toMicros(closedAt.Sub(s.intended(i))))
		m.counters.Counters.Dropped++
	}
}

// ceilDiv returns the first request index whose intended time is at or after d.
func ceilDiv(d time.Duration, rate float64) int64 {
	if d <= 0 {
		return 0
	}
	x := d.Seconds() * rate
	n := int64(x)
	if float64(n) < x {
		n++
	}
	return n
}

// acquisitionTimes folds a shard's first and last acquisition of the second
// into p, in seconds from the window's start.
func (s *seriesCollector) acquisitionTimes(p *results.SeriesPoint, first, last int64) {
	if first == 0 || s.start.IsZero() {
		return
	}
	// 1 ns at the least: a first time of 0 means "none".
	p.MergeAcquisitionTimes(results.SeriesPoint{
		FirstAcquiredS: max(time.Duration(first-s.start.UnixNano()).Seconds(), 1e-9),
		LastAcquiredS:  time.Duration(last - s.start.UnixNano()).Seconds(),
	})
}
