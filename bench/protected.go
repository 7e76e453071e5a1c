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
// is checked: overlaps of holders, fencing, stale writes, blocked keys.
type Protected interface {
	// Enter records a holder entering key's critical section at now; see
	// Resource.Enter.
	Enter(ctx context.Context, key int, now time.Time) (e Entry, overlap bool, blocked time.Duration, err error)
	// Write is the protected write by lease's holder; see Resource.Write.
	// A lease without a TTL (lockimpl.NoExpiry) may have ended unseen, so
	// its write is judged as an expired one's would be.
	Write(ctx context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, error)
	// Exit records the holder leaving.
	Exit(ctx context.Context, e Entry) error
	// Abandon records a crashed holder leaving without releasing.
	Abandon(ctx context.Context, e Entry, now time.Time) error
	// Remote says whether calls are round trips (timed as op resource).
	Remote() bool
}

// inProcess is the exact in-process resource behind the Protected contract.
type inProcess struct{ r *Resource }

// InProcess returns an in-process protected resource: exact, but blind to
// holders in other processes.
func InProcess() Protected { return inProcess{NewResource()} }

func (p inProcess) Enter(_ context.Context, key int, now time.Time) (Entry, bool, time.Duration, error) {
	e, overlap, blocked := p.r.Enter(key, now)
	return e, overlap, blocked, nil
}

func (p inProcess) Write(_ context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, error) {
	return p.r.Write(e, lease.Fence, mayBeStale(lease, expired)), nil
}

// mayBeStale says whether a write may come from a holder whose lease has
// ended: it expired, or it has no TTL and may have ended without the holder
// knowing (a session ended under it). Such a write after a newer holder's
// is a stale write; a live holder's never is.
func mayBeStale(lease lockimpl.Lease, expired bool) bool { return expired || !lease.Expires() }

func (p inProcess) Exit(_ context.Context, e Entry) error { p.r.Exit(e); return nil }

func (p inProcess) Abandon(_ context.Context, e Entry, now time.Time) error {
	p.r.Abandon(e, now)
	return nil
}

func (inProcess) Remote() bool { return false }

//go:embed scripts/resource_enter.lua
var resourceEnterSrc string

//go:embed scripts/resource_write.lua
var resourceWriteSrc string

//go:embed scripts/resource_abandon.lua
var resourceAbandonSrc string

// SharedResource keeps the protected resource in a Redis of its own, so the
// generators of one run see each other's holders: an overlap between two
// processes, a stale write after another process's holder wrote. Each key's
// state is one hash, updated by scripts, with the server's clock for blocked
// time so that generators' clocks need not agree.
type SharedResource struct {
	client *redis.Client
	prefix string
	enter  *redis.Script
	write  *redis.Script
	leave  *redis.Script
}

// resourceTTL keeps a key's state past the run, then lets it go.
const resourceTTL = time.Hour

// NewSharedResource returns the resource kept under prefix on client.
func NewSharedResource(client *redis.Client, prefix string) *SharedResource {
	return &SharedResource{client: client, prefix: prefix + "resource:",
		enter: redis.NewScript(resourceEnterSrc), write: redis.NewScript(resourceWriteSrc), leave: redis.NewScript(resourceAbandonSrc)}
}

func (s *SharedResource) key(k int) string { return s.prefix + strconv.Itoa(k) }

// Enter increments the key's holders inside and its epoch, and takes the
// time it sat abandoned.
func (s *SharedResource) Enter(ctx context.Context, key int, _ time.Time) (Entry, bool, time.Duration, error) {
	v, err := s.enter.Run(ctx, s.client, []string{s.key(key)}, resourceTTL.Milliseconds()).Int64Slice()
	if err != nil || len(v) != 3 {
		return Entry{key: key}, false, 0, fmt.Errorf("shared resource enter: %w", err)
	}
	return Entry{key: key, epoch: uint64(v[1])}, v[0] > 1, time.Duration(v[2]) * time.Microsecond, nil
}

// Write checks the fence or the staleness of an expired holder's write.
func (s *SharedResource) Write(ctx context.Context, e Entry, lease lockimpl.Lease, expired bool) (WriteVerdict, error) {
	fence, exp := lease.Fence, 0
	if mayBeStale(lease, expired) {
		exp = 1
	}
	v, err := s.write.Run(ctx, s.client, []string{s.key(e.key)}, e.epoch, fence, exp).Int64()
	if err != nil {
		return WriteAccepted, fmt.Errorf("shared resource write: %w", err)
	}
	return WriteVerdict(v), nil
}

// Exit decrements the holders inside.
func (s *SharedResource) Exit(ctx context.Context, e Entry) error {
	if err := s.client.HIncrBy(ctx, s.key(e.key), "inside", -1).Err(); err != nil {
		return fmt.Errorf("shared resource exit: %w", err)
	}
	return nil
}

// Abandon decrements the holders inside and stamps when the key was left.
func (s *SharedResource) Abandon(ctx context.Context, e Entry, _ time.Time) error {
	if err := s.leave.Run(ctx, s.client, []string{s.key(e.key)}).Err(); err != nil {
		return fmt.Errorf("shared resource abandon: %w", err)
	}
	return nil
}

// Remote is true: every call is a round trip.
func (s *SharedResource) Remote() bool { return true }
