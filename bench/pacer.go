package bench

import (
	"context"
	"math"
	"sort"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/workloads"
)

// Pacer is an open-loop schedule, in the spirit of vegeta's Pacer: when each
// request is meant to start and how many are meant to start before a given
// moment. Times are offsets from the schedule's start (the warm-up's start);
// requests are numbered from 0 in order of their intended start. A Pacer is
// plain arithmetic, without a clock, so its boundaries can be tested exactly.
type Pacer interface {
	// Intended is request i's intended start.
	Intended(i int64) time.Duration
	// Due is how many requests are meant to start before d, which is also
	// the index of the first request meant to start at or after d.
	Due(d time.Duration) int64
}

// Offered is how many of p's requests are meant to start in [from, to).
func Offered(p Pacer, from, to time.Duration) int64 {
	if to <= from {
		return 0
	}
	return p.Due(to) - p.Due(from)
}

// NewPacer paces rate after a warm-up: a constant rate throughout, or, for a
// staged rate, the start rate through the warm-up and then the stages, so
// that the first stage begins as the window opens.
func NewPacer(rate workloads.Rate, warmup time.Duration) Pacer {
	if !rate.Staged() {
		return ConstantPacer{Rate: rate.Start}
	}
	stages := append([]workloads.RateStage{{Target: rate.Start, Duration: warmup}}, rate.Stages...)
	return NewStagedPacer(rate.Start, stages)
}

// ConstantPacer paces Rate requests per second: request i is meant to start
// at i/Rate seconds.
type ConstantPacer struct {
	// Rate is requests per second, more than 0.
	Rate float64
}

// Intended is i/Rate seconds.
func (c ConstantPacer) Intended(i int64) time.Duration {
	return seconds(float64(i) / c.Rate)
}

// Due counts the requests i with i/Rate before d: ⌈d·Rate⌉.
func (c ConstantPacer) Due(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return ceilCount(d.Seconds() * c.Rate)
}

// StagedPacer paces a rate that moves linearly, stage by stage, from a start
// rate to each stage's target; after the last stage no request is due. The
// cumulative count of requests H(t) is the integral of the rate; request i
// starts at the last moment H(t) ≤ i, so a stage at rate 0 holds no request:
// the one due when the rate rises again starts as it rises.
type StagedPacer struct {
	segs []segment
}

// segment is one stage in absolute terms.
type segment struct {
	// at is the stage's start, in seconds from the schedule's start; span
	// its length in seconds.
	at, span float64
	// from and to are the rates at its start and end, per second.
	from, to float64
	// before is H at the stage's start: the requests of earlier stages.
	before float64
}

// hits is H within the segment, x seconds into it.
func (s segment) hits(x float64) float64 {
	return s.from*x + (s.to-s.from)*x*x/(2*s.span)
}

// total is the segment's own requests.
func (s segment) total() float64 { return (s.from + s.to) / 2 * s.span }

// solve returns the x at which the segment's own count reaches h (0 ≤ h <
// total): the root of from·x + (to−from)/(2·span)·x² = h, in the form
// 2h/(from+√(from²+4ah)) that stays exact when the ramp is flat or starts at 0.
func (s segment) solve(h float64) float64 {
	if h <= 0 {
		return 0
	}
	a := (s.to - s.from) / (2 * s.span)
	disc := math.Max(0, s.from*s.from+4*a*h)
	den := s.from + math.Sqrt(disc)
	if den <= 0 {
		return s.span
	}
	return math.Min(2*h/den, s.span)
}

// NewStagedPacer paces from start through stages (durations more than 0).
func NewStagedPacer(start float64, stages []workloads.RateStage) *StagedPacer {
	p := &StagedPacer{}
	at, before, from := 0.0, 0.0, start
	for _, st := range stages {
		if st.Duration <= 0 {
			continue
		}
		s := segment{at: at, span: st.Duration.Seconds(), from: from, to: st.Target, before: before}
		p.segs = append(p.segs, s)
		at, before, from = at+s.span, before+s.total(), st.Target
	}
	return p
}

// Due is ⌈H(d)⌉: the requests i with i < H(d).
func (p *StagedPacer) Due(d time.Duration) int64 {
	t := d.Seconds()
	if t <= 0 || len(p.segs) == 0 {
		return 0
	}
	k := sort.Search(len(p.segs), func(k int) bool { return p.segs[k].at+p.segs[k].span > t }) // the segment holding t
	if k == len(p.segs) {
		last := p.segs[k-1]
		return ceilCount(last.before + last.total())
	}
	s := p.segs[k]
	return ceilCount(s.before + s.hits(t-s.at))
}

// Intended is the last moment H is still at most i; a request past the
// schedule's end is meant to start at the end.
func (p *StagedPacer) Intended(i int64) time.Duration {
	h := float64(i)
	// The first segment whose requests reach past i holds request i.
	k := sort.Search(len(p.segs), func(k int) bool { return p.segs[k].before+p.segs[k].total() > h })
	if k == len(p.segs) {
		if k == 0 {
			return 0
		}
		last := p.segs[k-1]
		return seconds(last.at + last.span)
	}
	s := p.segs[k]
	return seconds(s.at + s.solve(h-s.before))
}

// countTolerance absorbs float error in H, relative to H: a count that close
// to a whole number is that number, so 0.3 s at 10/s is 3 requests, not 4
// (0.3 × 10 = 3.0000000000000004). It is far above float64's error (~1e-16)
// and far below one nanosecond's worth of requests at any rate a run holds.
const countTolerance = 1e-12

// ceilCount is ⌈x⌉ for x ≥ 0, a whole number within countTolerance counting as itself.
func ceilCount(x float64) int64 {
	if n := math.Round(x); math.Abs(x-n) <= countTolerance*x {
		return int64(n)
	}
	return int64(math.Ceil(x))
}

// seconds converts s seconds to a Duration, to the nearest nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// scheduler hands out open-loop requests at the pacer's times. When every
// worker is busy it falls behind but never skips: late requests still go
// out, and their time-to-acquire counts from the intended start, so
// coordinated omission shows in the figures instead of hiding. It stops at
// the window's nominal end, or when the window closes, whichever comes first.
type scheduler struct {
	pacer Pacer
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

func newScheduler(pacer Pacer, start time.Time, win *windowClock) *scheduler {
	s := &scheduler{pacer: pacer, start: start, win: win}
	s.first, s.last = pacer.Due(win.start.Sub(start)), pacer.Due(win.nominalEnd.Sub(start))
	return s
}

func (s *scheduler) intended(i int64) time.Time { return s.start.Add(s.pacer.Intended(i)) }

// offered counts the requests meant to start in [from, to) of the window,
// both counted from the window's start.
func (s *scheduler) offered(from, to time.Duration) int64 {
	warmup := s.win.start.Sub(s.start)
	return Offered(s.pacer, warmup+from, warmup+to)
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
