// Command mylock is lockbench with a team's own Go lock registered through
// the library API: every lockbench command, with --lock go:stamped.
//
// The lock is a SET NX PX lease with a twist of its own: one script takes
// the key and, in the same step, stamps the grant with a fencing number
// from a counter beside the key, so every lease carries a fence without a
// second round trip; a contended attempt reads how long the holder has
// left instead of nothing.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/bench/cli"
	"github.com/lockbench/lockbench/lockimpl"
)

func main() {
	os.Exit(cli.Run(os.Args, cli.Options{Locks: lockimpl.GoLocks{{
		Descriptor: lockimpl.Descriptor{Name: "stamped", Lease: true, Renewable: true, Fencing: true},
		New:        newStamped,
	}}}))
}

// acquire takes KEYS[1] for ARGV[2] ms with token ARGV[1] and returns the
// next number of KEYS[2]; held by another, it returns minus its PTTL (-1
// when the key has no TTL left to read).
var acquire = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
local left = redis.call('PTTL', KEYS[1])
if left < 1 then left = 1 end
return -left`)

// renew extends KEYS[1] to ARGV[2] ms while it holds ARGV[1]: 1 renewed, 0
// gone, -1 another's.
var renew = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if v then return -1 end
return 0`)

// release deletes KEYS[1] while it holds ARGV[1]: 1 released, 0 gone, -1
// another's.
var release = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return redis.call('DEL', KEYS[1]) end
if v then return -1 end
return 0`)

// stamped is the lock over one Redis master.
type stamped struct{ c redis.Cmdable }

// newStamped is the lock's constructor, as lockbench calls it.
func newStamped(nodes []redis.Cmdable) (lockimpl.Locker, error) {
	if len(nodes) != 1 {
		return nil, fmt.Errorf("stamped works on one master, the topology has %d", len(nodes))
	}
	return &stamped{c: nodes[0]}, nil
}

// Info names the lock for reports.
func (s *stamped) Info() lockimpl.Info {
	return lockimpl.Info{Name: "stamped", Fencing: true, Nodes: 1, Library: "example.com/mylock"}
}

// Acquire makes one attempt.
func (s *stamped) Acquire(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	lease := lockimpl.Lease{Key: key, Token: lockimpl.NewToken(), Start: time.Now()}
	n, err := acquire.Run(ctx, s.c, []string{key, key + ":fence"}, lease.Token, ttl.Milliseconds()).Int64()
	if err != nil {
		return lockimpl.Lease{}, lockimpl.Failed, fmt.Errorf("stamped acquire %s: %w", key, err)
	}
	if n < 0 {
		return lockimpl.Lease{}, lockimpl.Contended, nil
	}
	lease.Fence, lease.Validity = n, ttl
	return lease, lockimpl.OK, nil
}

// Renew extends the lease while it is still ours.
func (s *stamped) Renew(ctx context.Context, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
	start := time.Now()
	o, err := owned(renew.Run(ctx, s.c, []string{lease.Key}, lease.Token, ttl.Milliseconds()).Int64())
	if err != nil {
		return o, fmt.Errorf("stamped renew %s: %w", lease.Key, err)
	}
	if o == lockimpl.OK {
		lease.Start, lease.Validity = start, ttl
	}
	return o, nil
}

// Release gives the key up while it is still ours.
func (s *stamped) Release(ctx context.Context, lease lockimpl.Lease) (lockimpl.Outcome, error) {
	o, err := owned(release.Run(ctx, s.c, []string{lease.Key}, lease.Token).Int64())
	if err != nil {
		return o, fmt.Errorf("stamped release %s: %w", lease.Key, err)
	}
	return o, nil
}

// owned reads renew's and release's answer.
func owned(n int64, err error) (lockimpl.Outcome, error) {
	switch {
	case err != nil:
		return lockimpl.Failed, err
	case n == 1:
		return lockimpl.OK, nil
	case n == 0:
		return lockimpl.Lost, nil
	case n == -1:
		return lockimpl.Taken, nil
	}
	return lockimpl.Failed, errors.New("unexpected answer")
}
