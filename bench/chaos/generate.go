package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// Draw says how a schedule is drawn.
type Draw struct {
	// Window is the run's measured window.
	Window time.Duration
	// Rate is the mean number of faults a minute; their start times are a
	// Poisson process at this rate, pushed later where they would overlap
	// more than MaxOverlap allows.
	Rate float64
	// MinFor and MaxFor bound a drawn for= (uniform, in steps of Step).
	MinFor, MaxFor time.Duration
	// MaxOverlap is how many faults may be in effect at once; faults in
	// effect together are never of one kind, and strike servers surely
	// apart (apart).
	MaxOverlap int
	// Lead is the start of the window without faults (the lock's normal
	// state first); Tail is its end, after the last fault ends, in which a
	// fault's consequences can still show.
	Lead, Tail time.Duration
	// Hold is how long a fault without for= (a restart, an expired
	// session) counts as in effect, for the overlap rule.
	Hold time.Duration
}

// Step is the grain of drawn times: a schedule reads as round numbers.
const Step = 100 * time.Millisecond

// DefaultDraw is the draw of a window w: a fault every 10 s on average,
// each 1 to 5 s long, at most two at once, none in the first 2 s or the
// last 3 s.
func DefaultDraw(w time.Duration) Draw {
	return Draw{Window: w, Rate: 6, MinFor: time.Second, MaxFor: 5 * time.Second, MaxOverlap: 2,
		Lead: 2 * time.Second, Tail: 3 * time.Second, Hold: time.Second}
}

// Check refuses a draw that could place no fault or whose bounds are
// crossed; the error names the setting.
func (d Draw) Check() error {
	switch {
	case d.Rate <= 0 || d.Rate > 6000:
		return fmt.Errorf("rate %g: want more than 0 and at most 6000 faults a minute", d.Rate)
	case d.MinFor < Step || d.MaxFor < d.MinFor || d.MaxFor > maxWindow:
		return fmt.Errorf("for= from %s to %s: want at least %s, the least first", d.MinFor, d.MaxFor, Step)
	case d.MaxOverlap < 1 || d.MaxOverlap > 100:
		return fmt.Errorf("overlap %d: want 1 to 100 faults in effect at once", d.MaxOverlap)
	case d.Window-d.Lead-d.Tail < d.MinFor:
		return fmt.Errorf("window %s leaves less than one fault's for= (%s) between the first %s and the last %s without faults",
			d.Window, d.MinFor, d.Lead, d.Tail)
	}
	return nil
}

// occupied is one placed fault's time in effect, for the overlap rule.
type occupied struct {
	start, end time.Duration
	kind       compose.FaultKind
	spec       compose.FaultSpec
}

// Generate draws the schedule of seed from choices (compose.ChaosChoices):
// the same seed, choices and draw give the same schedule, on any machine
// (math/rand/v2's PCG is specified, not an implementation detail).
func Generate(seed uint64, choices []compose.FaultSpec, d Draw) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x6c6f636b62656e63))
	s := Schedule{Seed: seed, Drawn: true, Window: d.Window}
	last := d.Window - d.Tail
	mean := float64(time.Minute) / d.Rate
	var placed []occupied
	at := d.Lead
	for len(s.Faults) < maxScheduleFaults {
		gap := time.Duration(r.ExpFloat64() * mean)
		if len(s.Faults) == 0 {
			// The first fault falls within the first mean gap that leaves
			// it room, so that a short window still gets one.
			room := max(last-d.Lead-d.MinFor, 0)
			gap = time.Duration(r.Float64() * float64(min(time.Duration(mean), room)))
		}
		at += round(gap)
		f := choices[r.IntN(len(choices))]
		compose.DrawAmount(&f, r)
		hold := d.Hold
		if f.TakesFor() {
			steps := int64((d.MaxFor - d.MinFor) / Step)
			f.For = d.MinFor + time.Duration(r.Int64N(steps+1))*Step
			hold = f.For
		}
		at = free(placed, at, hold, f, d.MaxOverlap)
		if at+hold > last && f.TakesFor() && last-at >= d.MinFor {
			// The window's end cuts it short rather than leave it out.
			f.For = round(last - at - Step/2)
			hold = f.For
		}
		if at+hold > last {
			break
		}
		f.At = at
		placed = append(placed, occupied{start: at, end: at + hold, kind: f.Kind, spec: f})
		s.Faults = append(s.Faults, f)
	}
	return s
}

// free is the earliest time from at when f may start and last hold
// without more than max faults in effect at once, nor two of one kind or
// on one target.
func free(placed []occupied, at, hold time.Duration, f compose.FaultSpec, max int) time.Duration {
	for {
		n, clash, next := 0, false, time.Duration(-1)
		for _, o := range placed {
			if o.end <= at || o.start >= at+hold {
				continue
			}
			n++
			clash = clash || o.kind == f.Kind || !apart(o.spec, f)
			if next < 0 || o.end < next {
				next = o.end
			}
		}
		if n < max && !clash {
			return at
		}
		at = next
	}
}

// apart reports whether a and b surely strike different servers: two data
// nodes by index, or two cluster shards. A role (primary, leader, a
// holder's session, a minority) may be any node when it applies, so it is
// apart from nothing.
func apart(a, b compose.FaultSpec) bool {
	switch {
	case a.Target == compose.TargetNode && b.Target == compose.TargetNode:
		return a.Node != b.Node
	case (a.Target == compose.TargetMaster || a.Target == compose.TargetShard) && (b.Target == compose.TargetMaster || b.Target == compose.TargetShard):
		return a.Shard != b.Shard
	}
	return false
}

// round is d to the schedule's grain.
func round(d time.Duration) time.Duration { return d.Round(Step) }
