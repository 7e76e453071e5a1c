package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/bench/resource"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// armRedis reaches a Redis topology's servers and builds the lock over them.
func armRedis(ctx context.Context, pl Plan, env Env, id, prefix string, topo *compose.Topology) (armed, *results.Result, error) {
	clients := lockClients(topo, pl)
	if err := ping(ctx, clients, topo); err != nil {
		if ierr := interrupted(ctx, "while reaching the servers"); ierr != nil {
			return armed{}, nil, ierr
		}
		return armed{}, nil, err
	}
	nodes, err := lockNodesFor(topo, pl, clients)
	if err != nil {
		return armed{}, nil, err
	}
	desc, _ := lockimpl.Describe(pl.Lock)
	goLocks := lockimpl.GoLocksIn(ctx)
	if g, ok := goLocks.Find(pl.Lock); ok {
		// A Go lock's descriptor is the program's, which plan's checks
		// (run before the program's locks are at hand) could not read.
		desc = g.Descriptor
		if !desc.Renewable && pl.Workload.RenewEvery > 0 {
			return armed{}, nil, badInput("renew-every", "%v: lock %s is registered not renewable", pl.Workload.RenewEvery, pl.Lock)
		}
	}
	var sent *sentMeter
	if !desc.OwnClient {
		// A lock with a client of its own sends past these clients:
		// its round trips stay absent rather than read as 0.
		sent = countSent(topo, clients, nodes)
	}
	lockOpts := pl.LockOptions
	if sent != nil {
		lockOpts.Sent = sent.counter
	}
	if pl.Pipeline == "auto" {
		lockOpts.Pipe = &lockimpl.PipeOptions{}
	}
	lockOpts.Driver.Workers = pl.Bench.Concurrency
	lockOpts.Go = goLocks
	locker, err := lockimpl.New(pl.Lock, nodes, lockOpts)
	if err != nil {
		if lockimpl.IsDriver(pl.Lock) {
			// The user's program failed to start or greet: a run-time
			// failure, named by the driver's own line.
			return armed{}, nil, err
		}
		return armed{}, nil, badInput("lock", "%v", err)
	}
	if d, ok := locker.(*lockimpl.Driver); ok && pl.Workload.RenewEvery > 0 && !d.Caps().Renews {
		_ = d.Close()
		return armed{}, nil, fmt.Errorf("lock %s: its driver's hello says renews: false, and the run renews (--renew-every %v)", pl.Lock, pl.Workload.RenewEvery)
	}
	r := newResult(id, pl, topo, locker, redisVersion(ctx, clients[0]), env)
	// A small pool of its own per node for INFO and cleanup, apart from the lock's.
	admin, adminAddrs := adminFor(topo)
	a := armed{locker: locker, meter: infoMeter(admin, adminAddrs), sent: sent, remaining: redisRemaining(admin),
		cleanUp: func(ctx context.Context, m *bench.Measurement, down map[string]string, env Env) {
			cleanUp(ctx, pl, locker, m, cleanupClients(ctx, topo, admin, adminAddrs, down), prefix, env)
		}}
	if c, ok := locker.(io.Closer); ok {
		// Connections a lock keeps of its own, apart from the topology's
		// clients (Redlock's raw fan-out), close with the run.
		a.close = func() { _ = c.Close() }
	}
	return a, r, nil
}

// cleanUp removes what the run left on the servers. A lone run deletes
// every key under its own prefix. A generator of a shared run (--run-id)
// must not delete keys another generator still holds: it releases only the
// leases its own crashed holders left, by their tokens, and gives the
// shared fencing counters an expiry long past the run's end instead.
func cleanUp(ctx context.Context, pl Plan, locker lockimpl.Locker, m *bench.Measurement, admin []*redis.Client, prefix string, env Env) {
	if pl.RunID == "" {
		n, err := cleanup(ctx, admin, prefix)
		logDeleted(env, prefix, n, err)
		return
	}
	released := releaseAbandoned(ctx, locker, m)
	settle(locker)
	keep := max(time.Minute, 10*pl.Workload.TTL)
	n, err := expireFences(ctx, admin, prefix, keep)
	if err != nil {
		env.logf("cleanup of %s*: %v", prefix, err)
	}
	env.logf("cleanup: released %d lease(s) left by crashed holders; %d fencing counter(s) under %s expire in %v", released, n, prefix, keep)
}

// expireFences gives the run's fencing counters that have no expiry one, so
// they outlive every generator of the run and then go.
func expireFences(ctx context.Context, clients []*redis.Client, prefix string, keep time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n := 0
	var errs []error
	for _, c := range clients {
		iter := c.Scan(ctx, 0, prefix+"*"+lockimpl.FenceKey(""), 1000).Iterator()
		for iter.Next(ctx) {
			// NX: a counter another generator already set to expire keeps its expiry.
			if set, err := c.Do(ctx, "PEXPIRE", iter.Val(), keep.Milliseconds(), "NX").Int(); err != nil {
				errs = append(errs, err)
			} else if set == 1 {
				n++
			}
		}
		if err := iter.Err(); err != nil {
			errs = append(errs, fmt.Errorf("scan %s: %w", c.Options().Addr, err))
		}
	}
	return n, errors.Join(errs...)
}

// lockNodes are what the lock sends its commands through: the clients.
// With --pipeline auto the lock sends through a pipe of its own to each
// client's server instead (lockimpl.Options.Pipe), dialled with the client's
// options.
func lockNodes(clients []*redis.Client) []redis.Cmdable {
	return lockimpl.Nodes(clients...)
}

// lockClients are the clients the lock uses: one per master, or behind
// sentinels (replicated) one sentinel-aware client that follows the primary.
func lockClients(topo *compose.Topology, pl Plan) []*redis.Client {
	co := compose.ClientOptions{PoolSize: pl.PoolSize}
	if len(topo.SentinelAddrs()) > 0 {
		return []*redis.Client{topo.FailoverClient(co)}
	}
	if isCluster(topo) {
		return masterClients(topo)
	}
	return topo.Clients(co)
}

// redisVersion is the version a Redis server reports, or why it is unknown.
func redisVersion(ctx context.Context, c *redis.Client) string {
	version, err := compose.ServerVersion(ctx, c)
	if err != nil {
		return "unknown (" + lockimpl.ErrorKind(err) + ")"
	}
	return version
}

// ping checks every server answers before the run, so an unreachable server is
// a clear runtime error rather than a run full of errors.
func ping(ctx context.Context, clients []*redis.Client, topo *compose.Topology) error {
	var errs []error
	for i, c := range clients {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if err := c.Ping(pctx).Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s) does not answer PING: %w", topo.Nodes[i].Name, topo.Nodes[i].Addr, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// liveClients leaves out the clients of nodes the run took down: there is
// nothing to clean on them, and their "connection refused" is no news.
func liveClients(clients []*redis.Client, addrs []string, down map[string]string) []*redis.Client {
	var out []*redis.Client
	for i, c := range clients {
		if _, gone := down[addrs[i]]; !gone {
			out = append(out, c)
		}
	}
	return out
}

// cleanup deletes the run's keys, and only those: SCAN MATCH prefix*, UNLINK.
func cleanup(ctx context.Context, clients []*redis.Client, prefix string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	deleted := 0
	var errs []error
	for _, c := range clients {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var batch []string
		flush := func() {
			if len(batch) == 0 {
				return
			}
			n, err := unlinkEach(ctx, c, batch)
			if err != nil {
				errs = append(errs, err)
			}
			deleted += int(n)
			batch = batch[:0]
		}
		for iter.Next(ctx) {
			if batch = append(batch, iter.Val()); len(batch) == 500 {
				flush()
			}
		}
		flush()
		if err := iter.Err(); err != nil {
			errs = append(errs, fmt.Errorf("scan %s: %w", c.Options().Addr, err))
		}
	}
	return deleted, errors.Join(errs...)
}

// resourceClient connects to the Redis of a shared protected resource and
// checks it answers.
func resourceClient(ctx context.Context, url string, pool int) (*redis.Client, error) {
	o, err := compose.ParseRedisURL(url)
	if err != nil {
		return nil, badInput("resource", "%s", strings.TrimPrefix(err.Error(), "--redis "))
	}
	o.MaxRetries, o.ContextTimeoutEnabled, o.DisableIdentity, o.DialTimeout, o.PoolSize = -1, true, true, time.Second, pool
	c := redis.NewClient(o)
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("--resource %s does not answer PING: %w", compose.RedactURL(url), err)
	}
	return c, nil
}

// openRedisResource keeps the protected resource in the Redis at url; its
// close deletes a lone run's resource keys and closes the client.
func openRedisResource(ctx context.Context, url string, pool int, prefix string) (bench.Protected, func(lone bool), error) {
	rc, err := resourceClient(ctx, url, pool)
	if err != nil {
		return nil, nil, err
	}
	return resource.NewRedis(rc, prefix), func(lone bool) {
		if lone {
			_, _ = cleanup(context.WithoutCancel(ctx), []*redis.Client{rc}, prefix+"resource:")
		}
		_ = rc.Close()
	}, nil
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
