package composetest

import (
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
			go func() { defer wg.Done(); _, _ = io.Copy(server, client); server.Close() }()
			go func() { defer wg.Done(); delayedCopy(client, server, delay); client.Close() }()
		}
	}()
	return l.Addr().String()
}

func delayedCopy(dst io.Writer, src io.Reader, delay time.Duration) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(delay)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
