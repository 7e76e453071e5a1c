package compose

import (
	"errors"
	"fmt"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// linkProxies are proxies on the links between servers, one for each
// direction of each pair: server i reaches server j through its own proxy
// to j (where the servers' configurations may name a peer at an address of
// their own choosing, as ZooKeeper's may), so a cut is a set of links and
// needs no knowledge of the protocol. The client ports are not behind them.
type linkProxies struct {
	toxi  *toxiproxy.ApiServer
	links []*peerLinkProxy
}

// peerLinkProxy is the proxy of the link from server from to server to.
type peerLinkProxy struct {
	from, to int
	proxy    *nodeProxy
}

func newLinkProxies() *linkProxies {
	return &linkProxies{toxi: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
}

// add starts the proxy server from reaches upstream (a port of server to)
// through, and returns its address.
func (p *linkProxies) add(from, to int, upstream string) (string, error) {
	px := toxiproxy.NewProxy(p.toxi, fmt.Sprintf("link-%d-%d-%d", from, to, len(p.links)), "127.0.0.1:0", upstream)
	if err := px.Start(); err != nil {
		return "", fmt.Errorf("proxy on the link from server %d to %d: %w", from, to, err)
	}
	np := newNodeProxy(px)
	p.links = append(p.links, &peerLinkProxy{from: from, to: to, proxy: np})
	return np.addr, nil
}

// isolate cuts every link to and from server index (each proxy closes its
// connections and refuses new ones) until the undo.
func (p *linkProxies) isolate(index int) (func() error, error) {
	var undos []func() error
	for _, l := range p.links {
		if l.from != index && l.to != index {
			continue
		}
		undo, err := l.proxy.partition()
		if err != nil {
			return nil, errors.Join(err, runAll(undos))
		}
		undos = append(undos, undo)
	}
	return func() error { return runAll(undos) }, nil
}

// cut cuts every link between two servers that apart says are on two
// sides (each proxy closes its connections and refuses new ones) until the
// undo: isolate, minority and ring are each a rule of which pairs.
func (p *linkProxies) cut(apart func(i, j int) bool) (func() error, error) {
	var undos []func() error
	for _, l := range p.links {
		if !apart(l.from, l.to) {
			continue
		}
		undo, err := l.proxy.partition()
		if err != nil {
			return nil, errors.Join(err, runAll(undos))
		}
		undos = append(undos, undo)
	}
	return func() error { return runAll(undos) }, nil
}

// close stops every link's proxy.
func (p *linkProxies) close() {
	for _, l := range p.links {
		l.proxy.close()
	}
}

// runAll runs every undo and joins their errors.
func runAll(undos []func() error) error {
	var errs []error
	for _, u := range undos {
		errs = append(errs, u())
	}
	return errors.Join(errs...)
}
