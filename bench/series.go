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
	points   []results.SeriesPoint
	agg      *hdr.Histogram
	// errors is the running total the live line shows.
	errors int64
}

func newSeriesCollector(recs []*recorder, progress io.Writer) *seriesCollector {
	return &seriesCollector{recs: recs, progress: progress, agg: results.NewHistogram()}
}

// collect ticks until end; it reports true when ctx ended first (interrupted).
func (s *seriesCollector) collect(ctx context.Context, start, end time.Time, onTick func(time.Duration)) (interrupted bool) {
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
		acq, att, errs, inc := r.drainInterval(s.agg)
		p.Acquired += acq
		p.Attempts += att
		p.Errors += errs
		p.Incidents += inc
	}
	p.ElapsedS = elapsed.Seconds()
	p.P99US = float64(s.agg.ValueAtQuantile(99))
	s.points = append(s.points, p)
	s.errors += p.Errors
	if s.progress != nil {
		fmt.Fprintf(s.progress, "\r[%6.1fs] %8.0f acq/s  p99 acquire %-9s errors %d  incidents %d ",
			p.ElapsedS, float64(p.Acquired), results.FormatUS(p.P99US), s.errors, p.Incidents)
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
// shows in the figures instead of hiding.
type scheduler struct {
	rate    float64
	start   time.Time
	started atomic.Int64
	// stopAt (unix ns, 0 until the window starts) ends the schedule with the
	// nominal window, however late the window's own timer wakes.
	stopAt atomic.Int64
}

func (s *scheduler) intended(i int64) time.Time {
	return s.start.Add(time.Duration(float64(i) * float64(time.Second) / s.rate))
}

func (s *scheduler) run(ctx context.Context, out chan<- time.Time) {
	for i := int64(0); ; i++ {
		at := s.intended(i)
		if stop := s.stopAt.Load(); stop != 0 && at.UnixNano() >= stop {
			return
		}
		if !sleepUntil(ctx, at) {
			return
		}
		select {
		case out <- at:
			s.started.Add(1)
		case <-ctx.Done():
			return
		}
	}
}

// inWindow counts the requests whose intended start fell inside [from, to).
func (s *scheduler) inWindow(from, to time.Time) int64 {
	first := int64(0)
	if d := from.Sub(s.start); d > 0 {
		first = ceilDiv(d, s.rate)
	}
	last := ceilDiv(to.Sub(s.start), s.rate)
	return max(0, last-first)
}

// neverStarted counts requests intended inside [from, to) that no worker took
// before the run ended: they are late too, by more than the run had left.
func (s *scheduler) neverStarted(from, to time.Time) int64 {
	first := ceilDiv(max(0, from.Sub(s.start)), s.rate)
	last := ceilDiv(to.Sub(s.start), s.rate)
	return max(0, last-max(first, s.started.Load()))
}

// ceilDiv returns the first request index whose intended time is at or after d.
func ceilDiv(d time.Duration, rate float64) int64 {
	x := d.Seconds() * rate
	n := int64(x)
	if float64(n) < x {
		n++
	}
	return n
}
