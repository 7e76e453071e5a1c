package failovermap

import "time"

// PredictInput is what the prediction of one failover reads: the measured
// grant rate and unavailability, and the cell's lag, holds and TTL.
type PredictInput struct {
	// RatePerS is the grants per second on the primary that died (on a
	// cluster, its shard's share), measured before the kill.
	RatePerS float64
	// Lag is how much of what the primary granted last the replica lacked.
	Lag time.Duration
	// Unavailable is the time from the kill to the first grant after it.
	Unavailable time.Duration
	// HoldLo and HoldHi bound the uniform hold; equal for a constant one.
	HoldLo, HoldHi time.Duration
	// TTL is every lease's.
	TTL time.Duration
}

// Predict is the double grants to expect from one failover, from first
// principles. A grant made a ≤ lag before the kill is not on the replica,
// and neither is the release just before it by the key's previous holder
// (the waiters take a key within a retry of its release), so the promoted
// replica still holds that previous lease until it expires, TTL after it was
// granted, h_A before. The key is granted again at max(kill + D, kill − a −
// h_A + TTL); the lost holder is inside until kill − a + h_B. So the grant
// is doubled when h_B > a + D and h_A + h_B > TTL, and with grants arriving
// at rate λ,
//
//	E[double grants per failover] = λ · ∫₀^lag P(h_B > a + D ∧ h_A + h_B > TTL) da
//
// with h_A, h_B independent holds. It assumes every key has a waiter, holds
// longer than the lag (so the previous holder's grant did reach the
// replica), and the lost holder's lease still valid while it is inside
// (TTL above the longest hold).
func Predict(in PredictInput) float64 {
	if in.RatePerS <= 0 || in.Lag <= 0 {
		return 0
	}
	const steps = 200
	lag, d, ttl := in.Lag.Seconds(), in.Unavailable.Seconds(), in.TTL.Seconds()
	lo, hi := in.HoldLo.Seconds(), in.HoldHi.Seconds()
	da := lag / steps
	sum := 0.0
	for i := range steps {
		a := (float64(i) + 0.5) * da
		sum += bothOutlast(lo, hi, a+d, ttl) * da
	}
	return in.RatePerS * sum
}

// bothOutlast is P(h_B > x ∧ h_A + h_B > ttl) for h_A, h_B independent and
// uniform over [lo, hi] (constant when lo == hi), integrating over h_B.
func bothOutlast(lo, hi, x, ttl float64) float64 {
	if hi <= lo {
		if lo > x && 2*lo > ttl {
			return 1
		}
		return 0
	}
	const steps = 400
	dh := (hi - lo) / steps
	p := 0.0
	for i := range steps {
		hB := lo + (float64(i)+0.5)*dh
		if hB > x {
			p += above(lo, hi, ttl-hB) * dh / (hi - lo)
		}
	}
	return p
}

// above is P(h > y) for h uniform over [lo, hi].
func above(lo, hi, y float64) float64 {
	switch {
	case y < lo:
		return 1
	case y >= hi:
		return 0
	}
	return (hi - y) / (hi - lo)
}
