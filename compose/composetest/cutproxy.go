package composetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// CutProxy forwards loopback TCP to a server until Cut, which partitions
// the clients behind it from the server: their connections are closed and
// new ones are closed as soon as they are accepted, while the server sees
// its clients gone (a ZooKeeper member then expires their sessions after
// the session timeout). Heal forwards again. It is closed at cleanup.
type CutProxy struct {
	target string
	l      net.Listener

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewCutProxy starts a proxy to target for t.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &CutProxy{target: target, l: l}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = l.Close()
		p.closeAll()
		p.wg.Wait()
	})
	return p
}

// Addr is the address clients dial instead of the server's.
func (p *CutProxy) Addr() string { return p.l.Addr().String() }

// Cut closes every forwarded connection and refuses to forward new ones.
func (p *CutProxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
	p.closeAll()
}

// Heal forwards new connections again.
func (p *CutProxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

func (p *CutProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *CutProxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			_ = client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(server, client); _ = server.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(client, server); _ = client.Close() }()
	}
}
