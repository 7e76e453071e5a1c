package verdict

import (
	"math"
	"testing"
)

// TestRateOver holds the interval to values that follow from the binomial
// law: with no occurrence in n trials the rate p at which that has a 5%
// chance solves (1−p)^n = 0.05; with k of n the ends are the rates at which
// k or more (k or fewer) has a 2.5% chance, checked against the CDF itself.
func TestRateOver(t *testing.T) {
	cases := []struct {
		k, n      int
		low, high float64
	}{
		{0, 5, 0, 0.4507},
		{5, 5, 0.5493, 1},
		{0, 29, 0, 0.0983},
		{1, 10, 0.00253, 0.4450},
		{5, 10, 0.1871, 0.8129},
		{0, 0, 0, 1},
	}
	for _, c := range cases {
		r := RateOver(c.k, c.n)
		if math.Abs(r.Low-c.low) > 5e-4 || math.Abs(r.High-c.high) > 5e-4 {
			t.Errorf("RateOver(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, r.Low, r.High, c.low, c.high)
		}
		if c.k > 0 && c.k < c.n {
			if got := 1 - binomCDF(c.k-1, c.n, r.Low); math.Abs(got-0.025) > 1e-6 {
				t.Errorf("P(X ≥ %d | n=%d, p=low) = %v, want 0.025", c.k, c.n, got)
			}
			if got := binomCDF(c.k, c.n, r.High); math.Abs(got-0.025) > 1e-6 {
				t.Errorf("P(X ≤ %d | n=%d, p=high) = %v, want 0.025", c.k, c.n, got)
			}
		}
	}
}

// TestTrialsToBound: 29 clean trials are the fewest whose upper bound is
// under 10% ((0.9)^28 > 0.05 > (0.9)^29), and the statement reads as the
// verdict prints it.
func TestTrialsToBound(t *testing.T) {
	if got := TrialsToBound(0.10); got != 29 {
		t.Errorf("TrialsToBound(0.10) = %d, want 29", got)
	}
	if got := RateOver(0, 5).String("per failover"); got != "0 of 5 conclusive trial(s): at most 45% per failover at 95%" {
		t.Errorf("got %q", got)
	}
	if got := RateOver(0, 0).String("per trial"); got != "0 of 0 conclusive trial(s): no bound (no trial could have shown it)" {
		t.Errorf("got %q", got)
	}
	if got := RateOver(2, 4).String("per trial"); got != "2 of 4 conclusive trial(s): 6.8%–93% per trial at 95%" {
		t.Errorf("got %q", got)
	}
}
