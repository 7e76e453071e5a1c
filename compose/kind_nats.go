package compose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindNats is NATS with JetStream, one server or a cluster of three
// (compose/nats.go).
const KindNats Kind = "nats"

// RoleNatsServer is a server of a nats topology; which one leads the lock
// bucket's stream changes with elections (target leader).
const RoleNatsServer = "nats-server"

// natsShape is NATS JetStream: a KV bucket with per-key TTLs, replicated
// by each stream's Raft group on a cluster.
type natsShape struct{}

// Info describes nats:N.
func (natsShape) Info() KindInfo {
	return KindInfo{
		Kind: KindNats, Syntax: "nats:N with N = 1 or 3", Example: "nats:N", Sample: "nats:3", CanonicalFaultText: "the lock bucket's stream leader killed",
		Backend: lockimpl.BackendNats, Program: "nats-server", Node: "server",
		Locks:     lockimpl.LocksOn(lockimpl.BackendNats),
		Providers: []string{ProviderLocal, ProviderExternal},
		StartUp:   3 * time.Second,
		RunFlags:  []string{"nats"},
		// minority: isolate cuts the leader's server from the other two.
		Targets: []FaultTarget{TargetNode, TargetLeader, TargetMinority},
		// Through the proxies the client keeps to the servers it was given
		// (IgnoreDiscoveredServers); the cluster's routes stay direct.
		ClockNote: "the clock shim cannot move nats-server's clock (Go reads the time without libc)",
		// isolate: each route runs through a proxy of its own (compose/nats.go).
		PeerProxy: true,
	}
}

// Parse reads nats:N.
func (natsShape) Parse(in, arg string, hasArg bool) (Spec, error) {
	if !hasArg {
		return Spec{}, fmt.Errorf("topology %q: nats needs its server count; want nats:1 or nats:3", in)
	}
	n, err := strconv.Atoi(arg)
	if err != nil || !slices.Contains(NatsSizes(), n) {
		return Spec{}, fmt.Errorf("topology %q: nats server count must be 1 or 3; want nats:1 or nats:3", in)
	}
	return Spec{Kind: KindNats, Masters: n}, nil
}

// Format is nats:N.
func (natsShape) Format(s Spec) string { return fmt.Sprintf("%s:%d", KindNats, s.Masters) }

// DataNodes are the servers.
func (natsShape) DataNodes(s Spec) int { return s.Masters }

// Replicas: the bucket's stream replicates by Raft, not to replicas WAIT
// can count.
func (natsShape) Replicas(Spec) int { return 0 }

// URLs: one per server.
func (natsShape) URLs(s Spec) int { return s.Masters }

// CanonicalFault kills the leader of the lock bucket's stream a fifth
// into the window.
func (natsShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical((window / 5).Round(time.Millisecond), "kill leader"), window
}

func (natsShape) up(ctx context.Context, t *Topology, provider string) error {
	if provider == ProviderExternal {
		return t.upNatsExternal()
	}
	return t.upNats(ctx)
}

// upNatsExternal reaches the servers at the --nats URLs, one per server.
func (t *Topology) upNatsExternal() error {
	if len(t.opts.URLs) != t.Spec.Masters {
		return badRequest("needs %d --nats URLs, one per server, got %d", t.Spec.Masters, len(t.opts.URLs))
	}
	t.Provider = ProviderExternal
	for i, raw := range t.opts.URLs {
		u, err := ParseNatsURL(raw)
		if err != nil {
			return err
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("server-%d", i), Role: RoleNatsServer, Addr: u.Host, payload: &natsNode{url: raw}})
	}
	return nil
}

// NatsURLs are the URLs the lock's connection uses, one per server,
// through the servers' proxies when the topology has them (the connection
// must then ignore the servers it discovers: lockimpl.NatsJetStream does);
// an external server's may carry its password: never print them, use
// RedactURL.
func (t *Topology) NatsURLs() []string {
	var out []string
	for _, n := range t.DataNodes() {
		if p := n.natsServerOf(); p != nil {
			// The URL parsed when the topology came up (ParseNatsURL).
			u, err := n.viaProxy(p.url)
			if err != nil {
				u = p.url
			}
			out = append(out, u)
		}
	}
	return out
}

// upNats starts local JetStream servers; Close stops them and removes
// their directories.
func (t *Topology) upNats(ctx context.Context) error {
	if t.opts.Persistence != "" && t.opts.Persistence != PersistNone {
		return fmt.Errorf("persistence %s is a Redis setting; JetStream keeps the bucket in its file store", t.opts.Persistence)
	}
	if t.opts.ClockShim {
		return errors.New("the clock shim cannot move nats-server's clock; clock faults need Redis topologies")
	}
	c, err := StartNatsCluster(ctx, NatsOptions{Servers: t.Spec.Masters, PeerProxy: t.opts.PeerProxy})
	if err != nil {
		return err
	}
	t.addCleanup(c.Stop)
	t.backendState = c
	for i, s := range c.Servers() {
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("server-%d", i), Role: RoleNatsServer, Addr: s.Addr(), payload: &natsNode{server: s, url: s.URL()}})
	}
	return nil
}

// NatsCluster is the topology's local servers, or nil on another kind.
func (t *Topology) NatsCluster() *NatsCluster { return t.natsState() }
