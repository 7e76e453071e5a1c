package bench

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/workloads"
)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func stages(start float64, st ...any) workloads.Rate {
	r := workloads.Rate{Start: start}
	for i := 0; i < len(st); i += 2 {
		r.Stages = append(r.Stages, workloads.RateStage{Target: st[i].(float64), Duration: st[i+1].(time.Duration)})
	}
	return r
}

// TestPacerWindow checks, without a clock, which requests a window holds:
// its first and last, and how many there are, for constant and staged rates.
func TestPacerWindow(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rate           workloads.Rate
		warmup, window time.Duration
		// first and last are the window's first request and the first after it.
		first, last int64
		// firstAt and lastAt are the intended starts of first and last-1,
		// from the schedule's start.
		firstAt, lastAt time.Duration
	}{
		{"constant, no warm-up", workloads.ConstantRate(100), 0, time.Second, 0, 100, 0, ms(990)},
		{"constant after a warm-up", workloads.ConstantRate(100), time.Second, 2 * time.Second, 100, 300, time.Second, ms(2990)},
		// 0.3 s × 10/s is 3.0000000000000004 in floating point: still 3 requests.
		{"constant, float edge", workloads.ConstantRate(10), 0, ms(300), 0, 3, 0, ms(200)},
		{"constant, between requests", workloads.ConstantRate(3), ms(500), time.Second, 2, 5, ms(2000.0 / 3), ms(4000.0 / 3)},
		{"N/DURATION", workloads.ConstantRate(0.1), 0, 25 * time.Second, 0, 3, 0, 20 * time.Second},
		// The example: 100/s up to 2000/s over 30 s, then 2000/s for a minute.
		{"ramp then hold", stages(100, 2000.0, 30*time.Second, 2000.0, time.Minute), 0, 90 * time.Second,
			0, 151_500, 0, 90*time.Second - ms(0.5)},
		// The warm-up runs at the start rate; the stages begin with the window.
		{"ramp after a warm-up", stages(100, 2000.0, 30*time.Second), 2 * time.Second, 30 * time.Second,
			200, 200 + 31_500, 2 * time.Second, 0},
		{"ramp from zero", stages(0, 100.0, 2*time.Second), 0, 2 * time.Second, 0, 100, 0, 0},
		{"ramp down to zero", stages(1000, 0.0, time.Second), 0, time.Second, 0, 500, 0, 0},
		// A warm-up at a start rate of 0 holds no request.
		{"zero start, warm-up", stages(0, 100.0, 2*time.Second), time.Second, 2 * time.Second, 0, 100, time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPacer(tc.rate, tc.warmup)
			first, last := p.Due(tc.warmup), p.Due(tc.warmup+tc.window)
			if first != tc.first || last != tc.last {
				t.Fatalf("window requests [%d, %d), want [%d, %d)", first, last, tc.first, tc.last)
			}
			if got := p.Intended(first); got < tc.firstAt-time.Nanosecond || got > tc.firstAt+time.Nanosecond {
				t.Errorf("first request %d at %v, want %v", first, got, tc.firstAt)
			}
			lastAt := p.Intended(last - 1)
			if tc.lastAt != 0 && (lastAt-tc.lastAt > time.Microsecond || tc.lastAt-lastAt > time.Microsecond) {
				t.Errorf("last request %d at %v, want %v (±1µs)", last-1, lastAt, tc.lastAt)
			}
			if lastAt < tc.warmup || lastAt >= tc.warmup+tc.window {
				t.Errorf("last request %d at %v, outside the window [%v, %v)", last-1, lastAt, tc.warmup, tc.warmup+tc.window)
			}
			if got := Offered(p, tc.warmup, tc.warmup+tc.window); got != last-first {
				t.Errorf("offered in the window %d, want %d", got, last-first)
			}
		})
	}
}

// TestPacerStageBoundaries checks the counts at and between stage
// boundaries, and that a stage at rate 0 holds no request.
func TestPacerStageBoundaries(t *testing.T) {
	// 100/s for 1 s (100), down to 0 over 500 ms (25), 0 for 1 s, up to
	// 100/s over 500 ms (25), 100/s for 1 s (100).
	p := NewPacer(stages(100, 100.0, time.Second, 0.0, ms(500), 0.0, time.Second, 100.0, ms(500), 100.0, time.Second), 0)
	for _, tc := range []struct {
		from, to time.Duration
		want     int64
	}{
		{0, time.Second, 100},
		{time.Second, ms(1500), 25},
		{ms(1500), ms(2500), 0}, // the stage at rate 0
		{ms(1600), ms(2400), 0},
		{ms(2500), 3 * time.Second, 25},
		{3 * time.Second, 4 * time.Second, 100},
		{4 * time.Second, 5 * time.Second, 0}, // after the last stage
		{0, 4 * time.Second, 250},
		{ms(1250), ms(1500), 6}, // H from 118.75 to 125: requests 119 to 124
		{time.Second, time.Second, 0},
		{2 * time.Second, time.Second, 0},
	} {
		if got := Offered(p, tc.from, tc.to); got != tc.want {
			t.Errorf("offered in [%v, %v) = %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
	for _, tc := range []struct {
		i    int64
		want time.Duration
	}{
		{0, 0}, {99, ms(990)}, {100, time.Second},
		// The ramp down: 100x − 100x² = h, so request 124 (h 24) at 0.4 s.
		{124, ms(1400)},
		// The first after the pause starts as the rate rises again.
		{125, ms(2500)},
		{150, 3 * time.Second},
		{249, ms(3990)},
		// Past the schedule: its end.
		{250, 4 * time.Second}, {1 << 40, 4 * time.Second},
	} {
		if got := p.Intended(tc.i); got < tc.want-time.Nanosecond || got > tc.want+time.Nanosecond {
			t.Errorf("request %d at %v, want %v", tc.i, got, tc.want)
		}
	}
}

// TestPacerAgreesWithItself checks that Due and Intended agree for every
// request: request i is the (i+1)th due, for ramps up and down and holds.
func TestPacerAgreesWithItself(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Pacer
		n    int64
	}{
		{"constant", ConstantPacer{Rate: 777}, 2000},
		{"up", NewPacer(stages(10, 2000.0, 2*time.Second), 0), 2010},
		{"down", NewPacer(stages(2000, 10.0, 2*time.Second), ms(300)), 2610},
		{"up, hold, zero, down", NewPacer(stages(0, 500.0, time.Second, 500.0, time.Second, 0.0, ms(10), 0.0, time.Second, 300.0, time.Second, 0.0, time.Second), 0), 1053},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := time.Duration(-1)
			for i := range tc.n {
				at := tc.p.Intended(i)
				if at < prev {
					t.Fatalf("request %d at %v, before request %d at %v", i, at, i-1, prev)
				}
				prev = at
				if before, after := tc.p.Due(at-time.Nanosecond), tc.p.Due(at+time.Nanosecond); before > i || after < i+1 {
					t.Fatalf("request %d at %v: due 1ns before %d, 1ns after %d; want ≤ %d and ≥ %d", i, at, before, after, i, i+1)
				}
			}
		})
	}
}

func TestPacerEmpty(t *testing.T) {
	p := NewStagedPacer(0, nil)
	if p.Due(time.Hour) != 0 || p.Intended(0) != 0 || Offered(p, 0, time.Hour) != 0 {
		t.Fatal("a pacer without stages must have no request")
	}
	if got := (ConstantPacer{Rate: 5}).Due(-time.Second); got != 0 {
		t.Fatalf("due before the start = %d, want 0", got)
	}
}
