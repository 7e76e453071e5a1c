package compose

import (
	"context"
	"slices"
)

// FaultFailover runs CLUSTER FAILOVER on a replica of a cluster shard: a
// graceful, coordinated promotion (no write is lost).
const FaultFailover FaultKind = "failover"

// failoverFault promotes the replica of cluster shard S (shard=S), from any
// provider: the command works on any reachable server.
type failoverFault struct{ faultBase }

func (failoverFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultFailover, Form: "failover shard=S", Targets: []FaultTarget{TargetShard},
		TargetRule: "failover needs shard=S (the cluster shard whose replica takes over)",
		For:        forNone, NoFor: "the promoted replica stays master", Promotes: promotesTarget}
}

// fits: a kind with cluster shards.
func (failoverFault) fits(k KindInfo, provider string) string {
	if !slices.Contains(k.Targets, TargetShard) {
		return notTaken(FaultFailover, k, provider)
	}
	return ""
}

func (failoverFault) apply(ctx context.Context, t *Topology, _ FaultSpec, n *Node) (func() error, error) {
	return nil, adminDo(ctx, t.adminOptionsFor(n), "CLUSTER", "FAILOVER")
}
