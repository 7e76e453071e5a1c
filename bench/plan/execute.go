package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Env is where Execute reports as it goes.
type Env struct {
	// Progress gets the live line once a second; nil for none.
	Progress io.Writer
	// Log gets one line per step (starting servers, cleaning up); nil for none.
	Log io.Writer
	// Group names a set of repeats of one configuration; empty for a lone run.
	Group string
	// Repeat is this run's index within its group.
	Repeat int
}

func (e Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// NewRunID returns a sortable, unique run id: UTC time and 6 random hex digits.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// KeyPrefix is the prefix under which run id writes every key.
func KeyPrefix(id string) string { return "lockbench:" + id + ":" }

// Execute runs one plan end to end and returns its result (not yet stored).
// An interrupted run (ctx cancelled) still returns its partial result.
func Execute(ctx context.Context, pl Plan, env Env) (*results.Result, error) {
	id := NewRunID()
	topo, err := up(ctx, pl, env)
	if err != nil {
		return nil, err
	}
	defer topo.Close()
	for _, f := range pl.Faults {
		if err := topo.CheckFault(f); err != nil {
			return nil, badInput("fault", "%v", err)
		}
	}
	clients := lockClients(topo, pl)
	if err := ping(ctx, clients, topo); err != nil {
		return nil, err
	}
	locker, err := lockimpl.New(pl.Lock, clients, pl.LockOptions)
	if err != nil {
		return nil, badInput("lock", "%v", err)
	}
	r := newResult(ctx, id, pl, topo, clients, locker, env)

	// A small pool of its own per node for INFO and cleanup, apart from the lock's.
	admin := topo.Clients(compose.ClientOptions{PoolSize: 2})
	meter := newCostMeter(admin, topo.Addrs())
	faults := newFaultLog(pl.Faults)
	cpu := &cpuMeter{}
	var stopFaults func()
	var nodeBase []lockimpl.NodeCounts
	rl, isRedlock := locker.(*lockimpl.Redlock)
	opts := pl.Bench
	opts.KeyPrefix = KeyPrefix(id)
	opts.Progress = env.Progress
	opts.OnWindowStart = func(start time.Time) {
		meter.before(ctx)
		cpu.start()
		if isRedlock {
			nodeBase = rl.NodeCounts()
		}
		if len(pl.Faults) > 0 {
			stopFaults = topo.Schedule(ctx, start, pl.Faults, faults.record(env))
		}
	}
	m, err := bench.Run(ctx, locker, pl.Workload, opts)
	if stopFaults != nil {
		stopFaults()
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	if isRedlock {
		// Releases still finishing in the background are part of the run's
		// server cost, so they land before the closing INFO reading.
		rl.Wait()
		r.NodeOutcomes = nodeOutcomes(topo, nodeBase, rl.NodeCounts())
	}
	cpu.stop()
	meter.after(context.WithoutCancel(ctx))
	if err := m.Fill(r); err != nil {
		return nil, err
	}
	r.Faults = faults.events()
	markFaults(r)
	r.Servers = meter.servers(r.Contention.Acquired)
	r.Client = cpu.client(r.Contention.Acquired)
	if n, err := cleanup(context.WithoutCancel(ctx), admin, opts.KeyPrefix); err != nil {
		env.logf("cleanup of %s*: %v", opts.KeyPrefix, err)
	} else {
		env.logf("cleanup: deleted %d key(s) under %s", n, opts.KeyPrefix)
	}
	return r, nil
}

// up brings the plan's topology up, with proxies and the clock shim only
// when its faults need them (they cost a little on every command).
func up(ctx context.Context, pl Plan, env Env) (*compose.Topology, error) {
	opts := compose.UpOptions{URLs: pl.URLs, Persistence: pl.Persistence, RestartDelay: pl.RestartDelay, Log: env.Log}
	if len(pl.URLs) == 0 {
		opts.Provider = pl.Provider
	}
	for _, f := range pl.Faults {
		switch f.Kind {
		case compose.FaultLatency, compose.FaultPartition:
			opts.Proxy = true
		case compose.FaultClockJump, compose.FaultClockSpeed:
			opts.ClockShim = true
		}
	}
	if len(pl.URLs) == 0 {
		env.logf("starting local redis-server processes for %s", pl.Topology)
	}
	topo, err := compose.Up(ctx, pl.Topology, opts)
	if err != nil {
		return nil, fmt.Errorf("bring up %s: %w", pl.Topology, err)
	}
	return topo, nil
}

// lockClients are the clients the lock uses: one per master, or on the
// replicated topology one sentinel-aware client that follows the primary.
func lockClients(topo *compose.Topology, pl Plan) []*redis.Client {
	co := compose.ClientOptions{PoolSize: pl.Bench.Concurrency + 8}
	if topo.Spec.Kind == compose.KindReplicated {
		return []*redis.Client{topo.FailoverClient(co)}
	}
	return topo.Clients(co)
}

func newResult(ctx context.Context, id string, pl Plan, topo *compose.Topology, clients []*redis.Client, locker lockimpl.Locker, env Env) *results.Result {
	info := locker.Info()
	cfg := pl.Values.Config()
	if env.Group != "" {
		cfg["group"] = env.Group
		cfg["repeat"] = env.Repeat
	}
	version, err := compose.ServerVersion(ctx, clients[0])
	if err != nil {
		version = "unknown (" + lockimpl.ErrorKind(err) + ")"
	}
	return &results.Result{
		Schema: results.Schema,
		ID:     id,
		Config: cfg,
		Lock: results.LockInfo{Name: info.Name, Fencing: info.Fencing, Unsafe: info.Unsafe, Nodes: info.Nodes,
			Library: info.Library, Version: info.Version, Settings: info.Settings, LibraryDefaults: info.Defaults},
		Topology: results.Topology{Kind: string(topo.Spec.Kind), Spec: topo.Spec.String(), Provider: topo.Provider,
			Nodes: topo.Addrs(), ServerVersion: version},
		Hosts: []results.Host{ThisHost()},
	}
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

func nodeOutcomes(topo *compose.Topology, base, now []lockimpl.NodeCounts) []results.NodeOutcome {
	out := make([]results.NodeOutcome, len(now))
	for i, n := range now {
		var b lockimpl.NodeCounts
		if i < len(base) {
			b = base[i]
		}
		out[i] = results.NodeOutcome{Node: topo.Nodes[i].Addr, Acquired: n.Acquired - b.Acquired,
			Contended: n.Contended - b.Contended, Errors: n.Errors - b.Errors, Timeouts: n.Timeouts - b.Timeouts}
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
			n, err := c.Unlink(ctx, batch...).Result()
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
