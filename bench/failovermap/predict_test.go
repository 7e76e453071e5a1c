package failovermap

import (
	"math"
	"testing"
	"time"
)

// Planted answers worked out by hand from the formula's terms.
func TestPredict(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		in   PredictInput
		want float64
	}{
		// Every grant in the last 0.5 s outlasts the 1 s outage and 2 × 3 s
		// of holds outlast the 5 s TTL: λ × lag.
		{name: "constant hold outlasting the outage: rate × lag", want: 5,
			in: PredictInput{RatePerS: 10, Lag: s / 2, Unavailable: s, HoldLo: 3 * s, HoldHi: 3 * s, TTL: 5 * s}},
		// Only grants younger than hold − D = 0.2 s are still inside.
		{name: "constant hold just past the outage: rate × (hold − outage)", want: 2,
			in: PredictInput{RatePerS: 10, Lag: s / 2, Unavailable: s, HoldLo: 1200 * time.Millisecond, HoldHi: 1200 * time.Millisecond, TTL: 1700 * time.Millisecond}},
		{name: "holds shorter than the outage: none", want: 0,
			in: PredictInput{RatePerS: 100, Lag: s / 2, Unavailable: 2 * s, HoldLo: s / 2, HoldHi: 3 * s / 2, TTL: 2 * s}},
		// The previous holder's lost release keeps its lease on the replica
		// until its TTL: 2 × 1 s of holds do not outlast a 2.5 s TTL.
		{name: "the previous lease outlives the lost holder: none", want: 0,
			in: PredictInput{RatePerS: 10, Lag: s / 2, Unavailable: s / 10, HoldLo: s, HoldHi: s, TTL: 2500 * time.Millisecond}},
		{name: "no lag: none", want: 0,
			in: PredictInput{RatePerS: 10, Lag: 0, Unavailable: s, HoldLo: 3 * s, HoldHi: 3 * s, TTL: 5 * s}},
		// Uniform holds over [2, 4] s, D = 2 s, lag 1 s, TTL far below 2 × 2 s:
		// ∫₀¹ P(h > 2 + a) da = ∫₀¹ (2 − a)/2 da = 0.75.
		{name: "uniform holds: the integral of the share still inside", want: 0.75,
			in: PredictInput{RatePerS: 1, Lag: s, Unavailable: 2 * s, HoldLo: 2 * s, HoldHi: 4 * s, TTL: s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Predict(tt.in); math.Abs(got-tt.want) > 0.01 {
				t.Errorf("Predict = %.4f, want %.4f", got, tt.want)
			}
		})
	}
}
