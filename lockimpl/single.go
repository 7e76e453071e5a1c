package lockimpl

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/release.lua
var releaseSrc string

//go:embed scripts/renew.lua
var renewSrc string

//go:embed scripts/fenced_acquire.lua
var fencedAcquireSrc string

// scripts holds the compiled scripts one locker uses; go-redis runs them by
// EVALSHA and falls back to EVAL on NOSCRIPT (after a restart, say).
type scripts struct {
	release, renew, fencedAcquire *redis.Script
}

func newScripts() scripts {
	return scripts{
		release:       redis.NewScript(releaseSrc),
		renew:         redis.NewScript(renewSrc),
		fencedAcquire: redis.NewScript(fencedAcquireSrc),
	}
}

// scriptOutcome maps the scripts' 1 / 0 / -1 replies to outcomes.
func scriptOutcome(n int64) Outcome {
	switch n {
	case 1:
		return OK
	case 0:
		return Taken
	}
	return Lost
}

// Single is the single-instance lease lock: SET NX PX to acquire, Lua
// compare-and-delete to release, compare-and-pexpire to renew.
type Single struct {
	client  *redis.Client
	scripts scripts
	fenced  bool
}

// NewSingle returns the single-instance lock over client.
func NewSingle(client *redis.Client) *Single {
	return &Single{client: client, scripts: newScripts()}
}

// NewFenced returns the single-instance lock whose acquire also increments a
// per-key counter in the same script and hands the value out as fencing token.
func NewFenced(client *redis.Client) *Single {
	return &Single{client: client, scripts: newScripts(), fenced: true}
}

// Info describes the lock.
func (s *Single) Info() Info {
	if s.fenced {
		return Info{Name: "fenced", Fencing: true, Nodes: 1}
	}
	return Info{Name: "single", Nodes: 1}
}

// FenceKey is the key holding the fencing counter of a lock key.
func FenceKey(key string) string { return key + ":fence" }

// Acquire makes one attempt at key.
func (s *Single) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	lease := Lease{Key: key, Token: NewToken(), Start: time.Now(), Validity: ttl}
	if s.fenced {
		fence, err := s.scripts.fencedAcquire.Run(ctx, s.client, []string{key, FenceKey(key)}, lease.Token, ttl.Milliseconds()).Int64()
		if err != nil {
			return Lease{}, Failed, fmt.Errorf("fenced acquire %s: %w", key, err)
		}
		if fence == 0 {
			return Lease{}, Contended, nil
		}
		lease.Fence = fence
		return lease, OK, nil
	}
	ok, err := s.client.SetNX(ctx, key, lease.Token, ttl).Result()
	if err != nil {
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	}
	if !ok {
		return Lease{}, Contended, nil
	}
	return lease, OK, nil
}

// Renew extends the lease while the caller owns it.
func (s *Single) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	start := time.Now()
	n, err := s.scripts.renew.Run(ctx, s.client, []string{lease.Key}, lease.Token, ttl.Milliseconds()).Int64()
	if err != nil {
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	out := scriptOutcome(n)
	if out == OK {
		lease.Start, lease.Validity = start, ttl
	}
	return out, nil
}

// Release deletes the key while the caller owns it.
func (s *Single) Release(ctx context.Context, lease Lease) (Outcome, error) {
	n, err := s.scripts.release.Run(ctx, s.client, []string{lease.Key}, lease.Token).Int64()
	if err != nil {
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	}
	return scriptOutcome(n), nil
}
