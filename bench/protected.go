package bench

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// Protected is the resource every critical section writes to, where safety
// is checked: overlaps of holders and their cause, fencing, stale writes,
// blocked keys. Every call returns its Stamp: the key's event number and the
// time, for the history.
type Protected interface {
	// Enter records a holder entering key's critical section with lease g;
	// see Resource.Enter.
	Enter(ctx context.Context, key int, g Grant) (e Entry, overlap Overlap, blocked time.Duration, st Stamp, err error)
	// Renewed records that e's holder renewed its lease until validUntil.
	Renewed(ctx context.Context, e Entry, validUntil time.Time) (Stamp, error)
	// Write is the protected write; see Resource.Write.
	// A lease without a TTL (lockimpl.NoExpiry) may have ended unseen, so
	// its write is judged as an expired one's would be.
	Write(ctx context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, Stamp, error)
	// Exit records the holder leaving.
	Exit(ctx context.Context, e Entry) (Stamp, error)
	// Abandon records a crashed holder leaving without releasing.
	Abandon(ctx context.Context, e Entry, now time.Time) (Stamp, error)
	// Remote says whether calls are round trips (timed as op resource).
	Remote() bool
}

// Versioned is a Protected that checks a row's version on every write, the
// only kind an optimistic lock (lockimpl.Optimistic) can run against: its
// write is a compare-and-set that only such a resource sees conflict.
type Versioned interface {
	Protected
	// ChecksVersions marks the resource; it does nothing.
	ChecksVersions()
}

// inProcess is the exact in-process resource behind the Protected contract.
type inProcess struct{ r *Resource }

// InProcess returns an in-process protected resource: exact, but blind to
// holders in other processes.
func InProcess() Protected { return inProcess{NewResource()} }

// untimedInProcess is InProcess for a run that keeps no history: its
// stamps carry no time, which only the history reads.
func untimedInProcess() Protected { return inProcess{newUntimedResource()} }

func (p inProcess) Enter(_ context.Context, key int, g Grant) (Entry, Overlap, time.Duration, Stamp, error) {
	e, overlap, blocked, st := p.r.Enter(key, g)
	return e, overlap, blocked, st, nil
}

func (p inProcess) Renewed(_ context.Context, e Entry, validUntil time.Time) (Stamp, error) {
	return p.r.Renewed(e, validUntil), nil
}

func (p inProcess) Write(_ context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, Stamp, error) {
	v, st := p.r.Write(e, lease.Fence, MayBeStale(lease, expired))
	return v, st, nil
}

func (p inProcess) Exit(_ context.Context, e Entry) (Stamp, error) { return p.r.Exit(e), nil }

func (p inProcess) Abandon(_ context.Context, e Entry, now time.Time) (Stamp, error) {
	return p.r.Abandon(e, now), nil
}

func (inProcess) Remote() bool { return false }

// unfencedWrites is a resource whose writes carry no fencing token
// (Options.UnfencedWrites): a stale holder's write is judged as any
// unfenced lock's is.
type unfencedWrites struct{ Protected }

// Write drops the lease's fencing token.
func (u unfencedWrites) Write(ctx context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, Stamp, error) {
	lease.Fence = 0
	return u.Protected.Write(ctx, e, lease, expired)
}

// MayBeStale says whether a write may come from a holder whose lease has
// ended: it expired, or it has no TTL and may have ended without the holder
// knowing (a session ended under it). Such a write after a newer holder's
// is a stale write; a live holder's never is.
func MayBeStale(lease lockimpl.Lease, expired bool) bool { return expired || !lease.Expires() }
