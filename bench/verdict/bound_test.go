package verdict

import "testing"

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		k, n         int64
		upLo, upHi   float64
		lowLo, lowHi float64
	}{
		{0, 30_000, 0.99e-4, 1.0e-4, 0, 0},           // rule of three; nothing seen bounds nothing below
		{0, 0, 1, 1, 0, 0},                           // nothing measured proves nothing
		{82, 10_000, 0.0095, 0.0100, 0.0068, 0.0070}, // Wilson: 0.0082 observed
		{5000, 10_000, 0.508, 0.509, 0.491, 0.492},   // a coin
		{10_000, 10_000, 0.9997, 1.0, 0.9997, 1.0},   // everything expired
		{20, 1000, 0.028, 0.029, 0.013, 0.014},       // 2%: shown above 1e-4 at any count
	} {
		if got := UpperBound(tc.k, tc.n); got < tc.upLo || got > tc.upHi {
			t.Errorf("UpperBound(%d, %d) = %.5g, want in [%g, %g]", tc.k, tc.n, got, tc.upLo, tc.upHi)
		}
		if got := LowerBound(tc.k, tc.n); got < tc.lowLo || got > tc.lowHi {
			t.Errorf("LowerBound(%d, %d) = %.5g, want in [%g, %g]", tc.k, tc.n, got, tc.lowLo, tc.lowHi)
		}
	}
}
