package compose

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// zookeeperBackend is a ZooKeeper ensemble (zookeeper:N): local members
// started from Debian's jars (compose/zookeeper.go); its own fault targets
// are the leader and a lock holder (whose session expire ends).
type zookeeperBackend struct{}

// Info describes the ZooKeeper backend. Its connect string has no scheme:
// host:port,… as ZooKeeper's own clients take it.
func (zookeeperBackend) Info() BackendInfo {
	return BackendInfo{Name: lockimpl.BackendZookeeper, URLFlag: "zookeeper",
		URLUsage:  "external ZooKeeper ensemble host:port,host:port,… (port 2181 when left out) for --topology zookeeper:N (default: start local members from Debian's jars)",
		URLDoc:    "A connect string carries no credentials; the lock's nodes go under /lockbench, and --ttl is the session timeout, which the ensemble may clamp (the run says so)",
		SampleURL: "127.0.0.1:2181",
		Targets:   map[FaultTarget]string{TargetLeader: "it has no leader", TargetHolder: "it has no lock sessions to expire"}}
}

// CheckURL checks a --zookeeper value.
func (zookeeperBackend) CheckURL(raw string) error {
	_, err := ParseZkServers(raw)
	return err
}

// target resolves the member whose srvr says it leads (or the standalone
// one), waiting out an election a fault before may have started. A
// holder's session is the ensemble's, not a member's: expire reaches it
// through any member, and names the first.
func (zookeeperBackend) target(ctx context.Context, t *Topology, f FaultSpec) (*Node, error) {
	if f.Target == TargetHolder {
		return t.DataNodes()[0], nil
	}
	if f.Target != TargetLeader {
		return nil, fmt.Errorf("topology %s has no %s", t.Spec, f.Target)
	}
	e := t.zkState()
	if e == nil {
		return nil, fmt.Errorf("topology %s has no local ensemble to ask for its leader", t.Spec)
	}
	m, err := e.WaitLeader(ctx, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("leader of %s: %w", t.Spec, err)
	}
	for _, n := range t.DataNodes() {
		if z := n.zkMemberOf(); z != nil && z.member == m {
			return n, nil
		}
	}
	return nil, fmt.Errorf("leader of %s: member %d is not among the nodes", t.Spec, m.ID)
}

// zkNode is what a node of a zookeeper topology keeps: its local member,
// nil for an external one.
type zkNode struct {
	member *ZkMember
}

// zkMemberOf is n's ZooKeeper payload, nil on a node of another backend.
func (n *Node) zkMemberOf() *zkNode {
	z, _ := n.payload.(*zkNode)
	return z
}

// zkState is the local ensemble of a zookeeper topology, nil otherwise.
func (t *Topology) zkState() *ZkEnsemble {
	e, _ := t.backendState.(*ZkEnsemble)
	return e
}

// process: the process faults act on a local member's JVM, which an
// external member does not have.
func (z *zkNode) process() nodeProcess {
	if z.member == nil {
		return nil
	}
	return localProcess{p: z.member, start: z.member.Restart, startTimeout: 60 * time.Second}
}

// down reports whether a fault stopped the member.
func (z *zkNode) down() bool { return z.member != nil && z.member.PID() == 0 }
