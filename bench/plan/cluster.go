package plan

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
)

// isCluster reports whether the topology spreads keys over shards through a
// cluster client.
func isCluster(topo *compose.Topology) bool { return topo.Spec.Info().Sharded }

// lockNodesFor are what the lock sends its commands through: on a cluster
// one ClusterClient (the lock is a single-instance lock per key, and the
// client routes each key to its shard's master); elsewhere lockNodes.
func lockNodesFor(topo *compose.Topology, pl Plan, clients []*redis.Client) ([]redis.Cmdable, error) {
	if !isCluster(topo) {
		return lockNodes(clients), nil
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
