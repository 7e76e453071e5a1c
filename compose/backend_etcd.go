package compose

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/lockimpl"
)

// etcdBackend is an etcd cluster (etcd:N): members started as Server
// processes with an etcd memberProcess, or reached at --etcd URLs; its own
// fault target is the leader.
type etcdBackend struct{}

// Info describes the etcd backend.
func (etcdBackend) Info() BackendInfo {
	return BackendInfo{Name: lockimpl.BackendEtcd, URLFlag: "etcd",
		URLUsage:   "external etcd member URL http://[user:pass@]host:port or https://; one per member of --topology etcd:N (default: start local etcd processes)",
		URLDoc:     "Port 2379 by default, TLS with the system roots; redacted like `--redis`",
		URLPerNode: true, Schemes: []string{"http", "https"}, SampleURL: "http://127.0.0.1:2379",
		Targets: map[FaultTarget]string{TargetLeader: "it has no leader"}}
}

// CheckURL checks an --etcd URL.
func (etcdBackend) CheckURL(raw string) error {
	_, err := ParseEtcdURL(raw)
	return err
}

// target resolves the leader, once the members agree on one.
func (etcdBackend) target(ctx context.Context, t *Topology, f FaultSpec) (*Node, error) {
	if f.Target != TargetLeader {
		return nil, fmt.Errorf("topology %s has no %s", t.Spec, f.Target)
	}
	return t.settledLeader(ctx)
}

// etcdMemberOf is n's member payload, nil on a node of another backend.
func (n *Node) etcdMemberOf() *etcdMember {
	m, _ := n.payload.(*etcdMember)
	return m
}

// process: an etcd member's process is the node's Server.
func (m *etcdMember) process() nodeProcess { return nil }

// down: a member's process is the node's Server, which the shared rule
// asks.
func (m *etcdMember) down() bool { return false }
