package verdict

import (
	"fmt"
	"math"
)

// NoDifferenceShown is what a table or sentence says of two rates that an
// exact test at 95% does not tell apart.
const NoDifferenceShown = "no difference shown"

// Difference is an exact two-sample test of two rates at 95%.
type Difference struct {
	// Shown is true where the two-sided p-value is under 5%.
	Shown bool `json:"shown"`
	// P is the two-sided p-value.
	P float64 `json:"p"`
}

// String is "difference shown (p 0.012)" or NoDifferenceShown with its p.
func (d Difference) String() string {
	if d.Shown {
		return fmt.Sprintf("difference shown (exact test, p %.3f)", d.P)
	}
	return fmt.Sprintf("%s (exact test, p %.2f)", NoDifferenceShown, d.P)
}

// DifferTrials is Fisher's exact test of k1 of n1 against k2 of n2 trials:
// the two-sided p-value sums the probabilities, under one common rate, of
// every table with the same margins no likelier than the one observed.
func DifferTrials(k1, n1, k2, n2 int) Difference {
	if n1 <= 0 || n2 <= 0 {
		return Difference{P: 1}
	}
	k, n := k1+k2, n1+n2
	logP := func(x int) float64 { return lchoose(n1, x) + lchoose(n2, k-x) - lchoose(n, k) }
	observed := logP(k1)
	p := 0.0
	for x := max(0, k-n2); x <= min(k, n1); x++ {
		// A relative tolerance keeps tables exactly as likely as the
		// observed one in the tail despite rounding.
		if lp := logP(x); lp <= observed+1e-7 {
			p += math.Exp(lp)
		}
	}
	p = min(1, p)
	return Difference{Shown: p < 1-Confidence, P: p}
}

// DifferCounts tests two Poisson rates, k1 events over e1 units of exposure
// against k2 over e2 (double grants over failovers): given k1+k2 events,
// k1 is binomial with share e1/(e1+e2) when the rates are equal, and the
// two-sided p-value sums the outcomes no likelier than k1.
func DifferCounts(k1 int64, e1 float64, k2 int64, e2 float64) Difference {
	if e1 <= 0 || e2 <= 0 || k1 < 0 || k2 < 0 {
		return Difference{P: 1}
	}
	k := int(k1 + k2)
	share := e1 / (e1 + e2)
	logP := func(x int) float64 {
		return lchoose(k, x) + float64(x)*math.Log(share) + float64(k-x)*math.Log1p(-share)
	}
	observed := logP(int(k1))
	p := 0.0
	for x := 0; x <= k; x++ {
		if lp := logP(x); lp <= observed+1e-7 {
			p += math.Exp(lp)
		}
	}
	p = min(1, p)
	return Difference{Shown: p < 1-Confidence, P: p}
}

// lchoose is ln(n choose k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
