// Package resource holds the protected resources kept in a server, one
// file a backend: Redis (a shared Redis, by scripts) and Postgres
// (PostgreSQL enforcing the fence itself). They implement bench.Protected;
// bench itself knows only that contract and its in-process resource, and
// imports no driver.
package resource

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/lockimpl"
)

//go:embed scripts/resource_enter.lua
var resourceEnterSrc string

//go:embed scripts/resource_write.lua
var resourceWriteSrc string

//go:embed scripts/resource_abandon.lua
var resourceAbandonSrc string

//go:embed scripts/resource_renewed.lua
var resourceRenewedSrc string

// Redis keeps the protected resource in a Redis of its own, so the
// generators of one run see each other's holders: an overlap between two
// processes, a stale write after another process's holder wrote. Each key's
// state is one hash, updated by scripts, with the server's clock for blocked
// time so that generators' clocks need not agree. The cause of an overlap
// compares the clients' own grant and validity times (unix µs): generators
// on one host, or with synchronised clocks.
type Redis struct {
	client  *redis.Client
	prefix  string
	enter   *redis.Script
	write   *redis.Script
	leave   *redis.Script
	renewed *redis.Script
}

// resourceTTL keeps a key's state past the run, then lets it go.
const resourceTTL = time.Hour

// NewRedis returns the resource kept under prefix on client.
func NewRedis(client *redis.Client, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix + "resource:",
		enter: redis.NewScript(resourceEnterSrc), write: redis.NewScript(resourceWriteSrc),
		leave: redis.NewScript(resourceAbandonSrc), renewed: redis.NewScript(resourceRenewedSrc)}
}

func (s *Redis) key(k int) string { return s.prefix + strconv.Itoa(k) }

// Enter increments the key's holders inside and its epoch, classifies an
// overlap, and takes the time the key sat abandoned.
func (s *Redis) Enter(ctx context.Context, key int, g bench.Grant) (bench.Entry, bench.Overlap, time.Duration, bench.Stamp, error) {
	v, err := s.enter.Run(ctx, s.client, []string{s.key(key)}, resourceTTL.Milliseconds(),
		g.At.UnixMicro(), g.ValidUntil.UnixMicro(), g.Drift.Microseconds()).Int64Slice()
	if err != nil || len(v) != 5 {
		return bench.NewEntry(key, 0), bench.NoOverlap, 0, bench.Stamp{At: time.Now()}, fmt.Errorf("shared resource enter: %w", err)
	}
	return bench.NewEntry(key, uint64(v[1])), bench.Overlap(v[3]), time.Duration(v[2]) * time.Microsecond,
		bench.Stamp{Seq: uint64(v[4]), At: time.Now()}, nil
}

// Renewed stores the holder's new validity.
func (s *Redis) Renewed(ctx context.Context, e bench.Entry, validUntil time.Time) (bench.Stamp, error) {
	seq, err := s.renewed.Run(ctx, s.client, []string{s.key(e.Key())}, e.Epoch(), validUntil.UnixMicro()).Int64()
	if err != nil {
		return bench.Stamp{At: time.Now()}, fmt.Errorf("shared resource renewed: %w", err)
	}
	return bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// Write checks the fence or the staleness of an expired holder's write.
func (s *Redis) Write(ctx context.Context, e bench.Entry, lease lockimpl.Lease, expired bool) (bench.WriteVerdict, bench.Stamp, error) {
	fence, exp := lease.Fence, 0
	if bench.MayBeStale(lease, expired) {
		exp = 1
	}
	v, err := s.write.Run(ctx, s.client, []string{s.key(e.Key())}, e.Epoch(), fence, exp).Int64Slice()
	if err != nil || len(v) != 2 {
		return bench.WriteAccepted, bench.Stamp{At: time.Now()}, fmt.Errorf("shared resource write: %w", err)
	}
	return bench.WriteVerdict(v[0]), bench.Stamp{Seq: uint64(v[1]), At: time.Now()}, nil
}

// Exit decrements the holders inside.
func (s *Redis) Exit(ctx context.Context, e bench.Entry) (bench.Stamp, error) {
	return s.leaveKey(ctx, e, 0)
}

// Abandon decrements the holders inside and stamps when the key was left.
func (s *Redis) Abandon(ctx context.Context, e bench.Entry, _ time.Time) (bench.Stamp, error) {
	return s.leaveKey(ctx, e, 1)
}

func (s *Redis) leaveKey(ctx context.Context, e bench.Entry, crashed int) (bench.Stamp, error) {
	seq, err := s.leave.Run(ctx, s.client, []string{s.key(e.Key())}, e.Epoch(), crashed).Int64()
	if err != nil {
		return bench.Stamp{At: time.Now()}, fmt.Errorf("shared resource leave: %w", err)
	}
	return bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// Remote is true: every call is a round trip.
func (s *Redis) Remote() bool { return true }
