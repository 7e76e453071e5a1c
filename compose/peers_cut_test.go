package compose

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// echoServer accepts connections on loopback and echoes every byte back
// until the test ends.
func echoServer(t *testing.T) (port int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// roundTrip writes line on c and reports whether it came back.
func roundTrip(c net.Conn, line string) bool {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, line); err != nil {
		return false
	}
	buf := make([]byte, len(line))
	_, err := io.ReadFull(c, buf)
	return err == nil && string(buf) == line
}

// peerDial opens a link to addr as member from would: its first request
// names it in X-Server-From.
func peerDial(t *testing.T, addr, from string) (net.Conn, bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, false
	}
	t.Cleanup(func() { _ = c.Close() })
	req := fmt.Sprintf("GET /raft/stream HTTP/1.1\r\nHost: x\r\nX-Server-From: %s\r\n\r\n", from)
	return c, roundTrip(c, req)
}

// TestEtcdPeersIsolate: a cut closes the isolated member's links through
// every proxy (those to it, and those it dialled, by X-Server-From) and
// refuses new ones; the others' links between themselves stay; the undo
// lets links through again; close stops every proxy.
func TestEtcdPeersIsolate(t *testing.T) {
	ports := []int{echoServer(t), echoServer(t), echoServer(t)}
	p, err := startEtcdPeers(ports)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(p.ports()[i]) }
	from := func(i int) string { return strconv.FormatUint(uint64(100+i), 16) }
	// Member 0 dials 1; 1 dials 0; 1 dials 2.
	c01, ok1 := peerDial(t, addr(1), from(0))
	c10, ok2 := peerDial(t, addr(0), from(1))
	c12, ok3 := peerDial(t, addr(2), from(1))
	if !ok1 || !ok2 || !ok3 {
		t.Fatal("links do not pass before the cut")
	}
	undo, err := p.isolate(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if roundTrip(c01, "x") || roundTrip(c10, "x") {
		t.Error("a link of the isolated member still carries bytes")
	}
	if !roundTrip(c12, "y") {
		t.Error("a link between the other members was cut")
	}
	if _, ok := peerDial(t, addr(2), from(0)); ok {
		t.Error("the isolated member dialled a peer through the cut")
	}
	if _, ok := peerDial(t, addr(0), from(2)); ok {
		t.Error("a peer dialled the isolated member through the cut")
	}
	if _, err := p.isolate(1, 101); err == nil {
		t.Error("a second cut accepted while one is in effect")
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if _, ok := peerDial(t, addr(2), from(0)); !ok {
		t.Error("healed, the member's new link does not pass")
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr(1), time.Second); err == nil {
		_ = c.Close()
		t.Error("a peer proxy still listens after close")
	}
}

// TestLinkProxiesIsolate: cutting server 1 stops every link to and from
// it and no other, until the undo; close stops them all.
func TestLinkProxiesIsolate(t *testing.T) {
	up := []int{echoServer(t), echoServer(t), echoServer(t)}
	p := newLinkProxies()
	addrs := map[[2]int]string{}
	for i := range 3 {
		for j := range 3 {
			if i != j {
				a, err := p.add(i, j, "127.0.0.1:"+strconv.Itoa(up[j]))
				if err != nil {
					t.Fatal(err)
				}
				addrs[[2]int{i, j}] = a
			}
		}
	}
	passes := func(i, j int) bool {
		c, err := net.DialTimeout("tcp", addrs[[2]int{i, j}], time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		return roundTrip(c, "ping")
	}
	undo, err := p.isolate(1)
	if err != nil {
		t.Fatal(err)
	}
	for link := range addrs {
		cut := link[0] == 1 || link[1] == 1
		if got := passes(link[0], link[1]); got == cut {
			t.Errorf("link %d→%d passes %v during the cut of 1", link[0], link[1], got)
		}
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if !passes(0, 1) || !passes(1, 2) {
		t.Error("links of 1 do not pass after the undo")
	}
	p.close()
	if passes(0, 2) {
		t.Error("a link proxy passes after close")
	}
}
