package results

import (
	"math"
	"testing"
)

func TestLongestGap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		series  []SeriesPoint
		dur     float64
		gap, at float64
		ok      bool
	}{
		{name: "steady", dur: 3, gap: 0.2, at: 2.8, ok: true, series: []SeriesPoint{
			{Acquired: 5, FirstAcquiredS: 0.1, LastAcquiredS: 0.95}, {Acquired: 5, FirstAcquiredS: 1.05, LastAcquiredS: 1.9},
			{Acquired: 5, FirstAcquiredS: 2.0, LastAcquiredS: 2.8}}},
		{name: "an outage over a whole second", dur: 4, gap: 2.3, at: 0.9, ok: true, series: []SeriesPoint{
			{Acquired: 5, FirstAcquiredS: 0.1, LastAcquiredS: 0.9}, {}, {Acquired: 2, FirstAcquiredS: 3.2, LastAcquiredS: 3.9}, {Acquired: 1, FirstAcquiredS: 3.95, LastAcquiredS: 3.95}}},
		{name: "nothing acquired", dur: 2, gap: 2, at: 0, ok: true, series: []SeriesPoint{{}, {}}},
		{name: "an older result without times", dur: 2, series: []SeriesPoint{{}, {Acquired: 3}}},
	} {
		gap, at, ok := LongestGap(tc.series, tc.dur)
		if ok != tc.ok || (ok && (math.Abs(gap-tc.gap) > 1e-9 || math.Abs(at-tc.at) > 1e-9)) {
			t.Errorf("%s: LongestGap = %v at %v, %v; want %v at %v, %v", tc.name, gap, at, ok, tc.gap, tc.at, tc.ok)
		}
	}
}

func TestMergeKeepsAcquisitionTimes(t *testing.T) {
	a := &Result{Series: []SeriesPoint{{ElapsedS: 1, Acquired: 1, FirstAcquiredS: 0.5, LastAcquiredS: 0.6}}}
	b := &Result{Series: []SeriesPoint{{ElapsedS: 1, Acquired: 1, FirstAcquiredS: 0.2, LastAcquiredS: 0.4}}}
	m := mergeSeries([]*Result{a, b})
	if len(m) != 1 || m[0].FirstAcquiredS != 0.2 || m[0].LastAcquiredS != 0.6 {
		t.Fatalf("merged %+v", m)
	}
}
