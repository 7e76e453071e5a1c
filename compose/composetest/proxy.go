package composetest

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// DelayProxy forwards loopback TCP to target, holding every chunk from the
// server for delay first: a slow network in front of one node.
func DelayProxy(t testing.TB, target string, delay time.Duration) string {
	t.Helper()
	return proxy(t, target, func([]byte) time.Duration { return 0 }, func([]byte) time.Duration { return delay })
}

// DelayRequestsProxy forwards loopback TCP to target, holding each chunk from
// the client that contains match for delay before the server sees it. Other
// chunks, and other connections, pass at once: a request that overtakes an
// earlier one sent on another connection, as a retransmission can make it.
func DelayRequestsProxy(t testing.TB, target string, match []byte, delay time.Duration) string {
	t.Helper()
	up := func(chunk []byte) time.Duration {
		if bytes.Contains(chunk, match) {
			return delay
		}
		return 0
	}
	return proxy(t, target, up, func([]byte) time.Duration { return 0 })
}

// proxy forwards loopback TCP to target; up and down say how long to hold
// each chunk from the client and from the server.
func proxy(t testing.TB, target string, up, down func([]byte) time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			track(client)
			track(server)
			wg.Add(2)
			go func() { defer wg.Done(); delayedCopy(server, client, up); server.Close() }()
			go func() { defer wg.Done(); delayedCopy(client, server, down); client.Close() }()
		}
	}()
	return l.Addr().String()
}

func delayedCopy(dst io.Writer, src io.Reader, hold func([]byte) time.Duration) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := hold(buf[:n]); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
