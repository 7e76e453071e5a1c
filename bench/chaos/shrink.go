package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Reproduce runs a schedule once and reports whether the run was unsafe.
type Reproduce func(ctx context.Context, s Schedule) (unsafe bool, err error)

// ShrinkOptions bound a shrink.
type ShrinkOptions struct {
	// Tries is how many runs the shrink may make at most.
	Tries int
	// Budget is the wall time it may take (0: no bound but Tries).
	Budget time.Duration
	// MinFor is the shortest for= a fault is shortened to.
	MinFor time.Duration
	// Tail is the time kept after the last fault ends when the window is
	// cut, for its consequences to show.
	Tail time.Duration
	// Clock is the time source (nil: time.Now), for tests.
	Clock func() time.Time
	// Progress is told of each try; nil for none.
	Progress func(t Try)
}

// Try is one run of a smaller schedule.
type Try struct {
	// N counts tries from 1.
	N int
	// Move says how the schedule tried was made smaller.
	Move string
	// Schedule is the schedule tried.
	Schedule Schedule
	// Unsafe says it reproduced.
	Unsafe bool
}

// Shrunk is a shrink's outcome.
type Shrunk struct {
	// Smallest is the smallest schedule that reproduced: the one given
	// when none smaller did.
	Smallest Schedule
	// Tries are the runs made, in order.
	Tries []Try
	// Minimal says every schedule one move smaller than Smallest was tried
	// once (in this round or an earlier one) and none reproduced; false
	// when the tries or the budget ran out first.
	Minimal bool
	// Stopped says why the shrink ended before Minimal, "" when it did not.
	Stopped string
}

// Shrink looks for a smaller schedule than s (which was unsafe) that is
// still unsafe: each round it tries the moves of candidates in order,
// fewest faults first (none at all; without half of them; without one),
// then shorter (a fault's for= halved, the window cut to its last fault's
// end and Tail), then later (the first fault moved halfway towards the
// next one, or the window's cut); the first that reproduces becomes the
// schedule and the rounds begin again. It ends when no move reproduces
// (Minimal), when o.Tries runs were made, when o.Budget is spent, or when
// ctx ends: what it found so far comes back with ctx's error.
func Shrink(ctx context.Context, s Schedule, o ShrinkOptions, run Reproduce) (Shrunk, error) {
	now := o.Clock
	if now == nil {
		now = time.Now
	}
	start := now()
	out := Shrunk{Smallest: s}
	// tried holds the schedules run already: one that did not reproduce is
	// not run again in a later round (no fault at all, say).
	tried := map[string]bool{}
	for {
		progressed := false
		for _, c := range candidates(out.Smallest, o) {
			if tried[c.s.Format("")] {
				continue
			}
			tried[c.s.Format("")] = true
			switch {
			case len(out.Tries) >= o.Tries:
				out.Stopped = fmt.Sprintf("the %d tries were spent", o.Tries)
				return out, nil
			case o.Budget > 0 && now().Sub(start) >= o.Budget:
				out.Stopped = fmt.Sprintf("the budget %s was spent", o.Budget)
				return out, nil
			}
			unsafe, err := run(ctx, c.s)
			if err != nil {
				if ctx.Err() != nil {
					out.Stopped = "interrupted"
				}
				return out, err
			}
			t := Try{N: len(out.Tries) + 1, Move: c.move, Schedule: c.s, Unsafe: unsafe}
			out.Tries = append(out.Tries, t)
			if o.Progress != nil {
				o.Progress(t)
			}
			if unsafe {
				out.Smallest, progressed = c.s, true
				break
			}
		}
		if !progressed {
			out.Minimal = true
			return out, nil
		}
	}
}

// candidate is a schedule one move smaller than another.
type candidate struct {
	move string
	s    Schedule
}

// candidates are the schedules one move smaller than s, in the order
// Shrink tries them; each is strictly smaller (fewer faults, or as many
// and less time struck, or a shorter window, or its first fault later),
// so that shrinking ends.
func candidates(s Schedule, o ShrinkOptions) []candidate {
	var out []candidate
	base := s.clone()
	base.Seed, base.Drawn = 0, false
	n := len(s.Faults)
	if n > 0 {
		none := base.clone()
		none.Faults = nil
		out = append(out, candidate{"no fault at all", none})
	}
	if n > 2 {
		half := n / 2
		first, second := base.clone(), base.clone()
		first.Faults, second.Faults = first.Faults[:half], slices.Clone(second.Faults[half:])
		out = append(out, candidate{fmt.Sprintf("the first %d faults only", half), first},
			candidate{fmt.Sprintf("the last %d faults only", n-half), second})
	}
	if n > 1 {
		for i := range n {
			c := base.clone()
			c.Faults = slices.Delete(c.Faults, i, i+1)
			out = append(out, candidate{fmt.Sprintf("without %s", s.Faults[i]), c})
		}
	}
	for i, f := range s.Faults {
		if half := round(f.For / 2); f.TakesFor() && half >= o.MinFor && half < f.For {
			c := base.clone()
			c.Faults[i].For = half
			out = append(out, candidate{fmt.Sprintf("%s for %s", f.String(), half), c})
		}
	}
	if w := cutWindow(s, o.Tail); w < s.Window {
		c := base.clone()
		c.Window = w
		out = append(out, candidate{fmt.Sprintf("window cut to %s", w), c})
	}
	if n > 0 {
		if later, ok := laterFirst(s, o.Tail); ok {
			c := base.clone()
			c.Faults[0].At = later
			c.sort()
			out = append(out, candidate{fmt.Sprintf("%s at %s", s.Faults[0].String(), later), c})
		}
	}
	return out
}

// cutWindow is the window ending Tail after the last fault ends (never
// shorter than 100ms, the least a run measures).
func cutWindow(s Schedule, tail time.Duration) time.Duration {
	end := time.Duration(0)
	for _, f := range s.Faults {
		end = max(end, f.At+f.For)
	}
	return max(round(end+tail), 100*time.Millisecond)
}

// laterFirst is the first fault's at= moved halfway towards the next
// fault's (or towards the last time it can start and end before the
// window's Tail), when that is at least a step later.
func laterFirst(s Schedule, tail time.Duration) (time.Duration, bool) {
	f := s.Faults[0]
	limit := s.Window - tail - f.For
	if len(s.Faults) > 1 {
		limit = min(limit, s.Faults[1].At)
	}
	later := round(f.At + (limit-f.At)/2)
	return later, later >= f.At+Step && later < s.Window
}
