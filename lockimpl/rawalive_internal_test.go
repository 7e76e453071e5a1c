package lockimpl

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestAliveAll: one poll over a fan-out's connections finds the same ones
// dead that peeking each would (the peer closed, or sent what no one asked
// for), keeps the healthy ones, and skips masters without a connection.
func TestAliveAll(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	// pair returns our end of a connection and the listener's end.
	pair := func() (*rawConn, net.Conn) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		peer, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(); _ = peer.Close() })
		c := &rawConn{conn: conn, r: bufio.NewReaderSize(conn, 512), fd: -1}
		c.preparePeek()
		return c, peer
	}
	for _, tc := range []struct {
		name string
		// spoil does to the peer's end what the connection's state is to be.
		spoil func(t *testing.T, peer net.Conn)
		want  bool
	}{
		{"idle", func(*testing.T, net.Conn) {}, true},
		{"peer closed", func(t *testing.T, peer net.Conn) { _ = peer.Close() }, false},
		{"unsolicited reply", func(t *testing.T, peer net.Conn) {
			if _, err := peer.Write([]byte("+OK\r\n")); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			healthy, _ := pair()
			c, peer := pair()
			if c.fd < 0 {
				t.Fatal("a TCP connection's descriptor was not kept for polling")
			}
			tc.spoil(t, peer)
			// What the peer did reaches our socket asynchronously, even on
			// loopback: wait until a peek sees it (or, for an idle peer,
			// not at all), then ask the poll.
			for deadline := time.Now().Add(time.Second); c.alive() != tc.want && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			got := aliveAll([]*rawConn{healthy, nil, c})
			if !got[0] || got[1] || got[2] != tc.want {
				t.Fatalf("alive %v, want [healthy, no connection, %v]", got[:3], tc.want)
			}
		})
	}
}
