package compose

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// natsBackend is NATS with JetStream (nats:N): local nats-server processes
// (compose/nats.go); its own fault target is the leader of the lock's KV
// stream, which orders every write to it.
type natsBackend struct{}

// Info describes the NATS backend.
func (natsBackend) Info() BackendInfo {
	return BackendInfo{Name: lockimpl.BackendNats, URLFlag: "nats",
		URLUsage:   "external NATS server URL nats://[user:pass@]host:port or tls://; one per server of --topology nats:N (default: start local nats-server processes)",
		URLDoc:     "The servers need JetStream and NATS 2.11 or later (per-key TTLs); the lock's bucket is `lockbench`; redacted like `--redis`",
		URLPerNode: true, Schemes: []string{"nats", "tls"}, SampleURL: "nats://127.0.0.1:4222",
		Targets: map[FaultTarget]string{TargetLeader: "it has no leader"}}
}

// CheckURL checks a --nats URL.
func (natsBackend) CheckURL(raw string) error {
	_, err := ParseNatsURL(raw)
	return err
}

// target resolves the leader of the lock bucket's stream (KV_<bucket>).
func (natsBackend) target(ctx context.Context, t *Topology, f FaultSpec) (*Node, error) {
	if f.Target != TargetLeader {
		return nil, fmt.Errorf("topology %s has no %s", t.Spec, f.Target)
	}
	c := t.natsState()
	if c == nil {
		return nil, fmt.Errorf("topology %s has no local servers to ask for the leader", t.Spec)
	}
	stream := "KV_" + lockimpl.DefaultNatsBucket
	s, err := c.WaitStreamLeader(ctx, stream, nil, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("leader of %s on %s: %w", stream, t.Spec, err)
	}
	for _, n := range t.DataNodes() {
		if p := n.natsServerOf(); p != nil && p.server == s {
			return n, nil
		}
	}
	return nil, fmt.Errorf("leader of %s on %s: server %s is not among the nodes", stream, t.Spec, s.Name)
}

// natsNode is what a node of a nats topology keeps: its local server (nil
// for an external one) and the URL clients use, with its password if any.
type natsNode struct {
	server *NatsServer
	url    string
}

// natsServerOf is n's NATS payload, nil on a node of another backend.
func (n *Node) natsServerOf() *natsNode {
	p, _ := n.payload.(*natsNode)
	return p
}

// natsState is the local servers of a nats topology, nil otherwise.
func (t *Topology) natsState() *NatsCluster {
	c, _ := t.backendState.(*NatsCluster)
	return c
}

// faultMisfit: the process faults act on a local server's process (not a
// Server), so they fit it and not an external server; the others follow
// the shared rules.
func (p *natsNode) process() nodeProcess {
	if p.server == nil {
		return nil
	}
	return localProcess{p: p.server, start: p.server.Restart, startTimeout: 30 * time.Second}
}

// down reports whether a fault stopped the server.
func (p *natsNode) down() bool { return p.server != nil && p.server.PID() == 0 }
