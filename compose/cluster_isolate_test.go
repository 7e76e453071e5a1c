package compose_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// TestClusterIsolateMaster: isolate master=0 on cluster:3,1 cuts shard 0's
// master off the cluster bus (every node's bus runs through a proxy it
// announces) while its clients, and its replica's replication link, still
// reach it. The other masters mark it failed and its replica takes over
// the shard; once healed the old master learns the newer configuration and
// follows its former replica. When the topology is closed no bus proxy
// still listens.
func TestClusterIsolateMaster(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1}, compose.UpOptions{PeerProxy: true})
	ctx := ctxFor(t, 2*time.Minute)
	old, err := topo.ShardMaster(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := topo.ShardReplica(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	oc := composetest.ClientAt(t, old.Addr)
	undo, err := topo.Apply(ctx, mustFault(t, "at=0s isolate master=0 for=1m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = undo() })
	cut := time.Now()
	waitFor(t, 60*time.Second, "the replica to take shard 0 over", func() bool {
		m, err := topo.ShardMaster(ctx, 0)
		return err == nil && m == replica
	})
	t.Logf("%s serves shard 0 %v after %s was cut off the bus", replica.Name, time.Since(cut).Round(time.Millisecond), old.Name)
	// Its clients still reach it, and it has not heard it lost the shard.
	if role := roleOf(ctx, t, oc); role != "master" {
		t.Fatalf("isolated %s is %q during the cut, want still master", old.Name, role)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	waitFor(t, 60*time.Second, "the old master to follow its former replica", func() bool {
		return roleOf(ctx, t, oc) == "slave"
	})
	t.Logf("%s is a replica %v after the heal", old.Name, time.Since(healed).Round(time.Millisecond))
	ports := topo.ClusterBusPorts()
	if len(ports) != 6 {
		t.Fatalf("bus ports %v, want one per node of 6", ports)
	}
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		a := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("bus proxy %s still listens after Close", a)
		}
	}
}
