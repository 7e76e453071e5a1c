package verdict

import "math"

// confidenceZ is the one-sided 95% normal quantile.
const confidenceZ = 1.6449

// UpperBound is the one-sided 95% upper confidence bound on a rate from k
// events in n trials: the rule of three (−ln 0.05 / n) for k = 0, Wilson's
// score bound otherwise.
func UpperBound(k, n int64) float64 {
	if n == 0 {
		return 1
	}
	if k == 0 {
		return min(1, 2.9957/float64(n))
	}
	centre, spread, scale := wilson(k, n)
	return min(1, (centre+spread)/scale)
}

// LowerBound is the one-sided 95% lower confidence bound on a rate from k
// events in n trials (Wilson's score bound; 0 for k = 0): a rate whose lower
// bound is above a target is shown to miss it, however many more samples
// came.
func LowerBound(k, n int64) float64 {
	if n == 0 || k == 0 {
		return 0
	}
	centre, spread, scale := wilson(k, n)
	return max(0, (centre-spread)/scale)
}

// wilson is Wilson's score interval's centre, half-width and scale for k of n.
func wilson(k, n int64) (centre, spread, scale float64) {
	p, nf, z2 := float64(k)/float64(n), float64(n), confidenceZ*confidenceZ
	centre = p + z2/(2*nf)
	spread = confidenceZ * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return centre, spread, 1 + z2/nf
}

// MoreSamples is how many more trials than n it takes, at the observed rate
// k/n, for the upper bound to come within target; ok is false when the
// observed rate itself is not below the target (no number of samples at
// that rate proves it).
func MoreSamples(k, n int64, target float64) (more int64, ok bool) {
	if n == 0 || float64(k)/float64(n) >= target {
		return 0, false
	}
	rate := float64(k) / float64(n)
	bound := func(m int64) float64 { return UpperBound(int64(math.Round(rate*float64(m))), m) }
	hi := n
	for bound(hi) > target {
		if hi > 1<<40 {
			return 0, false
		}
		hi *= 2
	}
	lo := n
	for lo < hi {
		mid := lo + (hi-lo)/2
		if bound(mid) <= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi - n, true
}
