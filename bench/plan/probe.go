package plan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

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

// redisRemaining reads PTTL on every node: a key kept anywhere is present
// (Redlock's masters each keep a copy).
func redisRemaining(clients []*redis.Client) remaining {
	return remaining{resolution: time.Millisecond, read: func(ctx context.Context, key string) (time.Duration, bool, error) {
		var left time.Duration
		present := false
		for _, c := range clients {
			d, err := c.PTTL(ctx, key).Result()
			if err != nil {
				return 0, false, fmt.Errorf("PTTL %s on %s: %w", key, c.Options().Addr, err)
			}
			// PTTL answers -2 for no key and -1 for a key without expiry
			// (which a lock must never leave: it counts as present forever).
			switch {
			case d == -2*time.Nanosecond || d == -2*time.Millisecond:
			case d < 0:
				present, left = true, time.Duration(1<<62)
			default:
				present, left = true, max(left, d)
			}
		}
		return left, present, nil
	}}
}

// etcdRemaining reads the lease attached to the key: its TTL as the
// leader counts it (whole seconds).
func etcdRemaining(c *clientv3.Client) remaining {
	return remaining{resolution: time.Second, read: func(ctx context.Context, key string) (time.Duration, bool, error) {
		resp, err := c.Get(ctx, key)
		if err != nil {
			return 0, false, fmt.Errorf("get %s: %w", key, err)
		}
		if len(resp.Kvs) == 0 {
			return 0, false, nil
		}
		id := clientv3.LeaseID(resp.Kvs[0].Lease)
		if id == clientv3.NoLease {
			return time.Duration(1 << 62), true, nil
		}
		ttl, err := c.TimeToLive(ctx, id)
		if err != nil {
			return 0, false, fmt.Errorf("lease of %s: %w", key, err)
		}
		if ttl.TTL < 0 {
			return 0, false, nil
		}
		return time.Duration(ttl.TTL) * time.Second, true, nil
	}}
}

// pgLeaseRemaining reads the key's expiry column against the server's
// clock; a row whose expiry passed holds nobody, and is absent.
func pgLeaseRemaining(pool *pgxpool.Pool) remaining {
	return remaining{resolution: time.Microsecond, read: func(ctx context.Context, key string) (time.Duration, bool, error) {
		var us int64
		err := pool.QueryRow(ctx, `select (extract(epoch from expires - clock_timestamp()) * 1e6)::bigint from `+
			lockimpl.PgLeaseTable+` where key = $1 and expires > clock_timestamp()`, key).Scan(&us)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return 0, false, nil
		case err != nil:
			return 0, false, fmt.Errorf("expiry of %s: %w", key, err)
		}
		return time.Duration(us) * time.Microsecond, true, nil
	}}
}
