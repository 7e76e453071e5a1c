package compose

import (
	"context"
	"time"
)

// FaultRestart kills the node and starts it again on the same port with
// the topology's persistence, after UpOptions.RestartDelay.
const FaultRestart FaultKind = "restart"

// restartFault kills the target's process and starts it again after the
// restart delay (--restart-delay), which is its only duration.
type restartFault struct{ faultBase }

func (restartFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultRestart, Form: "restart TARGET", For: forNone, NoFor: "a killed node stays down, restart brings it back",
		RunFlags: []string{"restart-delay"}, Promotes: promotesReplicas}
}

// fits: a process lockbench runs, which external servers are not.
func (restartFault) fits(k KindInfo, provider string) string {
	return processFits(FaultRestart, k, provider)
}

func (restartFault) misfit(t *Topology, n *Node) string { return t.processMisfit(FaultRestart, n) }

func (restartFault) apply(ctx context.Context, t *Topology, _ FaultSpec, n *Node) (func() error, error) {
	return t.process(n).restart(ctx)
}

// undoAfter: a restart always comes back, after the restart delay.
func (restartFault) undoAfter(_ FaultSpec, restartDelay time.Duration) time.Duration {
	return max(restartDelay, time.Nanosecond)
}

func (restartFault) effect(FaultSpec) string { return "a master restarts empty" }
