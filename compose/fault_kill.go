package compose

import "context"

// FaultKill sends SIGKILL: a crash, nothing flushed, the node stays down.
const FaultKill FaultKind = "kill"

// killFault kills the target's process: local servers and containers, not
// external ones.
type killFault struct{ faultBase }

func (killFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultKill, Form: "kill TARGET", For: forNone, NoFor: "a killed node stays down, restart brings it back",
		Promotes: promotesReplicas, Lasting: true}
}

// fits: a process lockbench runs, which external servers are not.
func (killFault) fits(k KindInfo, provider string) string { return processFits(FaultKill, k, provider) }

func (killFault) misfit(t *Topology, n *Node) string { return t.processMisfit(FaultKill, n) }

func (killFault) apply(ctx context.Context, t *Topology, _ FaultSpec, n *Node) (func() error, error) {
	return nil, t.process(n).kill(ctx)
}

func (killFault) effect(f FaultSpec) string {
	switch f.Target {
	case TargetPrimary:
		return "its primary is killed (a failover)"
	case TargetNode:
		return "one of its masters is killed"
	}
	return "its " + f.TargetString() + " is killed"
}
