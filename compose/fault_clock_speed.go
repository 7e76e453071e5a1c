package compose

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// FaultClockSpeed makes the node's wall clock run at a factor of real time.
const FaultClockSpeed FaultKind = "clock-speed"

// maxClockSpeed bounds clock-speed's factor.
const maxClockSpeed = 1000

// clockSpeedFault runs the target's clock at a factor of real time through
// the clock shim, for for=.
type clockSpeedFault struct{ faultBase }

func (clockSpeedFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultClockSpeed, Form: "clock-speed TARGET FACTOR for=DURATION", For: forNeeded, Amount: "FACTOR"}
}

// fits: local servers of a kind whose program the clock shim moves.
func (clockSpeedFault) fits(k KindInfo, provider string) string {
	return clockFits(FaultClockSpeed, k, provider)
}

func (clockSpeedFault) arm(o *UpOptions) { o.ClockShim = true }

func (clockSpeedFault) misfit(_ *Topology, n *Node) string { return clockMisfit(FaultClockSpeed, n) }

func (clockSpeedFault) apply(_ context.Context, _ *Topology, f FaultSpec, n *Node) (func() error, error) {
	if err := n.clock.setSpeed(f.Speed); err != nil {
		return nil, err
	}
	// The clock keeps what it gained: a clock that ran fast is ahead
	// afterwards, as a real one would be until NTP steps it back.
	return func() error { return n.clock.setSpeed(1) }, nil
}

func (clockSpeedFault) parseAmount(f *FaultSpec, word string) string {
	s, err := strconv.ParseFloat(word, 64)
	if err != nil || math.IsNaN(s) || s <= 0 || s > maxClockSpeed {
		return fmt.Sprintf("clock speed %q must be a factor above 0 and at most %d, such as 2.0 or 0.5", word, maxClockSpeed)
	}
	f.Speed = s
	return ""
}

// drawAmount: one of the factors that make a lease's clock run fast or
// slow enough to matter.
func (clockSpeedFault) drawAmount(f *FaultSpec, r *rand.Rand) {
	factors := []float64{0.25, 0.5, 2, 4, 10}
	f.Speed = factors[r.IntN(len(factors))]
}

func (clockSpeedFault) formatAmount(f FaultSpec) string {
	return strconv.FormatFloat(f.Speed, 'g', -1, 64)
}
