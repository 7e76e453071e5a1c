package compose

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// etcdPeers are the proxies on an etcd topology's peer links: one in front
// of each member's peer port, whose address the member advertises, so that
// every link between two members runs through one of them. A link is
// dialled by either end (a member dials the peer it streams from, and
// posts to the peer it sends to), so cutting member i off takes two rules:
// i's own proxy drops every link, and every other proxy drops the links i
// dialled, which it knows by the X-Server-From header (i's member id) of
// their first request. The members' client ports are not touched: their
// clients still reach them.
type etcdPeers struct {
	mu      sync.Mutex
	proxies []*etcdPeerProxy
	// cut is the member cut off from its peers, nil when none.
	cut *peerCut
	wg  sync.WaitGroup
}

// peerCut is a member cut off from its peers: its index among the
// proxies and its member id as X-Server-From writes it.
type peerCut struct {
	index int
	from  string
}

// etcdPeerProxy is one member's peer proxy.
type etcdPeerProxy struct {
	index    int
	l        net.Listener
	upstream string
	// links are the links through it, each with the member that dialled
	// it ("" when its first request did not say).
	links map[*peerLink]bool
}

// peerLink is one connection through a peer proxy.
type peerLink struct {
	down, up net.Conn
	from     string
}

func (l *peerLink) close() {
	_ = l.down.Close()
	if l.up != nil {
		_ = l.up.Close()
	}
}

// startEtcdPeers listens for one proxy per member peer port, on free
// loopback ports, and serves them.
func startEtcdPeers(peerPorts []int) (*etcdPeers, error) {
	p := &etcdPeers{}
	for i, port := range peerPorts {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = p.close()
			return nil, fmt.Errorf("peer proxy for member %d: %w", i, err)
		}
		p.proxies = append(p.proxies, &etcdPeerProxy{index: i, l: l, upstream: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), links: map[*peerLink]bool{}})
	}
	for _, px := range p.proxies {
		p.wg.Add(1)
		go p.serve(px)
	}
	return p, nil
}

// ports are the proxies' ports, by member: what each member advertises.
func (p *etcdPeers) ports() []int {
	out := make([]int, len(p.proxies))
	for i, px := range p.proxies {
		out[i] = px.l.Addr().(*net.TCPAddr).Port
	}
	return out
}

func (p *etcdPeers) serve(px *etcdPeerProxy) {
	defer p.wg.Done()
	for {
		c, err := px.l.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.relay(px, c)
		}()
	}
}

// relay reads the first request's header to learn who dialled, refuses
// the link if it is cut, and otherwise copies both ways until either end
// closes or a cut closes it.
func (p *etcdPeers) relay(px *etcdPeerProxy, c net.Conn) {
	link := &peerLink{down: c}
	defer link.close()
	var head bytes.Buffer
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &head))); err == nil {
		link.from = req.Header.Get("X-Server-From")
	}
	_ = c.SetReadDeadline(time.Time{})
	up, err := net.DialTimeout("tcp", px.upstream, 2*time.Second)
	if err != nil {
		return
	}
	link.up = up
	p.mu.Lock()
	if p.cuts(px, link) {
		p.mu.Unlock()
		return
	}
	px.links[link] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(px.links, link)
		p.mu.Unlock()
	}()
	done := make(chan struct{}, 2)
	go func() {
		// Everything read while learning the header goes first.
		if _, err := up.Write(head.Bytes()); err == nil {
			_, _ = io.Copy(up, c)
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		done <- struct{}{}
	}()
	<-done
}

// cuts reports whether link through px is cut; p.mu held.
func (p *etcdPeers) cuts(px *etcdPeerProxy, link *peerLink) bool {
	return p.cut != nil && (p.cut.index == px.index || link.from != "" && link.from == p.cut.from)
}

// isolate cuts member index (member id id) off from its peers: its links
// now are closed, new ones refused, until the undo.
func (p *etcdPeers) isolate(index int, id uint64) (func() error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut != nil {
		return nil, errors.New("a member is cut off from its peers already")
	}
	p.cut = &peerCut{index: index, from: strconv.FormatUint(id, 16)}
	for _, px := range p.proxies {
		for link := range px.links {
			if p.cuts(px, link) {
				link.close()
			}
		}
	}
	return func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cut = nil
		return nil
	}, nil
}

// close stops every proxy and link and waits for them.
func (p *etcdPeers) close() error {
	p.mu.Lock()
	for _, px := range p.proxies {
		_ = px.l.Close()
		for link := range px.links {
			link.close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// isolate cuts n off from the other members while its clients still reach
// it (the isolate fault), through the peer proxies.
func (c *etcdCluster) isolate(ctx context.Context, t *Topology, n *Node) (func() error, error) {
	index := -1
	for i, d := range t.DataNodes() {
		if d == n {
			index = i
		}
	}
	id := n.etcdMemberOf().id.Load()
	if id == 0 {
		admin, err := t.etcdAdmin()
		if err != nil {
			return nil, err
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		resp, err := admin.Status(sctx, admin.Endpoints()[index])
		if err != nil {
			return nil, fmt.Errorf("member id of %s: %w", n.Name, err)
		}
		id = resp.Header.MemberId
		n.etcdMemberOf().id.Store(id)
	}
	return c.peers.isolate(index, id)
}

// peerCuts reports whether the members' peer links run through proxies.
func (c *etcdCluster) peerCuts() bool { return c.peers != nil }
