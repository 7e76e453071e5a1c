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

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdPeers are the proxies on an etcd topology's peer links: one in front
// of each member's peer port, whose address the member advertises, so that
// every link between two members runs through one of them. A link is
// dialled by either end (a member dials the peer it streams from, and
// posts to the peer it sends to), so a link's two ends are its acceptor,
// the member behind the proxy it came through, and its dialler, which the
// proxy knows by the X-Server-From header (the dialler's member id) of its
// first request. A cut is a set of pairs of members: a link is cut when its
// dialler and acceptor are a pair of it. The members' client ports are not
// touched: their clients still reach them.
type etcdPeers struct {
	mu      sync.Mutex
	proxies []*etcdPeerProxy
	// ids maps a member id as X-Server-From writes it (hex) to the
	// member's index among the proxies.
	ids map[string]int
	// cut holds the pairs of members cut apart, both ways round; empty
	// when no cut is on.
	cut map[[2]int]bool
	// blind holds the proxies that refuse a link whose dialler they do
	// not know (its first request did not say, as lease renewals and
	// probes forwarded between members do not): such a link may carry a
	// cut pair's traffic later on the same connection.
	blind map[int]bool
	wg    sync.WaitGroup
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
	p := &etcdPeers{ids: map[string]int{}}
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
	if len(p.cut) == 0 {
		return false
	}
	from, known := p.ids[link.from]
	if link.from == "" || !known {
		return p.blind[px.index]
	}
	return p.cut[[2]int{from, px.index}]
}

// learn records member index's id, as X-Server-From writes it.
func (p *etcdPeers) learn(index int, id uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids[strconv.FormatUint(id, 16)] = index
}

// start puts cut and blind in force, closing the links they cut; p.mu
// held.
func (p *etcdPeers) start(cut map[[2]int]bool, blind map[int]bool) error {
	if len(p.cut) > 0 {
		return errors.New("members are cut apart already")
	}
	p.cut, p.blind = cut, blind
	for _, px := range p.proxies {
		for link := range px.links {
			if p.cuts(px, link) {
				link.close()
			}
		}
	}
	return nil
}

// isolate cuts member index (member id id) off from its peers: its links
// now are closed, new ones refused, until the undo. Only its own proxy
// refuses a link whose dialler it does not know, so that lease renewals
// the others forward among themselves still pass.
func (p *etcdPeers) isolate(index int, id uint64) (func() error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids[strconv.FormatUint(id, 16)] = index
	cut := map[[2]int]bool{}
	for j := range p.proxies {
		if j != index {
			cut[[2]int{index, j}], cut[[2]int{j, index}] = true, true
		}
	}
	if err := p.start(cut, map[int]bool{index: true}); err != nil {
		return nil, err
	}
	return func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cut, p.blind = nil, nil
		return nil
	}, nil
}

// cutApart cuts every link between two members that apart says are on two
// sides (the isolate fault's minority and ring) until the undo. A proxy
// whose member is cut from any other refuses a link whose dialler it does
// not know: a member on its far side may have dialled it. The undo closes
// every link through every proxy, so that members re-dial afresh rather
// than keep connections that lived through the cut.
func (p *etcdPeers) cutApart(apart func(i, j int) bool) (func() error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) < len(p.proxies) {
		return nil, fmt.Errorf("the member ids of %d of %d members are unknown: the peer proxies cannot tell who dialled a link", len(p.proxies)-len(p.ids), len(p.proxies))
	}
	cut, blind := map[[2]int]bool{}, map[int]bool{}
	for i := range p.proxies {
		for j := range p.proxies {
			if i != j && apart(i, j) {
				cut[[2]int{i, j}], cut[[2]int{j, i}] = true, true
				blind[i], blind[j] = true, true
			}
		}
	}
	if err := p.start(cut, blind); err != nil {
		return nil, err
	}
	return func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cut, p.blind = nil, nil
		for _, px := range p.proxies {
			for link := range px.links {
				link.close()
			}
		}
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

// cutApart cuts the members' peer links between every pair apart names
// (isolate minority and ring) until the undo; their clients still reach
// every member.
func (c *etcdCluster) cutApart(apart func(i, j int) bool) (func() error, error) {
	if c.peers == nil {
		return nil, errors.New("the cluster was started without peer proxies (UpOptions.PeerProxy)")
	}
	return c.peers.cutApart(apart)
}

// learnPeerIDs tells the peer proxies every member's id, from the member
// list (members are named m0, m1, … by index), so that they know who
// dialled a link.
func (c *etcdCluster) learnPeerIDs(ctx context.Context, admin *clientv3.Client) error {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := admin.MemberList(lctx)
	if err != nil {
		return fmt.Errorf("member ids for the peer proxies: %w", err)
	}
	for _, m := range resp.Members {
		var i int
		if _, err := fmt.Sscanf(m.Name, "m%d", &i); err == nil && i >= 0 && i < len(c.peers.proxies) {
			c.peers.learn(i, m.ID)
		}
	}
	return nil
}

// peerCuts reports whether the members' peer links run through proxies.
func (c *etcdCluster) peerCuts() bool { return c.peers != nil }
