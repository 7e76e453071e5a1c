package compose

import "context"

// FaultPause stops the process with SIGSTOP and continues it after for=.
const FaultPause FaultKind = "pause"

// pauseFault stops the target's process (SIGSTOP, docker pause) for for=.
type pauseFault struct{ faultBase }

func (pauseFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultPause, Form: "pause TARGET for=DURATION", For: forNeeded, Promotes: promotesReplicas}
}

// fits: a process lockbench runs, which external servers are not.
func (pauseFault) fits(k KindInfo, provider string) string {
	return processFits(FaultPause, k, provider)
}

func (pauseFault) misfit(t *Topology, n *Node) string { return t.processMisfit(FaultPause, n) }

func (pauseFault) apply(ctx context.Context, t *Topology, _ FaultSpec, n *Node) (func() error, error) {
	return t.process(n).pause(ctx)
}

func (pauseFault) effect(FaultSpec) string { return "its server stalls past the TTL" }
