package compose

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// nodeProxy is the in-process TCP proxy in front of one data node. Toxiproxy
// is used as a library, not as a server: no HTTP API is opened.
type nodeProxy struct {
	p *toxiproxy.Proxy
	// addr is where the proxy listens, read once after its first start:
	// toxiproxy rewrites Proxy.Listen (to the same address) in its server
	// goroutine on every restart, so reading that field while a partition
	// heals is a data race.
	addr string

	mu     sync.Mutex
	cut    int  // partitions in effect; the proxy is down while > 0
	seq    int  // names toxics uniquely, so overlapping faults undo their own
	closed bool // after Close, a late partition undo must not listen again
}

// startProxies puts a proxy in front of every data node and points the
// node's clients at it. Sentinels stay direct: they are the control plane the
// faults act around, not a path the lock uses.
func (t *Topology) startProxies() error {
	// Quiet logger: every accepted and dropped connection would otherwise
	// be logged by toxiproxy.
	t.toxi = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	for _, n := range t.DataNodes() {
		p := toxiproxy.NewProxy(t.toxi, n.Name, "127.0.0.1:0", n.Addr)
		if err := p.Start(); err != nil {
			return fmt.Errorf("start proxy for %s (%s): %w", n.Name, n.Addr, err)
		}
		n.proxy = newNodeProxy(p)
		n.ProxyAddr = n.proxy.addr
		if n.opts != nil {
			o := *n.opts
			o.Addr = n.proxy.addr
			n.opts = &o
		}
	}
	return nil
}

// newNodeProxy wraps a started proxy.
func newNodeProxy(p *toxiproxy.Proxy) *nodeProxy {
	return &nodeProxy{p: p, addr: p.Listen}
}

// addLatency delays every reply from the node by d (the downstream
// direction), so each request/response round trip is slower by at least d.
func (np *nodeProxy) addLatency(d time.Duration) (undo func() error, err error) {
	np.mu.Lock()
	np.seq++
	name := fmt.Sprintf("latency-%d", np.seq)
	np.mu.Unlock()
	js := fmt.Sprintf(`{"name":%q,"type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d,"jitter":0}}`,
		name, d.Milliseconds())
	if _, err := np.p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		return nil, fmt.Errorf("add %s latency on proxy %s: %w", d, np.p.Name, err)
	}
	return func() error {
		if err := np.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
			return fmt.Errorf("remove latency on proxy %s: %w", np.p.Name, err)
		}
		return nil
	}, nil
}

// partition cuts the link: the proxy closes every connection through it and
// refuses new ones until the undo, when it listens again on the same address
// and clients reconnect. Overlapping partitions of one node heal when the
// last one is undone.
func (np *nodeProxy) partition() (undo func() error, err error) {
	np.mu.Lock()
	defer np.mu.Unlock()
	np.cut++
	if np.cut == 1 {
		np.p.Stop()
	}
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			np.mu.Lock()
			defer np.mu.Unlock()
			np.cut--
			if np.cut == 0 && !np.closed {
				if serr := np.p.Start(); serr != nil {
					err = fmt.Errorf("heal partition: restart proxy %s on %s: %w", np.p.Name, np.addr, serr)
				}
			}
		})
		return err
	}, nil
}

func (np *nodeProxy) close() {
	np.mu.Lock()
	defer np.mu.Unlock()
	np.closed = true
	np.p.Stop()
}
