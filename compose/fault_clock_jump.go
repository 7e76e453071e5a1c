package compose

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// FaultClockJump moves the node's wall clock by a signed amount at once.
const FaultClockJump FaultKind = "clock-jump"

// clockJumpFault moves the target's clock through the clock shim; with
// for= it jumps back when for= ends, without it the clock stays moved.
type clockJumpFault struct{ faultBase }

func (clockJumpFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultClockJump, Form: "clock-jump TARGET ±DURATION [for=DURATION]", For: forOptional, Amount: "±DURATION"}
}

// fits: local servers of a kind whose program the clock shim moves.
func (clockJumpFault) fits(k KindInfo, provider string) string {
	return clockFits(FaultClockJump, k, provider)
}

func (clockJumpFault) arm(o *UpOptions) { o.ClockShim = true }

func (clockJumpFault) misfit(_ *Topology, n *Node) string { return clockMisfit(FaultClockJump, n) }

func (clockJumpFault) apply(_ context.Context, _ *Topology, f FaultSpec, n *Node) (func() error, error) {
	if err := n.clock.jump(f.Jump); err != nil {
		return nil, err
	}
	return func() error { return n.clock.jump(-f.Jump) }, nil
}

func (clockJumpFault) parseAmount(f *FaultSpec, word string) string {
	d, err := time.ParseDuration(word)
	if err != nil || d == 0 || d > maxFaultTime || d < -maxFaultTime {
		return fmt.Sprintf("clock jump %q must be a non-zero duration such as +9s or -2s, at most %s", word, maxFaultTime)
	}
	f.Jump = d
	return ""
}

// drawAmount: a jump of 1s to 20s, forward three times in four (a lease
// expiring early on a jump forward is the hazard), in whole seconds.
func (clockJumpFault) drawAmount(f *FaultSpec, r *rand.Rand) {
	f.Jump = time.Duration(1+r.IntN(20)) * time.Second
	if r.IntN(4) == 0 {
		f.Jump = -f.Jump
	}
}

func (clockJumpFault) formatAmount(f FaultSpec) string {
	if f.Jump > 0 {
		return "+" + f.Jump.String()
	}
	return f.Jump.String()
}

func (clockJumpFault) effect(FaultSpec) string { return "a master's clock jumps past the TTL" }
