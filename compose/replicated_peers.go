package compose

import (
	"context"
	"fmt"
	"net"
	"slices"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// replicatedPeers are the proxies on a replicated topology's peer links:
// one in front of each data node, at the address its peers know it by.
// The replica's replicaof and the sentinels' monitor name the primary's
// proxy, and each data node announces its own proxy (replica-announce-ip
// and -port) as its address when it is a replica, so the sentinels reach
// the replica, and after a failover the demoted node its new primary,
// through the proxies too. Redis replication and Sentinel name a node by
// one address for everyone, so the clients are told the proxies' addresses
// as well: the failover client dials the node itself instead
// (Topology.dialViaProxy), and the lock's path never crosses a peer proxy.
type replicatedPeers struct {
	toxi *toxiproxy.ApiServer
	// proxies are by data node index.
	proxies []*nodeProxy
}

// unpointed is where a peer proxy leads before its node has started: a
// port nothing listens on, which nobody dials since nobody knows the
// proxy yet.
const unpointed = "127.0.0.1:1"

// startReplicatedPeers listens for n peer proxies on free loopback ports;
// each leads nowhere until point.
func startReplicatedPeers(n int) (*replicatedPeers, error) {
	p := &replicatedPeers{toxi: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
	for i := range n {
		px := toxiproxy.NewProxy(p.toxi, fmt.Sprintf("peer-%d", i), "127.0.0.1:0", unpointed)
		if err := px.Start(); err != nil {
			p.close()
			return nil, fmt.Errorf("peer proxy for data node %d: %w", i, err)
		}
		p.proxies = append(p.proxies, newNodeProxy(px))
	}
	return p, nil
}

// addr is the address data node i is known by to its peers.
func (p *replicatedPeers) addr(i int) string { return p.proxies[i].addr }

// announceArgs make data node i name its peer proxy as its address to its
// primary, whoever that is.
func (p *replicatedPeers) announceArgs(i int) []string {
	host, port, _ := net.SplitHostPort(p.addr(i))
	return []string{"--replica-announce-ip", host, "--replica-announce-port", port}
}

// point leads data node i's proxy to the node (at addr), listening again
// on the same port.
func (p *replicatedPeers) point(i int, addr string) error {
	np := p.proxies[i]
	if err := np.p.Update(&toxiproxy.Proxy{Listen: np.addr, Upstream: addr, Enabled: true}); err != nil {
		return fmt.Errorf("point peer proxy %s at %s: %w", np.addr, addr, err)
	}
	return nil
}

func (p *replicatedPeers) close() {
	for _, px := range p.proxies {
		px.close()
	}
}

// peerCuts: the proxies are started with the topology.
func (p *replicatedPeers) peerCuts() bool { return true }

// isolate stops n's peer proxy: its replication link and every sentinel's
// link to it close and are refused until the undo, while its clients,
// which dial it directly, still reach it.
func (p *replicatedPeers) isolate(_ context.Context, t *Topology, n *Node) (func() error, error) {
	i := slices.Index(t.DataNodes(), n)
	if i < 0 || i >= len(p.proxies) {
		return nil, fmt.Errorf("%s is not a data node with a peer proxy", n.Name)
	}
	return p.proxies[i].partition()
}

// replPeers is the replicated topology's peer proxies, nil when it was
// started without them.
func (t *Topology) replPeers() *replicatedPeers {
	p, _ := t.backendState.(*replicatedPeers)
	return p
}

// peerAddr is the address n's peers (its primary, the sentinels) know it
// by: its peer proxy when the topology has them, the node otherwise.
func (t *Topology) peerAddr(n *Node) string {
	if p := t.replPeers(); p != nil {
		if i := slices.Index(t.DataNodes(), n); i >= 0 && i < len(p.proxies) {
			return p.addr(i)
		}
	}
	return n.Addr
}

// dataNodeAt is the data node at addr, as a client or a peer (a sentinel)
// names it, or nil.
func (t *Topology) dataNodeAt(addr string) *Node {
	for _, n := range t.DataNodes() {
		if n.Addr == addr || t.peerAddr(n) == addr {
			return n
		}
	}
	return nil
}

// PeerAddrs lists the address each data node is known by to its peers (the
// replica's primary, the sentinels), in DataNodes order: its peer proxy when
// the topology was started with them (UpOptions.PeerProxy), the node
// otherwise.
func (t *Topology) PeerAddrs() []string {
	data := t.DataNodes()
	out := make([]string, len(data))
	for i, n := range data {
		out[i] = t.peerAddr(n)
	}
	return out
}
