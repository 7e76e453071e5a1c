package compose

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindEtcd is an etcd cluster of N members (compose/etcd.go).
const KindEtcd Kind = "etcd"

// etcdShape is an etcd cluster: consensus, leases, one lock of its own.
type etcdShape struct{}

// Info describes etcd:N.
func (etcdShape) Info() KindInfo {
	return KindInfo{
		Kind: KindEtcd, Syntax: "etcd:N with N = 1, 3 or 5", Example: "etcd:N", Sample: "etcd:3", CanonicalFaultText: "the leader killed", Backend: lockimpl.BackendEtcd, Program: "etcd", Node: "member",
		Locks:     []string{lockimpl.LockEtcd},
		Providers: []string{ProviderLocal, ProviderExternal},
		StartUp:   2500 * time.Millisecond,
		RunFlags:  []string{"etcd"},
		Targets:   []FaultTarget{TargetNode, TargetLeader, TargetMinority, TargetRing},
		ClockNote: "the clock shim cannot move an etcd member's clock (Go reads the time without libc)",
		PeerProxy: true,
	}
}

// Parse reads etcd:N.
func (etcdShape) Parse(in, arg string, hasArg bool) (Spec, error) {
	return parseEtcdSpec(in, arg, hasArg)
}

// Format is etcd:N.
func (etcdShape) Format(s Spec) string { return fmt.Sprintf("%s:%d", KindEtcd, s.Masters) }

// DataNodes are the members.
func (etcdShape) DataNodes(s Spec) int { return s.Masters }

// Replicas: etcd replicates by consensus, not to replicas WAIT can count.
func (etcdShape) Replicas(Spec) int { return 0 }

// URLs: one per member.
func (etcdShape) URLs(s Spec) int { return s.Masters }

// CanonicalFault kills the leader a fifth into the window.
func (etcdShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical((window / 5).Round(time.Millisecond), "kill leader"), window
}

func (etcdShape) up(ctx context.Context, t *Topology, provider string) error {
	if provider == ProviderExternal {
		return t.upEtcdExternal()
	}
	return t.upEtcd(ctx)
}

// parseEtcdSpec reads the N of etcd:N.
func parseEtcdSpec(s, arg string, hasArg bool) (Spec, error) {
	if !hasArg {
		return Spec{}, fmt.Errorf("topology %q: etcd needs its member count; want etcd:1, etcd:3 or etcd:5", s)
	}
	n, err := strconv.Atoi(arg)
	if err != nil || !slices.Contains(EtcdSizes(), n) {
		return Spec{}, fmt.Errorf("topology %q: etcd member count must be 1, 3 or 5; want etcd:1, etcd:3 or etcd:5", s)
	}
	return Spec{Kind: KindEtcd, Masters: n}, nil
}
