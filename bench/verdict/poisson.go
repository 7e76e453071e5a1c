package verdict

import "math"

// CountRate is a count of events over an exposure (failovers, acquisitions)
// with its exact (Garwood) 95% Poisson interval: the events of one unit may
// be many (two double grants in one failover), so a share of trials would
// understate them. With no event the interval is one-sided, [0, High].
type CountRate struct {
	// K events over N units of exposure.
	K int64   `json:"events"`
	N float64 `json:"over"`
	// Rate is K/N; Low and High bound it at 95%.
	Rate float64 `json:"rate"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// PoissonRate estimates events per unit from k events over n units. With n
// of 0 nothing is known, and ok is false.
func PoissonRate(k int64, n float64) (r CountRate, ok bool) {
	if n <= 0 || k < 0 {
		return CountRate{K: k, N: n}, false
	}
	alpha := 1 - Confidence
	r = CountRate{K: k, N: n, Rate: float64(k) / n}
	if k == 0 {
		// One-sided, as RateOver: P(X = 0 | μ) = α.
		r.High = -math.Log(alpha) / n
		return r, true
	}
	// P(X ≥ k | μ) = α/2 gives the low end, P(X ≤ k | μ) = α/2 the high.
	r.Low = solveMean(func(mu float64) float64 { return 1 - poissonCDF(k-1, mu) }, alpha/2, float64(k)) / n
	r.High = solveMean(func(mu float64) float64 { return -poissonCDF(k, mu) }, -alpha/2, float64(k)) / n
	return r, true
}

// Excludes reports whether the interval leaves x out.
func (r CountRate) Excludes(x float64) bool { return x < r.Low || x > r.High }

// poissonCDF is P(X ≤ k) for X ~ Poisson(mu), summed in log space.
func poissonCDF(k int64, mu float64) float64 {
	if mu <= 0 {
		return 1
	}
	sum, term := 0.0, math.Exp(-mu)
	for i := int64(0); i <= k; i++ {
		if i > 0 {
			term *= mu / float64(i)
		}
		sum += term
	}
	return min(1, sum)
}

// solveMean finds mu where the increasing f(mu) reaches y, searching up to
// well past k (the interval's ends lie within a few √k of it).
func solveMean(f func(float64) float64, y, k float64) float64 {
	lo, hi := 0.0, k+20+10*math.Sqrt(k)
	for range 100 {
		mid := (lo + hi) / 2
		if f(mid) < y {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
