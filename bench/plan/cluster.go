package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// isCluster reports whether the topology is a Redis Cluster.
func isCluster(topo *compose.Topology) bool { return topo.Spec.Kind == compose.KindCluster }

// lockNodesFor are what the lock sends its commands through: on a cluster
// one ClusterClient (the lock is a single-instance lock per key, and the
// client routes each key to its shard's master); elsewhere lockNodes.
func lockNodesFor(topo *compose.Topology, pl Plan, clients []*redis.Client) ([]redis.Cmdable, error) {
	if !isCluster(topo) {
		return lockNodes(clients, pl.Pipeline)
	}
	return []redis.Cmdable{topo.ClusterClient(compose.ClientOptions{PoolSize: pl.PoolSize})}, nil
}

// masterClients are small clients, one per master as the topology came up,
// for PING and the server version on a cluster (the lock's own traffic goes
// through its ClusterClient).
func masterClients(topo *compose.Topology) []*redis.Client {
	clients, _ := clusterMasters(topo)
	return clients
}

// clusterMasters are a small client and the address of each current master.
func clusterMasters(topo *compose.Topology) ([]*redis.Client, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return smallClients(topo, masterIndexes(ctx, topo))
}

// smallClients are a client with a pool of two, and the address, of each
// data node in idx: for INFO, PING and cleanup, apart from the lock's pool.
func smallClients(topo *compose.Topology, idx []int) ([]*redis.Client, []string) {
	data := topo.DataNodes()
	clients, addrs := make([]*redis.Client, len(idx)), make([]string, len(idx))
	for i, n := range idx {
		clients[i], addrs[i] = topo.Client(n, compose.ClientOptions{PoolSize: 2}), data[n].Addr
	}
	return clients, addrs
}

// masterIndexes are the current masters' DataNodes indexes, or if no node
// answers, the nodes started (or discovered) as masters: the run then fails
// on their PING with a clear message instead of having no server at all.
func masterIndexes(ctx context.Context, topo *compose.Topology) []int {
	if idx, err := topo.MasterIndexes(ctx); err == nil && len(idx) > 0 {
		return idx
	}
	var idx []int
	for i, n := range topo.DataNodes() {
		if n.Role == compose.RoleMaster {
			idx = append(idx, i)
		}
	}
	return idx
}

// adminFor are the clients INFO and cleanup use, with their addresses: one
// per data node, or on a cluster one per master as the window starts
// (replicas replay their master's writes, and their counters would count
// each command twice), so servers.nodes[] shows each master's share.
func adminFor(topo *compose.Topology) ([]*redis.Client, []string) {
	if !isCluster(topo) {
		return topo.Clients(compose.ClientOptions{PoolSize: 2}), topo.Addrs()
	}
	return clusterMasters(topo)
}

// cleanupClients are the clients whose keys cleanup scans: the live admin
// clients, or on a cluster every current master (after a failover a
// promoted replica holds the shard's keys).
func cleanupClients(ctx context.Context, topo *compose.Topology, admin []*redis.Client, addrs []string, down map[string]string) []*redis.Client {
	if !isCluster(topo) {
		return liveClients(admin, addrs, down)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	idx, err := topo.MasterIndexes(ctx)
	if err != nil {
		return liveClients(admin, addrs, down)
	}
	clients, _ := smallClients(topo, idx)
	return clients
}

// clusterFaultMisfit refuses, before any server starts, faults a cluster
// cannot take.
func clusterFaultMisfit(f compose.FaultSpec, topo compose.Spec, external bool) string {
	switch {
	case f.Target == compose.TargetPrimary || f.Target == compose.TargetReplica:
		return fmt.Sprintf("a cluster has a master and replicas per shard; target %s does not fit, use master=S, shard=S or node=N", f.Target)
	case external && f.Kind != compose.FaultLatency && f.Kind != compose.FaultPartition &&
		f.Kind != compose.FaultFailover && f.Kind != compose.FaultLagReplica:
		return "external servers (--redis) cannot be killed, paused, restarted or have their clocks moved"
	case (f.Target == compose.TargetMaster || f.Target == compose.TargetShard) && topo.Masters > 0 && f.Shard >= topo.Masters:
		return fmt.Sprintf("%s=%d but %s has shards 0 to %d", f.Target, f.Shard, topo, topo.Masters-1)
	case f.Target == compose.TargetShard && topo.Masters > 0 && topo.Replicas == 0:
		return fmt.Sprintf("%s has no replicas to %s", topo, f.Kind)
	case f.Target == compose.TargetNode && topo.Masters > 0 && f.Node >= topo.Masters*(1+topo.Replicas):
		return fmt.Sprintf("node=%d but %s has data nodes 0 to %d (masters first, then replicas)", f.Node, topo, topo.Masters*(1+topo.Replicas)-1)
	}
	return ""
}

// nonClusterFaultMisfit refuses the cluster-only fault targets elsewhere.
func nonClusterFaultMisfit(f compose.FaultSpec) string {
	if f.Target == compose.TargetMaster || f.Target == compose.TargetShard || f.Kind == compose.FaultFailover {
		return fmt.Sprintf("%s %s needs --topology cluster:M", f.Kind, f.TargetString())
	}
	return ""
}

// unlinkEach deletes keys one UNLINK each, in one pipeline: on a cluster
// node the keys of one SCAN page lie in many slots, and one UNLINK of
// several would be refused (CROSSSLOT).
func unlinkEach(ctx context.Context, c *redis.Client, keys []string) (int64, error) {
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Unlink(ctx, k)
		}
		return nil
	})
	var n int64
	for _, cmd := range cmds {
		if ic, ok := cmd.(*redis.IntCmd); ok {
			n += ic.Val()
		}
	}
	return n, err
}

// clusterLockMisfit says why lock cannot run on a cluster, or "".
func clusterLockMisfit(lock string) string {
	switch lock {
	case "single", "fenced", "naive":
		return ""
	case "redlock", lockimpl.LockRedsync:
		return fmt.Sprintf("%s needs independent masters, and one Redis Cluster is not N independent masters (a key lives on one shard); use --lock single or fenced, or --topology redlock:N", lock)
	}
	return fmt.Sprintf("%s has not been measured on a Redis Cluster; use --lock single or fenced", lock)
}
