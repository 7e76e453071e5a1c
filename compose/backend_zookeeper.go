package compose

import (
	"context"
	"fmt"
	"slices"
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

// faultMisfit: the process faults act on a local member's JVM (not a
// Server), so they fit it and not an external member; the others follow
// the shared rules.
func (z *zkNode) faultMisfit(n *Node, k FaultKind) (string, bool) {
	if k == FaultExpire {
		return "", true // a session is ended through the client protocol, local or external
	}
	return processMisfit(n, k, z.member != nil)
}

// processMisfit is the rule of a backend whose local nodes are localProcs:
// the process faults fit a local node and not an external one.
func processMisfit(n *Node, k FaultKind, local bool) (string, bool) {
	if !isProcessFault(k) {
		return "", false
	}
	if !local {
		return fmt.Sprintf("%s needs a local server, and %s (%s) is external", k, n.Name, n.Addr), true
	}
	return "", true
}

// apply applies the process faults to the member's JVM, and expire to a
// holder's session.
func (z *zkNode) apply(ctx context.Context, t *Topology, f FaultSpec, _ *Node) (func() error, bool, error) {
	if f.Kind == FaultExpire {
		_, err := t.expireZkHolder(ctx)
		return nil, true, err
	}
	return applyProcFault(ctx, f, &z.member.localProc, z.member.Restart, 60*time.Second)
}

// down reports whether a fault stopped the member.
func (z *zkNode) down() bool { return z.member != nil && z.member.PID() == 0 }

// applyProcFault applies kill, pause or restart to a local process of a
// backend that runs through localProc (ZooKeeper, NATS); restart kills it
// now and starts it again from its directory when the fault is undone.
func applyProcFault(ctx context.Context, f FaultSpec, p *localProc, restart func(context.Context) error, startTimeout time.Duration) (func() error, bool, error) {
	switch f.Kind {
	case FaultKill:
		return nil, true, p.Kill()
	case FaultPause:
		if err := p.Pause(); err != nil {
			return nil, true, err
		}
		return p.Resume, true, nil
	case FaultRestart:
		if p.PID() != 0 {
			if err := p.Kill(); err != nil {
				return nil, true, err
			}
		}
		return func() error {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
			defer cancel()
			return restart(sctx)
		}, true, nil
	}
	return nil, false, nil
}

// isProcessFault reports whether k acts on a node's process.
func isProcessFault(k FaultKind) bool { return slices.Contains(processFaults, k) }
