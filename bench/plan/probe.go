package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// Probe is a plan's lock armed on its started topology, for checks that
// call the lock directly instead of running a workload (renewal-check's
// adds-or-resets and renew-after-unlock), with a view of the key as the
// server keeps it.
type Probe struct {
	// Locker is the plan's lock, built as a run builds it.
	Locker lockimpl.Locker
	// Prefix is a key prefix of the probe's own: keys under it are not
	// another run's.
	Prefix string
	// Remaining reads the key's remaining lifetime on the servers (the
	// longest over the nodes that keep it); present is false when no
	// server keeps a live key.
	Remaining Remaining
	// Resolution is Remaining's: it floors to a millisecond on Redis, a
	// second on etcd.
	Resolution time.Duration
}

// Remaining reads a key's remaining lifetime on the servers.
type Remaining func(ctx context.Context, key string) (left time.Duration, present bool, err error)

// remaining is how a backend reads a key's lifetime, and to what
// resolution.
type remaining struct {
	read       Remaining
	resolution time.Duration
}

// WithProbe starts pl's topology, arms its lock and calls fn with it; the
// servers it started are stopped when fn returns.
func WithProbe(ctx context.Context, pl Plan, env Env, fn func(ctx context.Context, p Probe) error) error {
	id := NewRunID()
	topo, err := up(ctx, pl, env)
	if err != nil {
		return err
	}
	defer topo.Close()
	arm, ok := armers()[pl.Topology.Info().Backend]
	if !ok {
		return fmt.Errorf("no lock can be armed on %s (backend %q)", pl.Topology, pl.Topology.Info().Backend)
	}
	a, _, err := arm(ctx, pl, env, id, KeyPrefix(id), topo)
	if err != nil {
		return err
	}
	if a.close != nil {
		defer a.close()
	}
	if a.remaining.read == nil {
		return fmt.Errorf("lock %s on %s: the server's remaining TTL cannot be read", pl.Lock, pl.Topology)
	}
	return fn(ctx, Probe{Locker: a.locker, Prefix: KeyPrefix(id), Remaining: a.remaining.read, Resolution: a.remaining.resolution})
}
