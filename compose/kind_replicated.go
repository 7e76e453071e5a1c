package compose

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindReplicated is a primary, one replica and three sentinels that fail
// over to the replica when the primary goes down.
const KindReplicated Kind = "replicated"

// replicatedShape is a primary, a replica and three sentinels: the lock
// follows the current primary through a sentinel client.
type replicatedShape struct{}

// Info describes replicated.
func (replicatedShape) Info() KindInfo {
	quorum := "it needs independent masters, and replicated has one primary; use --topology redlock:N or --lock single"
	return KindInfo{
		Kind: KindReplicated, Syntax: "replicated", Example: "replicated", Sample: "replicated", CanonicalFaultText: "the primary killed", Backend: lockimpl.BackendRedis, Program: "redis-server", Node: "node",
		// redsync runs with one pool on the sentinel client, as its users
		// run it against a replicated primary (go-redsync/redsync #163):
		// a quorum of one, which a failover can break like single's.
		Locks:     append(singleInstanceLocks(), lockimpl.LockRedislock, lockimpl.LockRedsync),
		LockNotes: map[string]string{lockimpl.LockRedlock: quorum},
		// It starts its own servers and sentinels: no --redis URLs.
		Providers: []string{ProviderLocal, ProviderDocker},
		StartUp:   3500 * time.Millisecond,
		RunFlags:  []string{"persistence", "pool-size", "pipeline", "wait-replicas"},
		Targets:   []FaultTarget{TargetNode, TargetPrimary, TargetReplica},
		ClockShim: true,
		// The replica's replicaof and the sentinels' monitor name a
		// proxy in front of each data node (compose/replicated_peers.go).
		PeerProxy: true,
	}
}

// Parse reads replicated, which takes no count.
func (replicatedShape) Parse(in, arg string, hasArg bool) (Spec, error) {
	if _, err := (singleShape{}).Parse(in, arg, hasArg); err != nil {
		return Spec{}, err
	}
	return Spec{Kind: KindReplicated, Masters: 1}, nil
}

// Format is "replicated".
func (replicatedShape) Format(Spec) string { return string(KindReplicated) }

// DataNodes are the primary and the replica.
func (replicatedShape) DataNodes(Spec) int { return 2 }

// Replicas: the primary has one.
func (replicatedShape) Replicas(Spec) int { return 1 }

// URLs: none are taken.
func (replicatedShape) URLs(Spec) int { return 0 }

// CanonicalFault kills the primary a fifth into the window: a failover.
func (replicatedShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical((window / 5).Round(time.Millisecond), "kill primary"), window
}

func (replicatedShape) up(ctx context.Context, t *Topology, provider string) error {
	if provider == ProviderDocker {
		return t.upDocker(ctx, t.upDockerReplicated)
	}
	return t.upReplicated(ctx)
}
