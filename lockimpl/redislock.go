package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// RedislockModule is the module path of the redislock library the adapter drives.
const RedislockModule = "github.com/bsm/redislock"

// Redislock drives github.com/bsm/redislock on one server: Acquire is one
// Obtain (no retry unless tries=N), Renew is Lock.Refresh, Release is
// Lock.Release. The caller chooses redislock's token (Options.Token), so
// leases carry lockbench's 128-bit token. redislock has no fencing token
// (v0.9.4), and it acts only through the *Lock its Obtain returned.
type Redislock struct {
	client *redislock.Client
	opts   PeerOptions
	info   Info
}

// NewRedislock returns the redislock adapter over one server.
func NewRedislock(client redis.Cmdable, opts PeerOptions) (*Redislock, error) {
	if opts.Tries < 1 || (opts.Tries > 1 && opts.RetryDelay <= 0) {
		return nil, fmt.Errorf("redislock options %+v: want tries ≥ 1, and a retry delay with more than one", opts)
	}
	info := Info{Name: LockRedislock, Nodes: 1, Library: RedislockModule, Version: ModuleVersion(RedislockModule),
		Settings: opts.Settings(LockRedislock), Defaults: libraryDefaults(LockRedislock)}
	return &Redislock{client: redislock.New(client), opts: opts, info: info}, nil
}

// Info describes the lock and the library settings it runs with.
func (r *Redislock) Info() Info { return r.info }

// options are one Obtain's options. A fresh retry strategy each call:
// redislock's LimitRetry counts tries inside the strategy value, so a shared
// one would run out across calls.
func (r *Redislock) options(token string) *redislock.Options {
	o := &redislock.Options{Token: token, Metadata: r.opts.Metadata}
	if r.opts.Tries > 1 {
		o.RetryStrategy = redislock.LimitRetry(redislock.LinearBackoff(r.opts.RetryDelay), r.opts.Tries-1)
	}
	return o
}

// Acquire makes one Obtain. Its SET NX PX runs inside redislock's obtain
// script, which also re-obtains a key already holding the same token:
// with a fresh token per Acquire that branch never fires.
func (r *Redislock) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	start := time.Now()
	lock, err := r.client.Obtain(ctx, key, ttl, r.options(NewToken()))
	switch {
	case err == nil:
		return Lease{Key: key, Token: lock.Token(), Start: start, Validity: ttl, handle: lock}, OK, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return Lease{}, Contended, nil
	}
	return Lease{}, Failed, fmt.Errorf("redislock obtain %s: %w", key, err)
}

// lockOf is the *Lock that obtained lease; redislock has no other way to
// refresh or release, so a lease it did not issue is refused unsent.
func lockOf(lease Lease) (*redislock.Lock, error) {
	lock, ok := lease.handle.(*redislock.Lock)
	if !ok || lock.Token() != lease.Token || lock.Key() != lease.Key {
		return nil, fmt.Errorf("redislock %s: %w (redislock refreshes and releases only through the Lock its Obtain returned)", lease.Key, ErrForeignLease)
	}
	return lock, nil
}

// Renew calls Refresh. Its script answers 0 both for a key gone and for one
// held by another, so a refused refresh is reported as Lost.
func (r *Redislock) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	lock, err := lockOf(*lease)
	if err != nil {
		return Failed, err
	}
	start := time.Now()
	switch err := lock.Refresh(ctx, ttl, nil); {
	case err == nil:
		lease.Start, lease.Validity = start, ttl
		return OK, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return Lost, nil
	default:
		return Failed, fmt.Errorf("redislock refresh %s: %w", lease.Key, err)
	}
}

// Release calls Release. ErrLockNotHeld covers a key gone and one held by
// another alike, so it is reported as Lost.
func (r *Redislock) Release(ctx context.Context, lease Lease) (Outcome, error) {
	lock, err := lockOf(lease)
	if err != nil {
		return Failed, err
	}
	switch err := lock.Release(ctx); {
	case err == nil:
		return OK, nil
	case errors.Is(err, redislock.ErrLockNotHeld):
		return Lost, nil
	default:
		return Failed, fmt.Errorf("redislock release %s: %w", lease.Key, err)
	}
}
