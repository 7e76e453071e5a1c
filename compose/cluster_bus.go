package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
)

// clusterBus are the proxies on a Redis Cluster's bus: one in front of each
// node's bus port, which the node announces (cluster-announce-bus-port), so
// that every bus link runs through the proxy of the node it was dialled to.
// The node that dialled it is known by its source address: node i dials
// from 127.0.0.(i+2) (bind-source-addr) and announces 127.0.0.1
// (cluster-announce-ip), where it listens. A cut is a set of pairs of nodes:
// a link is cut when its dialler and acceptor are a pair of it. The data
// ports, and so the clients and the replication links, are not touched.
type clusterBus struct {
	mu      sync.Mutex
	proxies map[int]*busProxy
	// cut holds the pairs of nodes cut apart, both ways round.
	cut    map[[2]int]bool
	closed bool
	wg     sync.WaitGroup
}

// busProxy is one node's bus proxy.
type busProxy struct {
	index    int
	l        net.Listener
	upstream string
	links    map[*busLink]bool
}

// busLink is one bus connection through a proxy, from node from.
type busLink struct {
	from     int
	down, up net.Conn
}

// maxBusNodes bounds the nodes whose source address is 127.0.0.(i+2).
const maxBusNodes = 250

func newClusterBus() *clusterBus {
	return &clusterBus{proxies: map[int]*busProxy{}, cut: map[[2]int]bool{}}
}

// busSource is the address node i dials the bus from.
func busSource(i int) string { return "127.0.0." + strconv.Itoa(i+2) }

// busNodeOf is the node whose source address ip is, or -1.
func busNodeOf(ip string) int {
	for i := range maxBusNodes {
		if busSource(i) == ip {
			return i
		}
	}
	return -1
}

// add listens for node i's bus proxy, leading to its bus port, and returns
// the args the node announces it and dials from with. A node started again
// on another port (its first bus port was taken) gets a new proxy.
func (b *clusterBus) add(i, busPort int) ([]string, error) {
	if i >= maxBusNodes {
		return nil, fmt.Errorf("bus proxies take at most %d nodes", maxBusNodes)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bus proxy of node %d: %w", i, err)
	}
	px := &busProxy{index: i, l: l, upstream: "127.0.0.1:" + strconv.Itoa(busPort), links: map[*busLink]bool{}}
	b.mu.Lock()
	if old := b.proxies[i]; old != nil {
		_ = old.l.Close()
	}
	b.proxies[i] = px
	b.mu.Unlock()
	b.wg.Add(1)
	go b.serve(px)
	// Protected mode takes only 127.0.0.1 for loopback, and would refuse a
	// replica dialling from 127.0.0.(i+2); the node still listens on
	// 127.0.0.1 only (ServerOptions' --bind).
	return []string{"--cluster-announce-ip", "127.0.0.1", "--cluster-announce-bus-port",
		strconv.Itoa(l.Addr().(*net.TCPAddr).Port), "--bind-source-addr", busSource(i), "--protected-mode", "no"}, nil
}

// port is node i's bus proxy port, what it announces.
func (b *clusterBus) port(i int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proxies[i].l.Addr().(*net.TCPAddr).Port
}

func (b *clusterBus) serve(px *busProxy) {
	defer b.wg.Done()
	for {
		c, err := px.l.Accept()
		if err != nil {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.relay(px, c)
		}()
	}
}

// relay refuses a link from a node cut from px's, and otherwise copies both
// ways until either end closes or a cut closes it.
func (b *clusterBus) relay(px *busProxy, c net.Conn) {
	from := -1
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		from = busNodeOf(a.IP.String())
	}
	link := &busLink{from: from, down: c}
	defer link.close()
	up, err := net.Dial("tcp", px.upstream)
	if err != nil {
		return
	}
	link.up = up
	b.mu.Lock()
	if b.closed || b.cut[[2]int{from, px.index}] {
		b.mu.Unlock()
		return
	}
	px.links[link] = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(px.links, link)
		b.mu.Unlock()
	}()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (l *busLink) close() {
	_ = l.down.Close()
	if l.up != nil {
		_ = l.up.Close()
	}
}

// cutApart cuts every bus link between two nodes that apart says are on
// two sides, both ways, until the undo: open links close, new ones are
// refused.
func (b *clusterBus) cutApart(apart func(i, j int) bool) (func() error, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var pairs [][2]int
	for i := range b.proxies {
		for j := range b.proxies {
			if i != j && apart(i, j) && !b.cut[[2]int{i, j}] {
				pairs = append(pairs, [2]int{i, j})
				b.cut[[2]int{i, j}] = true
			}
		}
	}
	for _, px := range b.proxies {
		for l := range px.links {
			if b.cut[[2]int{l.from, px.index}] {
				l.close()
			}
		}
	}
	var once sync.Once
	return func() error {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, p := range pairs {
				delete(b.cut, p)
			}
		})
		return nil
	}, nil
}

// peerCuts: the proxies are started with the cluster.
func (b *clusterBus) peerCuts() bool { return true }

// isolate cuts every bus link to and from n until the undo; its clients
// and its replication links still reach it.
func (b *clusterBus) isolate(_ context.Context, t *Topology, n *Node) (func() error, error) {
	i := slices.Index(t.DataNodes(), n)
	if i < 0 {
		return nil, fmt.Errorf("%s is not a data node of %s", n.Name, t.Spec)
	}
	return b.cutApart(func(a, c int) bool { return (a == i) != (c == i) })
}

// close stops every proxy and closes every link through them.
func (b *clusterBus) close() error {
	b.mu.Lock()
	b.closed = true
	var errs []error
	for _, px := range b.proxies {
		if err := px.l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
		for l := range px.links {
			l.close()
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
	return errors.Join(errs...)
}

// ClusterBusPorts lists the bus port each data node announces, in
// DataNodes order: its bus proxy's when the cluster was started with them
// (UpOptions.PeerProxy), nil otherwise.
func (t *Topology) ClusterBusPorts() []int {
	b, ok := t.backendState.(*clusterBus)
	if !ok {
		return nil
	}
	out := make([]int, len(t.DataNodes()))
	for i := range out {
		out[i] = b.port(i)
	}
	return out
}
