package compose

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindCluster is a Redis Cluster: M masters (shards), R replicas each.
const KindCluster Kind = "cluster"

// clusterShape is a Redis Cluster reached through one cluster client: a key
// lives on one shard, so only the single-instance locks run on it.
type clusterShape struct{}

// Info describes cluster:M[,R].
func (clusterShape) Info() KindInfo {
	quorum := "it needs independent masters, and one Redis Cluster is not N independent masters (a key lives on one shard); use --lock single or fenced, or --topology redlock:N"
	unmeasured := "it has not been measured on a Redis Cluster; use --lock single or fenced"
	return KindInfo{
		Kind: KindCluster, Example: "cluster:M", Sample: "cluster:3", CanonicalFaultText: "shard 0's master killed",
		Syntax:  fmt.Sprintf("cluster:M[,R] with %d ≤ M ≤ %d masters and 0 ≤ R ≤ %d replicas each (default 1)", MinClusterMasters, MaxMasters, MaxClusterReplicas),
		Backend: lockimpl.BackendRedis, Program: "redis-server", Node: "node",
		Locks:     singleInstanceLocks(),
		LockNotes: map[string]string{lockimpl.LockRedlock: quorum, lockimpl.LockRedsync: quorum, lockimpl.LockRedislock: unmeasured},
		Providers: []string{ProviderLocal, ProviderExternal},
		StartUp:   3 * time.Second,
		// No pipeline: go-redis's cluster auto-pipeliner may resend a
		// command after a network error.
		RunFlags:  []string{"redis", "persistence", "pool-size", "wait-replicas"},
		Targets:   []FaultTarget{TargetNode, TargetMaster, TargetShard},
		ClockShim: true,
		Sharded:   true,
		// isolate: each node's bus runs through a proxy it announces
		// (compose/cluster_bus.go).
		PeerProxy: true,
	}
}

// Parse reads cluster, cluster:M or cluster:M,R.
func (clusterShape) Parse(in, arg string, hasArg bool) (Spec, error) {
	return parseClusterSpec(in, arg, hasArg)
}

// Format renders cluster, cluster:M (one replica each) or cluster:M,R.
func (clusterShape) Format(s Spec) string { return s.clusterString() }

// DataNodes are the masters and their replicas (0 when discovered).
func (clusterShape) DataNodes(s Spec) int { return s.Masters * (1 + s.Replicas) }

// Replicas per shard, unknown for a discovered cluster.
func (clusterShape) Replicas(s Spec) int {
	if s.Masters == 0 {
		return -1
	}
	return s.Replicas
}

// URLs: any node(s) of the cluster; the rest is discovered.
func (clusterShape) URLs(Spec) int { return 0 }

// CanonicalFault kills shard 0's master a fifth into the window (its
// replica is promoted by the cluster).
func (clusterShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical((window / 5).Round(time.Millisecond), "kill master=0"), window
}

// fitFault checks the shard of master=S and shard=S.
func (clusterShape) fitFault(f FaultSpec, s Spec) string {
	sharded := f.Target == TargetMaster || f.Target == TargetShard
	switch {
	case sharded && s.Masters > 0 && f.Shard >= s.Masters:
		return fmt.Sprintf("%s=%d is out of range: %s has shards 0 to %d", f.Target, f.Shard, s, s.Masters-1)
	case f.Target == TargetShard && s.Masters > 0 && s.Replicas == 0:
		return fmt.Sprintf("%s has no replicas to %s", s, f.Kind)
	}
	return ""
}

func (clusterShape) up(ctx context.Context, t *Topology, provider string) error {
	if provider == ProviderExternal {
		return t.upClusterExternal(ctx)
	}
	return t.upClusterLocal(ctx)
}

// parseClusterSpec reads the argument of cluster, cluster:M or cluster:M,R.
func parseClusterSpec(s, arg string, hasArg bool) (Spec, error) {
	if !hasArg {
		return Spec{Kind: KindCluster, Replicas: 1}, nil
	}
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("topology %q: %s; want cluster:M[,R]", s, why)
	}
	ms, rs, hasR := strings.Cut(arg, ",")
	m, err := strconv.Atoi(ms)
	if err != nil || m < MinClusterMasters || m > MaxMasters {
		return bad(fmt.Sprintf("master count must be a whole number from %d to %d", MinClusterMasters, MaxMasters))
	}
	r := 1
	if hasR {
		if r, err = strconv.Atoi(rs); err != nil || r < 0 || r > MaxClusterReplicas {
			return bad(fmt.Sprintf("replica count must be a whole number from 0 to %d", MaxClusterReplicas))
		}
	}
	return Spec{Kind: KindCluster, Masters: m, Replicas: r}, nil
}

// clusterString renders cluster, cluster:M (one replica each) or cluster:M,R.
func (s Spec) clusterString() string {
	switch {
	case s.Masters == 0:
		return "cluster"
	case s.Replicas == 1:
		return fmt.Sprintf("cluster:%d", s.Masters)
	}
	return fmt.Sprintf("cluster:%d,%d", s.Masters, s.Replicas)
}

// JoinClusterPieces puts cluster:M,R back together where a command line
// split a repeatable flag's value at its comma: a piece that is a bare
// number continues the piece before it when that one ends in a cluster spec
// without a replica count, alone ("cluster:3", "0") or after a lock name
// ("single@cluster:3", "0").
func JoinClusterPieces(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		if n := len(out); n > 0 && isWholeNumber(p) {
			prev := out[n-1]
			if at := strings.LastIndexByte(prev, '@'); at >= 0 {
				prev = prev[at+1:]
			}
			if strings.HasPrefix(prev, string(KindCluster)+":") && !strings.Contains(prev, ",") {
				out[n-1] += "," + strings.TrimSpace(p)
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func isWholeNumber(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
