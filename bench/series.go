package bench

import (
	"context"
	"fmt"
	"io"
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
	// offered, in open loop, counts the requests meant to start in a span
	// of the window: the offered rate beside the served one.
	offered func(from, to time.Duration) int64
	// elapsed is the end of the latest tick, from the window's start.
	elapsed time.Duration
	points  []results.SeriesPoint
	agg     *hdr.Histogram
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
	if s.offered != nil {
		n := s.offered(s.elapsed, elapsed)
		p.Offered = &n
	}
	s.elapsed = max(s.elapsed, elapsed)
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
