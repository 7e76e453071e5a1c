package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ctxLibrary is what lockbench drives of a lock library whose lock is a
// context (rueidislock, valkeylock): TryWithContext takes the lock without
// waiting and returns a context the library cancels when it loses the lock
// (it extends its keys itself every half validity, in the background), and
// a cancel that releases it.
type ctxLibrary interface {
	TryWithContext(ctx context.Context, name string) (context.Context, context.CancelFunc, error)
	Close()
}

// ctxLibrarySpec is one such library: how to build a locker of it for one
// validity and key prefix over one server, and its error for a lock held
// by another.
type ctxLibrarySpec struct {
	// name is the --lock name, module the library's Go module.
	name, module string
	// prefix is the library's own default key prefix, kept after the run's.
	prefix string
	// notLocked is the library's error for a key held by another.
	notLocked error
	// build makes a locker whose keys are PREFIX:i:NAME and whose
	// validity, extended every half of it, is ttl.
	build func(server *redis.Options, prefix string, ttl time.Duration) (ctxLibrary, error)
}

// ctxLock adapts a ctxLibrary to the Locker contract. The library fixes a
// lock's validity when the locker is made, so there is one locker per TTL
// and key prefix a run asks for. Its lease is a session, as zk's: the
// holder cannot renew it (the library does) and learns it ended only if it
// asks (LeaseEnded).
type ctxLock struct {
	spec   ctxLibrarySpec
	server *redis.Options
	info   Info

	mu      sync.Mutex
	lockers map[ctxLockerKey]ctxLibrary
	closed  bool
}

// ctxLockerKey names one locker of a ctxLock.
type ctxLockerKey struct {
	prefix string
	ttl    time.Duration
}

// ctxHandle is a ctxLock lease's library state.
type ctxHandle struct {
	lost     context.Context
	release  context.CancelFunc
	released atomic.Bool
	ended    atomic.Int64 // UnixNano when the library gave the lease up unasked; 0 while held
}

// newCtxLock builds the adapter over the one server of nodes.
func newCtxLock(spec ctxLibrarySpec, nodes []redis.Cmdable) (*ctxLock, error) {
	if len(nodes) != 1 {
		return nil, fmt.Errorf("lock %s works on one server, the topology has %d; use --lock redsync for several masters", spec.name, len(nodes))
	}
	c, ok := nodes[0].(*redis.Client)
	if !ok {
		return nil, fmt.Errorf("lock %s needs a plain client to one server, not %T", spec.name, nodes[0])
	}
	info := Info{Name: spec.name, Nodes: 1, Library: spec.module, Version: ModuleVersion(spec.module)}
	return &ctxLock{spec: spec, server: c.Options(), info: info, lockers: map[ctxLockerKey]ctxLibrary{}}, nil
}

// Info describes the lock.
func (l *ctxLock) Info() Info { return l.info }

// locker is the library's locker for key's prefix and ttl: the run's key
// prefix (everything up to key's last ':') comes first in the library's
// keys, so that the run's cleanup of its prefix reaches them.
func (l *ctxLock) locker(key string, ttl time.Duration) (ctxLibrary, string, error) {
	dir, name := "", key
	if i := strings.LastIndexByte(key, ':'); i >= 0 {
		dir, name = key[:i+1], key[i+1:]
	}
	k := ctxLockerKey{prefix: dir + l.spec.prefix, ttl: ttl}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, "", fmt.Errorf("lock %s: closed", l.spec.name)
	}
	if lk, ok := l.lockers[k]; ok {
		return lk, name, nil
	}
	lk, err := l.spec.build(l.server, k.prefix, ttl)
	if err != nil {
		return nil, "", fmt.Errorf("%s: connect to %s: %w", l.spec.name, l.server.Addr, err)
	}
	l.lockers[k] = lk
	return lk, name, nil
}

// Acquire makes one TryWithContext: the library's SET NX on a majority of
// its keys for the name (2 of 3 by default, on the one server). The lease
// outlives the attempt's context: it lasts until Release, or until the
// library fails to extend it.
func (l *ctxLock) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	if ttl <= 0 {
		return Lease{}, Failed, fmt.Errorf("%s acquire %s: ttl %v: want more than 0", l.spec.name, key, ttl)
	}
	lk, name, err := l.locker(key, ttl)
	if err != nil {
		return Lease{}, Failed, err
	}
	start := time.Now()
	lost, release, err := lk.TryWithContext(context.WithoutCancel(ctx), name)
	switch {
	case errors.Is(err, l.spec.notLocked):
		return Lease{}, Contended, nil
	case err != nil:
		return Lease{}, Failed, fmt.Errorf("%s acquire %s: %w", l.spec.name, key, err)
	}
	h := &ctxHandle{lost: lost, release: release}
	context.AfterFunc(lost, func() {
		if !h.released.Load() {
			h.ended.Store(time.Now().UnixNano())
		}
	})
	return Lease{Key: key, Token: NewToken(), Start: start, Validity: ttl, handle: h}, OK, nil
}

// ctxHandleOf is the library state of a lease this lock issued.
func (l *ctxLock) ctxHandleOf(lease Lease) (*ctxHandle, error) {
	h, ok := lease.handle.(*ctxHandle)
	if !ok {
		return nil, fmt.Errorf("%s %s: %w (the library releases only through the cancel its TryWithContext returned)", l.spec.name, lease.Key, ErrForeignLease)
	}
	return h, nil
}

// Renew cannot extend the lease: the library extends it itself, every
// half validity. A lease the library gave up is Lost; otherwise the call
// is refused (the lock's descriptor says it does not renew).
func (l *ctxLock) Renew(_ context.Context, lease *Lease, _ time.Duration) (Outcome, error) {
	h, err := l.ctxHandleOf(*lease)
	if err != nil {
		return Failed, err
	}
	if h.lost.Err() != nil {
		return Lost, nil
	}
	return Failed, fmt.Errorf("%s renew %s: the library extends its keys itself; there is no renewal to call", l.spec.name, lease.Key)
}

// Release calls the library's cancel, which deletes its keys (where they
// still hold its value) and waits for its extenders to stop. A lease the
// library had already given up is Lost.
func (l *ctxLock) Release(_ context.Context, lease Lease) (Outcome, error) {
	h, err := l.ctxHandleOf(lease)
	if err != nil {
		return Failed, err
	}
	if h.released.Swap(true) {
		return Lost, nil
	}
	ended := h.lost.Err() != nil
	h.release()
	if ended {
		return Lost, nil
	}
	return OK, nil
}

// LeaseEnded reports when the library gave lease up unasked (an
// extension failed or found its keys gone), as its context told.
func (l *ctxLock) LeaseEnded(lease Lease) (time.Time, bool) {
	h, ok := lease.handle.(*ctxHandle)
	if !ok {
		return time.Time{}, false
	}
	if ns := h.ended.Load(); ns != 0 {
		return time.Unix(0, ns), true
	}
	return time.Time{}, false
}

// Close closes every locker's client.
func (l *ctxLock) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for k, lk := range l.lockers {
		lk.Close()
		delete(l.lockers, k)
	}
	return nil
}
