package verdict

import (
	"fmt"

	"github.com/lockbench/lockbench/results"
)

// Availability is a run's availability in time under a fault (the rule
// Available): which of its seconds had at least one acquisition. A stalled
// attempt answers nothing, so a server paused most of the window is
// unavailable most of it, however few attempts failed outright.
type Availability struct {
	// FaultShare is the share of the seconds overlapping the fault's span
	// (from its firing to its undoing, or to the window's end) with an
	// acquisition; nil when the run has no fault that fired.
	FaultShare *float64 `json:"fault_span_share,omitempty"`
	// WindowShare is the same over the whole window.
	WindowShare float64 `json:"window_share"`
	// LongestGapS is the longest time without an acquisition: exact from
	// the series' first and last acquisition of each second where the
	// result has them (results.LongestGap), else the longest run of whole
	// seconds without one.
	LongestGapS float64 `json:"longest_gap_s"`
	// FaultSpanS is the fault's span in seconds (0 without one).
	FaultSpanS float64 `json:"fault_span_s,omitempty"`
}

// AvailabilityOf reads a run's availability in time from its per-second
// series; false when the run has no series (nothing to judge: not measured).
func AvailabilityOf(r *results.Result) (Availability, bool) {
	if r == nil || len(r.Series) == 0 {
		return Availability{}, false
	}
	from, to, faulted := faultSpan(r)
	var a Availability
	var up, spanSeconds, spanUp int
	gap, start := 0.0, 0.0
	for _, p := range r.Series {
		width := p.ElapsedS - start
		inSpan := faulted && start < to && p.ElapsedS > from
		if p.Acquired > 0 {
			up++
			gap = 0
		} else {
			gap += width
			a.LongestGapS = max(a.LongestGapS, gap)
		}
		if inSpan {
			spanSeconds++
			if p.Acquired > 0 {
				spanUp++
			}
		}
		start = p.ElapsedS
	}
	if exact, _, ok := results.LongestGap(r.Series, r.DurationS); ok {
		a.LongestGapS = exact
	}
	a.WindowShare = float64(up) / float64(len(r.Series))
	if faulted && spanSeconds > 0 {
		share := float64(spanUp) / float64(spanSeconds)
		a.FaultShare, a.FaultSpanS = &share, to-from
	}
	return a, true
}

// faultSpan is the span of a run's faults that fired: from the first one's
// firing to the last one's undoing (the window's end where one has none).
func faultSpan(r *results.Result) (from, to float64, ok bool) {
	end := r.DurationS
	if n := len(r.Series); n > 0 {
		end = max(end, r.Series[n-1].ElapsedS)
	}
	for _, f := range r.Faults {
		if f.Error != "" {
			continue
		}
		stop := f.EndS
		if stop <= f.AtS {
			stop = end
		}
		if !ok || f.AtS < from {
			from = f.AtS
		}
		to, ok = max(to, stop), true
	}
	return from, to, ok
}

// Text is the availability as a table cell: the fault span's share, then
// the window's ("8%/15%"), or the window's alone without a fault.
func (a Availability) Text() string {
	if a.FaultShare == nil {
		return fmt.Sprintf("-/%.0f%%", 100*a.WindowShare)
	}
	return fmt.Sprintf("%.0f%%/%.0f%%", 100**a.FaultShare, 100*a.WindowShare)
}
