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

// KindZookeeper is a ZooKeeper ensemble of N members (compose/zookeeper.go).
const KindZookeeper Kind = "zookeeper"

// RoleZkMember is a member of a ZooKeeper ensemble; which one leads
// changes with elections (target leader).
const RoleZkMember = "zk-member"

// zookeeperShape is a ZooKeeper ensemble: consensus, sessions, Curator's
// lock recipe.
type zookeeperShape struct{}

// Info describes zookeeper:N.
func (zookeeperShape) Info() KindInfo {
	return KindInfo{
		Kind: KindZookeeper, Syntax: "zookeeper:N with N = 1, 3 or 5", Example: "zookeeper:N", Sample: "zookeeper:3", CanonicalFaultText: "the leader killed",
		Backend: lockimpl.BackendZookeeper, Program: "java (ZooKeeper)", Node: "member",
		Locks:     lockimpl.LocksOn(lockimpl.BackendZookeeper),
		Providers: []string{ProviderLocal, ProviderExternal},
		StartUp:   5 * time.Second,
		RunFlags:  []string{"zookeeper"},
		Targets:   []FaultTarget{TargetNode, TargetLeader, TargetHolder, TargetMinority, TargetRing},
		// The lock's session dials the members' proxies (ClientAddrs); the
		// quorum's own links stay direct.
		ClockNote: "the clock shim is for redis-server; a JVM's clock is not moved",
		PeerProxy: true,
	}
}

// Parse reads zookeeper:N.
func (zookeeperShape) Parse(in, arg string, hasArg bool) (Spec, error) {
	want := "want zookeeper:1, zookeeper:3 or zookeeper:5"
	if !hasArg {
		return Spec{}, fmt.Errorf("topology %q: zookeeper needs its member count; %s", in, want)
	}
	n, err := strconv.Atoi(arg)
	if err != nil || !slices.Contains(ZkSizes(), n) {
		return Spec{}, fmt.Errorf("topology %q: zookeeper member count must be 1, 3 or 5; %s", in, want)
	}
	return Spec{Kind: KindZookeeper, Masters: n}, nil
}

// Format is zookeeper:N.
func (zookeeperShape) Format(s Spec) string { return fmt.Sprintf("%s:%d", KindZookeeper, s.Masters) }

// DataNodes are the members.
func (zookeeperShape) DataNodes(s Spec) int { return s.Masters }

// Replicas: ZooKeeper replicates by its atomic broadcast, not to replicas
// WAIT can count.
func (zookeeperShape) Replicas(Spec) int { return 0 }

// URLs: one connect string names every member.
func (zookeeperShape) URLs(Spec) int { return 1 }

// CanonicalFault kills the leader a fifth into the window.
func (zookeeperShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical((window / 5).Round(time.Millisecond), "kill leader"), window
}

func (zookeeperShape) up(ctx context.Context, t *Topology, provider string) error {
	if provider == ProviderExternal {
		return t.upZookeeperExternal()
	}
	return t.upZookeeper(ctx)
}

// upZookeeperExternal reaches the members the --zookeeper connect string
// names, as many as zookeeper:N says.
func (t *Topology) upZookeeperExternal() error {
	if len(t.opts.URLs) != 1 {
		return badRequest("--zookeeper: topology %s takes one connect string (host:port,host:port,…), got %d", t.Spec, len(t.opts.URLs))
	}
	addrs, err := ParseZkServers(t.opts.URLs[0])
	if err != nil {
		return err
	}
	if len(addrs) != t.Spec.Masters {
		return badRequest("--zookeeper names %d member(s); %s needs %d", len(addrs), t.Spec, t.Spec.Masters)
	}
	t.Provider = ProviderExternal
	for i, a := range addrs {
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("member-%d", i), Role: RoleZkMember, Addr: a, payload: &zkNode{}})
	}
	return nil
}

// upZookeeper starts a local ensemble; Close stops it and removes its
// directories.
func (t *Topology) upZookeeper(ctx context.Context) error {
	if t.opts.Persistence != "" && t.opts.Persistence != PersistNone {
		return fmt.Errorf("persistence %s is a Redis setting; ZooKeeper always keeps its transaction log, fsync'd", t.opts.Persistence)
	}
	if t.opts.ClockShim {
		return errors.New("the clock shim is for redis-server; clock faults need Redis topologies")
	}
	t.logf("starting %s (JVMs start slowly on a busy machine)", t.Spec)
	e, err := StartZkEnsemble(ctx, ZkOptions{Members: t.Spec.Masters, PeerProxy: t.opts.PeerProxy})
	if err != nil {
		return err
	}
	t.addCleanup(e.Stop)
	t.backendState = e
	for i, m := range e.Members() {
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("member-%d", i), Role: RoleZkMember, Addr: m.Addr(), payload: &zkNode{member: m}})
	}
	return nil
}

// ZkEnsemble is the topology's local ensemble, or nil on another kind.
func (t *Topology) ZkEnsemble() *ZkEnsemble { return t.zkState() }
