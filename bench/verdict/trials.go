package verdict

import (
	"fmt"
	"math"
)

// Confidence is the level of every interval over trials.
const Confidence = 0.95

// TrialRate is how often something happened over trials that could have
// shown it, with its exact (Clopper–Pearson) 95% interval. With no
// occurrence the interval is one-sided, [0, High]: the most the rate can be
// at 95%; with every trial, [Low, 1].
type TrialRate struct {
	// K trials of N showed it.
	K, N int
	// Low and High bound the rate; both 0 and 1 when N is 0 (nothing known).
	Low, High float64
}

// RateOver estimates a rate from k occurrences in n trials.
func RateOver(k, n int) TrialRate {
	r := TrialRate{K: k, N: n, Low: 0, High: 1}
	if n <= 0 || k < 0 || k > n {
		return r
	}
	alpha := 1 - Confidence
	switch {
	case k == 0:
		r.High = 1 - math.Pow(alpha, 1/float64(n))
	case k == n:
		r.Low = math.Pow(alpha, 1/float64(n))
	default:
		// P(X ≥ k | p) = α/2 gives the low end, P(X ≤ k | p) = α/2 the high.
		r.Low = solveRate(func(p float64) float64 { return 1 - binomCDF(k-1, n, p) }, alpha/2)
		r.High = solveRate(func(p float64) float64 { return -binomCDF(k, n, p) }, -alpha/2)
	}
	return r
}

// solveRate finds p in [0, 1] where the increasing f(p) reaches y.
func solveRate(f func(float64) float64, y float64) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if f(mid) < y {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// binomCDF is P(X ≤ k) for X binomial(n, p).
func binomCDF(k, n int, p float64) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	sum := 0.0
	for i := 0; i <= k; i++ {
		lc, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lc - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return min(1, sum)
}

// TrialsToBound is how many trials without an occurrence bring the rate's
// 95% upper bound under target (0 < target < 1).
func TrialsToBound(target float64) int {
	return int(math.Floor(math.Log(1-Confidence)/math.Log(1-target))) + 1
}

// String states the estimate as a verdict reads it, e.g. "0 of 5 conclusive
// trials: at most 45% per failover at 95%"; per names the unit.
func (r TrialRate) String(per string) string {
	head := fmt.Sprintf("%d of %d conclusive trial(s)", r.K, r.N)
	switch {
	case r.N == 0:
		return head + ": no bound (no trial could have shown it)"
	case r.K == 0:
		return fmt.Sprintf("%s: at most %s %s at 95%%", head, percent(r.High), per)
	case r.K == r.N:
		return fmt.Sprintf("%s: at least %s %s at 95%%", head, percent(r.Low), per)
	}
	return fmt.Sprintf("%s: %s–%s %s at 95%%", head, percent(r.Low), percent(r.High), per)
}

// percent prints a share as a whole percentage, or with one decimal under 10%.
func percent(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}
