package lockimpl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/lockimpl"
)

// TestZkLeavesAnExpiredSession plants a member that expired the lock's
// session without closing its connection (what a member does when the
// session was closed through another one): it answers every request with
// "session expired". The lock must then drop that connection, be told on
// reconnecting that its session is gone, and start a new one; go-zookeeper
// alone keeps asking on the dead session, and every later attempt of the
// run fails.
func TestZkLeavesAnExpiredSession(t *testing.T) {
	srv := newExpiringZkServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lockimpl.NewZk(ctx, lockimpl.ZkOptions{Servers: []string{srv.addr()}, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, out, err := l.Acquire(ctx, "k", 4*time.Second)
	if out != lockimpl.Failed || !errors.Is(err, zk.ErrSessionExpired) {
		t.Fatalf("acquire on the expired session: %v, %v; want failed, session expired", out, err)
	}
	// The client reconnects on its own; waited for, bounded by ctx.
	for srv.sessionsGranted() < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("the lock stayed on its expired session: %d session(s) granted", srv.sessionsGranted())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// expiringZkServer speaks enough of ZooKeeper's protocol for one session's
// life: the first session it grants answers every request with "session
// expired" and keeps its connection open; a reconnect as that session is
// told it has ended; a new session is granted and its requests go
// unanswered.
type expiringZkServer struct {
	ln      net.Listener
	mu      sync.Mutex
	granted int
}

func newExpiringZkServer(t *testing.T) *expiringZkServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &expiringZkServer{ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *expiringZkServer) addr() string { return s.ln.Addr().String() }

func (s *expiringZkServer) sessionsGranted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted
}

// The ZooKeeper error code of an expired session.
const zkErrSessionExpired = -112

func (s *expiringZkServer) serve(c net.Conn) {
	defer c.Close()
	req, err := readFrame(c)
	// connect: protocol(4) lastZxid(8) timeout(4) sessionId(8) passwd…
	if err != nil || len(req) < 24 {
		return
	}
	timeout := binary.BigEndian.Uint32(req[12:16])
	asked := binary.BigEndian.Uint64(req[16:24])
	s.mu.Lock()
	var id uint64
	if asked == 0 {
		s.granted++
		id = uint64(s.granted)
	}
	s.mu.Unlock()
	ans := binary.BigEndian.AppendUint32(nil, 0)
	if id == 0 {
		timeout = 0 // a reconnect as an ended session: told it is gone
	}
	ans = binary.BigEndian.AppendUint32(ans, timeout)
	ans = binary.BigEndian.AppendUint64(ans, id)
	ans = binary.BigEndian.AppendUint32(ans, 16)
	ans = append(ans, make([]byte, 16)...)
	if writeFrame(c, ans) != nil || id == 0 {
		return
	}
	for {
		req, err := readFrame(c)
		if err != nil || len(req) < 8 {
			return
		}
		if id != 1 {
			continue // the new session: left unanswered
		}
		xid := binary.BigEndian.Uint32(req[:4])
		code := int32(zkErrSessionExpired)
		if int32(xid) == -2 {
			code = 0 // a ping
		}
		reply := binary.BigEndian.AppendUint32(nil, xid)
		reply = binary.BigEndian.AppendUint64(reply, 0)
		reply = binary.BigEndian.AppendUint32(reply, uint32(code))
		if writeFrame(c, reply) != nil {
			return
		}
	}
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, body)
	return body, err
}

func writeFrame(w io.Writer, body []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}
