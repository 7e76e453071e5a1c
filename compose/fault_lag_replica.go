package compose

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// FaultLagReplica holds the replication stream on the replica (CLIENT
// PAUSE WRITE) so writes acknowledged by the primary are not there yet.
// While it lasts the sentinels cannot promote the replica: their hello
// PUBLISH counts as a write, blocks, and stalls their PINGs and INFO on
// that link, so the replica looks down. To lose a write in a failover,
// end the lag shortly after killing the primary: the replica drops the
// stream it held when its primary's link breaks, and is promoted once the
// pause is over.
const FaultLagReplica FaultKind = "lag-replica"

// lagReplicaFault holds a Redis replica's stream: the replica of a
// replicated topology, or of cluster shard S.
type lagReplicaFault struct{ faultBase }

func (lagReplicaFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultLagReplica, Form: "lag-replica [shard=S] for=DURATION", For: forNeeded,
		Targets: []FaultTarget{TargetReplica, TargetShard}, DefaultTarget: TargetReplica,
		TargetRule: "lag-replica always acts on a replica; drop the target, or name a cluster shard with shard=S"}
}

// fits: a kind with a replica to lag (replica, or a cluster shard's), from
// any provider: CLIENT PAUSE works on any reachable server.
func (lagReplicaFault) fits(k KindInfo, provider string) string {
	if !slices.Contains(k.Targets, TargetReplica) && !slices.Contains(k.Targets, TargetShard) {
		return notTaken(FaultLagReplica, k, provider)
	}
	return ""
}

func (lagReplicaFault) apply(ctx context.Context, t *Topology, f FaultSpec, n *Node) (func() error, error) {
	return lagReplica(ctx, t.adminOptionsFor(n), f.For)
}

// lagReplica sends CLIENT PAUSE <ms> WRITE to the replica, straight to the
// server and not through its proxy. The replica keeps its link to the primary
// and reads the stream but does not apply it; CLIENT UNPAUSE (the undo) or
// the pause's own timeout lets it catch up.
func lagReplica(ctx context.Context, o *redis.Options, d time.Duration) (func() error, error) {
	ms := (d + time.Millisecond - 1).Milliseconds()
	if err := adminDo(ctx, o, "CLIENT", "PAUSE", ms, "WRITE"); err != nil {
		return nil, fmt.Errorf("CLIENT PAUSE WRITE: %w", err)
	}
	return func() error {
		if err := adminDo(context.Background(), o, "CLIENT", "UNPAUSE"); err != nil {
			return fmt.Errorf("CLIENT UNPAUSE on %s: %w", o.Addr, err)
		}
		return nil
	}, nil
}
