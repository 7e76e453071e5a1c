package plan

import (
	"fmt"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// lockTopologyMisfit says why lock cannot run on topo, or "" when it can.
// Quorum locks (redlock, redsync) need independent masters, or one server;
// the rest need one server, which replicated's primary is.
func lockTopologyMisfit(lock string, topo compose.Spec) string {
	quorum := lock == "redlock" || lock == lockimpl.LockRedsync
	switch {
	case lock == lockimpl.LockEtcd && topo.Kind != compose.KindEtcd:
		return fmt.Sprintf("etcd needs --topology etcd:N (1, 3 or 5 members), not %s", topo)
	case lock != lockimpl.LockEtcd && topo.Kind == compose.KindEtcd:
		return fmt.Sprintf("%s is a Redis lock and cannot run on %s; use --lock etcd (the default there)", lock, topo)
	case topo.Kind == compose.KindCluster:
		return clusterLockMisfit(lock)
	case !quorum && topo.Kind == compose.KindRedlock:
		return fmt.Sprintf("%s is a single-instance lock and cannot run on %s; use --lock redlock or --lock redsync, or --topology single", lock, topo)
	case quorum && topo.Kind == compose.KindReplicated:
		return fmt.Sprintf("%s needs independent masters, and replicated has one primary; use --topology redlock:N or --lock single", lock)
	}
	return ""
}

// peerOptions parses --peer-option for the plan's lock, refusing options
// the lock does not take.
func (p *parser) peerOptions(lock string) lockimpl.PeerOptions {
	o, err := lockimpl.ParsePeerOptions(lock, p.v["peer-option"])
	if err != nil {
		p.fail("peer-option", "%v", err)
	}
	if lockimpl.IsPeer(lock) {
		p.unusedByPeer(lock)
	}
	return o
}

// unusedByPeer refuses lockbench's own lock flags set away from their
// defaults for a peer lock, which would ignore them; where the library has
// the same setting, the message names its --peer-option.
func (p *parser) unusedByPeer(lock string) {
	for _, u := range []struct{ flag, peer string }{
		{"node-timeout", "timeout-factor=F (each try's timeout is ttl × F)"},
		{"drift-factor", "drift-factor=F"},
		{"fail-fast", "fail-fast"},
		{"wait-replicas", ""},
		{"naive-gap", ""},
	} {
		f, _ := lookupFlag(u.flag)
		if p.v.Get(u.flag) == f.Default {
			continue
		}
		if u.peer != "" && lock == lockimpl.LockRedsync {
			p.fail(u.flag, "tunes lockbench's own locks, and --lock %s would ignore it; redsync takes --peer-option %s", lock, u.peer)
			continue
		}
		p.fail(u.flag, "tunes lockbench's own locks, and --lock %s would ignore it; it takes --peer-option %s", lock, lockimpl.PeerOptionsHelp(lock))
	}
}
