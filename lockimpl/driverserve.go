package lockimpl

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// DriverBuilder builds a driver's lock over the servers lockbench's hello
// names, and says what the lock can do.
type DriverBuilder func(servers []string) (Locker, DriverCaps, error)

// ServeDriver is the driver side of the protocol for a lock written in
// Go: it reads lockbench's hello from in, builds the lock, answers with
// its capabilities, then serves each request on a goroutine of its own
// (a shared driver serves many workers at once) until in ends. The leases
// it granted are kept by token, for their renewals and releases.
func ServeDriver(ctx context.Context, in io.Reader, out io.Writer, build DriverBuilder) error {
	r := bufio.NewReaderSize(in, 64<<10)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("reading lockbench's hello: %w", err)
	}
	var hello DriverHello
	if err := decodeStrict(line, &hello); err != nil || hello.Op != OpHello || hello.V != DriverProtocol {
		return fmt.Errorf("lockbench's hello %q: not a version %d hello (%v)", clip(line), DriverProtocol, err)
	}
	locker, caps, err := build(hello.Servers)
	if err != nil {
		return err
	}
	caps.Op, caps.V, caps.Concurrent = OpHello, DriverProtocol, true
	s := &driverServer{locker: locker, w: bufio.NewWriter(out), leases: map[string]Lease{}}
	if err := s.send(caps); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			req, perr := ParseDriverRequest(line)
			if perr != nil {
				return fmt.Errorf("request %q: %w", clip(line), perr)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = s.send(s.serve(ctx, req))
			}()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading requests: %w", err)
		}
	}
}

// driverServer is ServeDriver's state: its lock, its leases by token, and
// the writer its answers share.
type driverServer struct {
	locker Locker
	wmu    sync.Mutex
	w      *bufio.Writer
	mu     sync.Mutex
	leases map[string]Lease
}

// send writes one JSON line and flushes it.
func (s *driverServer) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.w.Write(b)
	_ = s.w.WriteByte('\n')
	return s.w.Flush()
}

// serve answers one request with the lock.
func (s *driverServer) serve(ctx context.Context, req DriverRequest) DriverAnswer {
	ttl := time.Duration(req.TTLms) * time.Millisecond
	if req.Op == OpAcquire {
		lease, out, err := s.locker.Acquire(ctx, req.Key, ttl)
		a := answerOf(req.ID, out, err)
		if out == OK {
			s.mu.Lock()
			s.leases[lease.Token] = lease
			s.mu.Unlock()
			a.Token, a.Fence, a.ValidityMs = lease.Token, lease.Fence, lease.Validity.Milliseconds()
		}
		return a
	}
	s.mu.Lock()
	lease, ok := s.leases[req.Token]
	s.mu.Unlock()
	if !ok || lease.Key != req.Key {
		// A lease this driver no longer keeps (released already): asked by
		// its key and token, the lock's own answer says lost or held.
		lease = Lease{Key: req.Key, Token: req.Token}
	}
	if req.Op == OpRenew {
		out, err := s.locker.Renew(ctx, &lease, ttl)
		a := answerOf(req.ID, out, err)
		if out == OK {
			s.mu.Lock()
			s.leases[req.Token] = lease
			s.mu.Unlock()
			a.ValidityMs = lease.Validity.Milliseconds()
		}
		return a
	}
	out, err := s.locker.Release(ctx, lease)
	if out != Failed {
		s.mu.Lock()
		delete(s.leases, req.Token)
		s.mu.Unlock()
	}
	return answerOf(req.ID, out, err)
}

// answerOf is the answer for an outcome.
func answerOf(id uint64, out Outcome, err error) DriverAnswer {
	switch out {
	case OK:
		return DriverAnswer{ID: id, Result: ResultGranted}
	case Contended, Taken:
		return DriverAnswer{ID: id, Result: ResultHeld}
	case Lost:
		return DriverAnswer{ID: id, Result: ResultLost}
	}
	msg := "failed"
	if err != nil {
		msg = err.Error()
	}
	return DriverAnswer{ID: id, Result: ResultError, Message: msg}
}

// NullLock is a lock with no server: every acquisition is granted at once
// and every renewal and release succeeds. Served by a driver, it measures
// the driver protocol's own cost per acquisition.
type NullLock struct{ tokens tokenSource }

// Acquire grants key.
func (n *NullLock) Acquire(_ context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	return Lease{Key: key, Token: n.tokens.token(), Start: time.Now(), Validity: ttl}, OK, nil
}

// Renew extends the lease.
func (n *NullLock) Renew(_ context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	lease.Start, lease.Validity = time.Now(), ttl
	return OK, nil
}

// Release succeeds.
func (n *NullLock) Release(context.Context, Lease) (Outcome, error) { return OK, nil }

// Info names it.
func (n *NullLock) Info() Info { return Info{Name: "null"} }
