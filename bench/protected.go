package bench

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

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
	v, st := p.r.Write(e, lease.Fence, mayBeStale(lease, expired))
	return v, st, nil
}

func (p inProcess) Exit(_ context.Context, e Entry) (Stamp, error) { return p.r.Exit(e), nil }

func (p inProcess) Abandon(_ context.Context, e Entry, now time.Time) (Stamp, error) {
	return p.r.Abandon(e, now), nil
}

func (inProcess) Remote() bool { return false }

// mayBeStale says whether a write may come from a holder whose lease has
// ended: it expired, or it has no TTL and may have ended without the holder
// knowing (a session ended under it). Such a write after a newer holder's
// is a stale write; a live holder's never is.
func mayBeStale(lease lockimpl.Lease, expired bool) bool { return expired || !lease.Expires() }

//go:embed scripts/resource_enter.lua
var resourceEnterSrc string

//go:embed scripts/resource_write.lua
var resourceWriteSrc string

//go:embed scripts/resource_abandon.lua
var resourceAbandonSrc string

//go:embed scripts/resource_renewed.lua
var resourceRenewedSrc string

// SharedResource keeps the protected resource in a Redis of its own, so the
// generators of one run see each other's holders: an overlap between two
// processes, a stale write after another process's holder wrote. Each key's
// state is one hash, updated by scripts, with the server's clock for blocked
// time so that generators' clocks need not agree. The cause of an overlap
// compares the clients' own grant and validity times (unix µs): generators
// on one host, or with synchronised clocks.
type SharedResource struct {
	client  *redis.Client
	prefix  string
	enter   *redis.Script
	write   *redis.Script
	leave   *redis.Script
	renewed *redis.Script
}

// resourceTTL keeps a key's state past the run, then lets it go.
const resourceTTL = time.Hour

// NewSharedResource returns the resource kept under prefix on client.
func NewSharedResource(client *redis.Client, prefix string) *SharedResource {
	return &SharedResource{client: client, prefix: prefix + "resource:",
		enter: redis.NewScript(resourceEnterSrc), write: redis.NewScript(resourceWriteSrc),
		leave: redis.NewScript(resourceAbandonSrc), renewed: redis.NewScript(resourceRenewedSrc)}
}

func (s *SharedResource) key(k int) string { return s.prefix + strconv.Itoa(k) }

// Enter increments the key's holders inside and its epoch, classifies an
// overlap, and takes the time the key sat abandoned.
func (s *SharedResource) Enter(ctx context.Context, key int, g Grant) (Entry, Overlap, time.Duration, Stamp, error) {
	v, err := s.enter.Run(ctx, s.client, []string{s.key(key)}, resourceTTL.Milliseconds(),
		g.At.UnixMicro(), g.ValidUntil.UnixMicro(), g.Drift.Microseconds()).Int64Slice()
	if err != nil || len(v) != 5 {
		return Entry{key: key}, NoOverlap, 0, Stamp{At: time.Now()}, fmt.Errorf("shared resource enter: %w", err)
	}
	return Entry{key: key, epoch: uint64(v[1])}, Overlap(v[3]), time.Duration(v[2]) * time.Microsecond,
		Stamp{Seq: uint64(v[4]), At: time.Now()}, nil
}

// Renewed stores the holder's new validity.
func (s *SharedResource) Renewed(ctx context.Context, e Entry, validUntil time.Time) (Stamp, error) {
	seq, err := s.renewed.Run(ctx, s.client, []string{s.key(e.key)}, e.epoch, validUntil.UnixMicro()).Int64()
	if err != nil {
		return Stamp{At: time.Now()}, fmt.Errorf("shared resource renewed: %w", err)
	}
	return Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// Write checks the fence or the staleness of an expired holder's write.
func (s *SharedResource) Write(ctx context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, Stamp, error) {
	fence, exp := lease.Fence, 0
	if mayBeStale(lease, expired) {
		exp = 1
	}
	v, err := s.write.Run(ctx, s.client, []string{s.key(e.key)}, e.epoch, fence, exp).Int64Slice()
	if err != nil || len(v) != 2 {
		return WriteAccepted, Stamp{At: time.Now()}, fmt.Errorf("shared resource write: %w", err)
	}
	return WriteVerdict(v[0]), Stamp{Seq: uint64(v[1]), At: time.Now()}, nil
}

// Exit decrements the holders inside.
func (s *SharedResource) Exit(ctx context.Context, e Entry) (Stamp, error) {
	return s.leaveKey(ctx, e, 0)
}

// Abandon decrements the holders inside and stamps when the key was left.
func (s *SharedResource) Abandon(ctx context.Context, e Entry, _ time.Time) (Stamp, error) {
	return s.leaveKey(ctx, e, 1)
}

func (s *SharedResource) leaveKey(ctx context.Context, e Entry, crashed int) (Stamp, error) {
	seq, err := s.leave.Run(ctx, s.client, []string{s.key(e.key)}, e.epoch, crashed).Int64()
	if err != nil {
		return Stamp{At: time.Now()}, fmt.Errorf("shared resource leave: %w", err)
	}
	return Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// Remote is true: every call is a round trip.
func (s *SharedResource) Remote() bool { return true }
