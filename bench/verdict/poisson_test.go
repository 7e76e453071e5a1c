package verdict

import (
	"math"
	"testing"
)

// The Garwood interval's ends are the gamma quantiles; the table's values
// are the standard ones (e.g. Ulm 1990), to 3 decimals.
func TestPoissonRate(t *testing.T) {
	tests := []struct {
		name      string
		k         int64
		n         float64
		low, high float64
		ok        bool
	}{
		{name: "no event over 10 is at most 0.3 (ln 20 / 10)", k: 0, n: 10, low: 0, high: 0.29957, ok: true},
		{name: "one event", k: 1, n: 1, low: 0.0253, high: 5.5716, ok: true},
		{name: "five events over 5", k: 5, n: 5, low: 1.6235 / 5, high: 11.6683 / 5, ok: true},
		{name: "nothing measured", k: 0, n: 0, ok: false},
		{name: "a negative count is nothing known", k: -1, n: 3, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := PoissonRate(tt.k, tt.n)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if math.Abs(r.Low-tt.low) > 1e-3 || math.Abs(r.High-tt.high) > 1e-3 {
				t.Errorf("interval [%.4f, %.4f], want [%.4f, %.4f]", r.Low, r.High, tt.low, tt.high)
			}
			if r.Excludes(r.Rate) {
				t.Errorf("interval [%g, %g] excludes its own rate %g", r.Low, r.High, r.Rate)
			}
		})
	}
}
