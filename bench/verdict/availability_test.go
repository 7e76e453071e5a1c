package verdict

import (
	"testing"

	"github.com/lockbench/lockbench/results"
)

// series is a window of one-second points, acquiring where up is true.
func series(up ...bool) []results.SeriesPoint {
	out := make([]results.SeriesPoint, len(up))
	for i, u := range up {
		out[i] = results.SeriesPoint{ElapsedS: float64(i + 1)}
		if u {
			out[i].Acquired = 100
		}
	}
	return out
}

// TestAvailabilityInTime plants a server paused from 1s to 12s of a 13s
// window: it acquired in 2 of 13 seconds (15%), in none of the 11 seconds
// the pause spanned, with an 11s gap; a kill at 0s the window rode through
// reads near 100%.
func TestAvailabilityInTime(t *testing.T) {
	paused := &results.Result{DurationS: 13, Series: series(true, false, false, false, false, false, false, false, false, false, false, false, true),
		Faults: []results.FaultEvent{{Spec: "at=1s pause node=0 for=11s", AtS: 1, EndS: 12}}}
	a, ok := AvailabilityOf(paused)
	if !ok || a.FaultShare == nil {
		t.Fatalf("availability %+v ok %v", a, ok)
	}
	if a.WindowShare < 0.15 || a.WindowShare > 0.16 || *a.FaultShare != 0 || a.LongestGapS != 11 || a.Text() != "0%/15%" {
		t.Errorf("paused: %+v (%s), want 15%% of the window, 0%% of the span, an 11s gap", a, a.Text())
	}
	killed := &results.Result{DurationS: 3, Series: series(true, true, true), Faults: []results.FaultEvent{{Spec: "at=0s kill node=0", AtS: 0}}}
	if a, _ := AvailabilityOf(killed); a.Text() != "100%/100%" || a.LongestGapS != 0 {
		t.Errorf("killed, still acquiring: %+v (%s)", a, a.Text())
	}
	if _, ok := AvailabilityOf(&results.Result{}); ok {
		t.Error("a run without a series is judged available")
	}
}
