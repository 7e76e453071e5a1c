package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/bench/metrics"
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
	// Build is lockbench's version as `lockbench version` prints it,
	// recorded in hosts[].build; empty means the module's VCS revision.
	Build string
	// Topology, when set, is a topology already up that the run uses
	// instead of bringing its own up, and leaves up (successive failovers
	// on one topology): the clients the run makes are closed at its end.
	Topology *compose.Topology
	// Warn gets what the user must see even with --quiet (failed OTLP
	// pushes); nil for none.
	Warn io.Writer
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

// ErrInterrupted is returned when a run was interrupted (ctx cancelled)
// before its measured window began: nothing was measured, so there is no
// result to store.
var ErrInterrupted = errors.New("interrupted")

// interrupted reports an interruption before the window, once, whatever
// the servers said as they were cut off.
func interrupted(ctx context.Context, when string) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("%w %s; nothing was measured, no result stored", ErrInterrupted, when)
}

// Execute runs one plan end to end and returns its result (not yet stored).
// A run interrupted (ctx cancelled) in its window still returns its partial
// result; one interrupted before returns ErrInterrupted.
func Execute(ctx context.Context, pl Plan, env Env) (*results.Result, error) {
	defer useCPUs(pl.CPUs)()
	id, prefix := NewRunID(), ""
	if pl.RunID != "" {
		// Generators of one run share the keys, and each stores its own file.
		id, prefix = fmt.Sprintf("%s-g%d", pl.RunID, pl.GeneratorID), KeyPrefix(pl.RunID)
	} else {
		prefix = KeyPrefix(id)
	}
	topo, done, err := topologyFor(ctx, pl, env)
	if err != nil {
		if ierr := interrupted(ctx, "while starting "+pl.Topology.String()); ierr != nil {
			return nil, ierr
		}
		return nil, err
	}
	defer done()
	for _, f := range pl.Faults {
		if err := topo.CheckFault(f); err != nil {
			return nil, badInput("fault", "%v", err)
		}
	}
	arm, ok := armers()[pl.Topology.Info().Backend]
	if !ok {
		return nil, fmt.Errorf("no lock can be armed on %s (backend %q)", pl.Topology, pl.Topology.Info().Backend)
	}
	a, r, err := arm(ctx, pl, env, id, prefix, topo)
	if err != nil {
		return nil, err
	}
	if a.close != nil {
		defer a.close()
	}
	return newSession(pl, env, id, prefix, topo, r, a).measure(ctx)
}

// armFunc reaches a started topology's servers and builds the plan's lock
// over them, with the result it will fill.
type armFunc func(ctx context.Context, pl Plan, env Env, id, prefix string, topo *compose.Topology) (armed, *results.Result, error)

// armed is a run's lock with what differs between kinds of server around
// it: how their cost is read and how the run's keys are removed.
type armed struct {
	locker lockimpl.Locker
	meter  *costMeter
	// cleanUp removes what the run left; down names the nodes a fault
	// left down (nil when the run ended before its window).
	cleanUp func(ctx context.Context, m *bench.Measurement, down map[string]string, env Env)
	// close, when set, releases what the lock keeps of its own.
	close func()
	// resource, when set, is the protected resource the backend keeps
	// itself (PostgreSQL's, in the lock's database), used unless the plan
	// names one; resourceName says where it is, for the result.
	resource     bench.Protected
	resourceName string
	// sent counts the lock's round trips; nil where they are not counted.
	sent *sentMeter
	// remaining reads a key's remaining lifetime on the servers, for
	// probes (WithProbe); nil where the lock keeps no TTL.
	remaining remaining
}

// nodeCounter is a lock that counts its outcomes per node (Redlock's
// masters): the result gets node_outcomes, and the live line master errors.
type nodeCounter interface {
	NodeCounts() []lockimpl.NodeCounts
}

// settler is a lock that finishes work in the background after a call
// returned (Redlock settling late SETs and releases): it must land before
// the closing INFO reading and the cleanup.
type settler interface {
	Wait()
}

// settle waits for a lock's background work, if it has any.
func settle(l lockimpl.Locker) {
	if s, ok := l.(settler); ok {
		s.Wait()
	}
}

// session is one measured run of an armed lock: the part of a run that is
// the same whatever the servers are. What only some locks have is reached
// through nodeCounter and settler, asked once in newSession.
type session struct {
	pl         Plan
	env        Env
	id, prefix string
	topo       *compose.Topology
	r          *results.Result
	a          armed
	faults     *faultLog
	cpu        *cpuMeter
	nodes      nodeCounter // nil unless the lock counts per node
	background settler     // nil unless the lock works on after a call returned
	nodeBase   []lockimpl.NodeCounts
	stopFaults func()
	// live reads the run while it runs: the exposure of each fault as it fires.
	live *bench.Live
	// hist is the run's history on its way to disk, nil without --history.
	hist *historyRecording
}

func newSession(pl Plan, env Env, id, prefix string, topo *compose.Topology, r *results.Result, a armed) *session {
	s := &session{pl: pl, env: env, id: id, prefix: prefix, topo: topo, r: r, a: a, faults: newFaultLog(pl.Faults), cpu: &cpuMeter{}}
	s.cpu.lock, _ = a.locker.(ownCPU)
	s.nodes, _ = a.locker.(nodeCounter)
	s.background, _ = a.locker.(settler)
	return s
}

// measure runs the armed lock through the plan's workload and window, with
// its faults, live metrics and shared resource, and fills the result.
func (s *session) measure(ctx context.Context) (*results.Result, error) {
	opts := s.pl.Bench
	opts.KeyPrefix = s.prefix
	opts.HashTag = isCluster(s.topo)
	opts.StartAt = s.pl.StartAt
	opts.Progress = s.env.Progress
	finishMetrics, err := s.serveMetrics(ctx, &opts)
	if err != nil {
		return nil, err
	}
	var done *results.Result
	defer func() { finishMetrics(done) }()
	if opts.Live == nil {
		opts.Live = bench.NewLive()
	}
	s.live = opts.Live
	closeResource, err := s.sharedResource(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer closeResource()
	if s.hist, err = startHistory(s.pl, s.id, s.prefix, s.r.Lock.Name, s.r.Lock.Fencing, s.r.Resource); err != nil {
		return nil, err
	}
	if s.hist != nil {
		opts.History = s.hist.w
		// A run that ends early closes the file without a trailer.
		defer s.hist.abort()
	}
	if s.nodes != nil {
		opts.NodeErrors = s.nodeErrors
	}
	opts.OnWindowStart = func(start time.Time) { s.windowStarts(ctx, start) }
	runCtx, stopRun := breakable(ctx, s.a.locker)
	m, err := bench.Run(runCtx, s.a.locker, s.pl.Workload, opts)
	stopRun()
	if s.stopFaults != nil {
		s.stopFaults()
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", s.id, err)
	}
	if b, ok := s.a.locker.(brokenLock); ok && b.Err() != nil && ctx.Err() == nil {
		// The lock itself broke (a driver that hung, exited or broke the
		// protocol): the run ended there, and nothing it measured stands.
		s.a.cleanUp(context.WithoutCancel(ctx), m, nil, Env{})
		return nil, b.Err()
	}
	if m.BeforeWindow {
		s.settle()
		s.a.cleanUp(context.WithoutCancel(ctx), m, nil, Env{})
		return nil, interrupted(ctx, "during the warm-up")
	}
	done, err = s.fill(ctx, m)
	return done, err
}

// brokenLock is a lock that can break as a whole (a driver process that
// hung, exited or broke the protocol): Failed is closed then, and Err says
// how.
type brokenLock interface {
	Failed() <-chan struct{}
	Err() error
}

// breakable is ctx, ended early when locker breaks; stop releases it.
func breakable(ctx context.Context, locker lockimpl.Locker) (context.Context, func()) {
	b, ok := locker.(brokenLock)
	if !ok {
		return ctx, func() {}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-b.Failed():
			cancel()
		case <-done:
		}
	}()
	return runCtx, func() { close(done); cancel() }
}

// settle waits for the lock's background work, if it has any.
func (s *session) settle() {
	if s.background != nil {
		s.background.Wait()
	}
}

// serveMetrics serves /metrics and pushes to --otlp during the run when
// the plan asks for either. finish hands them the stored result, keeps
// /metrics up for --metrics-linger, stops both and says how many pushes
// failed: a collector that refuses never fails the run.
func (s *session) serveMetrics(ctx context.Context, opts *bench.Options) (finish func(r *results.Result), err error) {
	if s.pl.MetricsAddr == "" && s.pl.OTLP == "" {
		return func(*results.Result) {}, nil
	}
	live := bench.NewLive()
	runID := s.pl.RunID
	if runID == "" {
		runID = s.id
	}
	run := metrics.NewRun(live, metrics.Labels{RunID: runID, Generator: strconv.Itoa(s.pl.GeneratorID),
		Lock: s.pl.Lock, Topology: s.pl.Topology.String()})
	stop := func() {}
	if s.pl.MetricsAddr != "" {
		if stop, err = metrics.Serve(s.pl.MetricsAddr, run); err != nil {
			return nil, err
		}
		s.env.logf("metrics: http://%s/metrics", s.pl.MetricsAddr)
	}
	var push *metrics.Pusher
	if s.pl.OTLP != "" {
		if push, err = metrics.Push(s.pl.OTLP, run); err != nil {
			stop()
			return nil, err
		}
		s.env.logf("metrics: pushing to %s", s.pl.OTLP)
	}
	opts.Live = live
	return func(r *results.Result) {
		if r != nil {
			run.Finish(r)
			if s.pl.MetricsLinger > 0 && ctx.Err() == nil {
				s.env.logf("metrics: serving the final figures for %v", s.pl.MetricsLinger)
				select {
				case <-time.After(s.pl.MetricsLinger):
				case <-ctx.Done():
				}
			}
		}
		stop()
		if push != nil {
			if err := push.Stop(); err != nil && s.env.Warn != nil {
				fmt.Fprintln(s.env.Warn, err)
			}
		}
	}, nil
}

// sharedResource keeps the protected resource where the plan says: in a
// Redis or a PostgreSQL (--resource), in the backend's own database (a
// postgres topology), or in process; close removes a lone run's keys there.
func (s *session) sharedResource(ctx context.Context, opts *bench.Options) (close func(), err error) {
	s.r.Resource = "in-process"
	switch {
	case s.pl.Resource == "" && s.a.resource != nil:
		opts.Resource, s.r.Resource = s.a.resource, s.a.resourceName
		return func() {}, nil
	case s.pl.Resource == "":
		return func() {}, nil
	}
	_, pb := resourceBackend(s.pl.Resource)
	res, closeRes, err := pb.resource(ctx, s.pl.Resource, s.pl.PoolSize, s.prefix)
	if err != nil {
		return nil, err
	}
	opts.Resource, s.r.Resource = res, compose.RedactURL(s.pl.Resource)
	return func() { closeRes(s.pl.RunID == "") }, nil
}

// nodeErrors counts the per-node errors and timeouts of the window so far,
// for the live line.
func (s *session) nodeErrors() int64 {
	var n int64
	for i, c := range s.nodes.NodeCounts() {
		n += c.Errors + c.Timeouts
		if i < len(s.nodeBase) {
			n -= s.nodeBase[i].Errors + s.nodeBase[i].Timeouts
		}
	}
	return n
}

// windowStarts takes the opening readings and schedules the faults.
func (s *session) windowStarts(ctx context.Context, start time.Time) {
	s.a.meter.before(ctx)
	s.a.sent.before()
	s.cpu.start()
	if s.nodes != nil {
		s.nodeBase = s.nodes.NodeCounts()
	}
	if len(s.pl.Faults) > 0 {
		s.stopFaults = s.topo.Schedule(ctx, start, s.pl.Faults, s.faults.record(s.env, s.live.Exposure))
	}
}

// fill takes the closing readings and fills the result with what was
// measured, then cleans up.
func (s *session) fill(ctx context.Context, m *bench.Measurement) (*results.Result, error) {
	// Work still finishing in the background is part of the run's server
	// cost, so it lands before the closing INFO reading.
	s.settle()
	r := s.r
	if s.nodes != nil {
		r.NodeOutcomes = nodeOutcomes(s.topo, s.nodeBase, s.nodes.NodeCounts())
	}
	s.cpu.stop()
	s.a.sent.after()
	s.a.meter.after(context.WithoutCancel(ctx))
	if err := m.Fill(r); err != nil {
		return nil, err
	}
	r.Faults = s.faults.events()
	markFaults(r)
	if s.hist != nil {
		if err := s.hist.finish(m, r); err != nil {
			return nil, err
		}
	}
	down := map[string]string{}
	for _, addr := range s.topo.Down() {
		down[addr] = s.faults.downReason(addr)
	}
	r.Servers = s.a.meter.servers(r.Contention.Acquired, down)
	r.Servers.SetShares(r.DurationS)
	r.Client = s.cpu.client(r.Contention.Acquired, r.DurationS)
	s.a.sent.fill(r.Client, r.Contention.Acquired)
	if !s.pl.StartAt.IsZero() {
		r.StartOffsetS = m.StartOffset.Seconds()
	}
	s.a.cleanUp(context.WithoutCancel(ctx), m, down, s.env)
	return r, nil
}

// logDeleted says what a lone run's cleanup deleted under its prefix.
func logDeleted(env Env, prefix string, n int, err error) {
	if err != nil {
		env.logf("cleanup of %s*: %v", prefix, err)
		return
	}
	env.logf("cleanup: deleted %d key(s) under %s", n, prefix)
}

// releaseAbandoned gives back, by their tokens, the leases the run's own
// crashed holders left, each within a second, and counts those released.
func releaseAbandoned(ctx context.Context, locker lockimpl.Locker, m *bench.Measurement) int {
	released := 0
	for _, lease := range m.Abandoned {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		if out, _ := locker.Release(rctx, lease); out == lockimpl.OK {
			released++
		}
		cancel()
	}
	return released
}

// topologyFor is the run's topology: the one Env lends (of the plan's
// spec), or its own, brought up; done closes what the run opened.
func topologyFor(ctx context.Context, pl Plan, env Env) (topo *compose.Topology, done func(), err error) {
	if t := env.Topology; t != nil {
		if t.Spec.String() != pl.Topology.String() {
			return nil, nil, fmt.Errorf("the run is for %s, and the topology lent to it is %s", pl.Topology, t.Spec)
		}
		return t, t.Borrow(), nil
	}
	topo, err = up(ctx, pl, env)
	if err != nil {
		return nil, nil, err
	}
	return topo, func() { _ = topo.Close() }, nil
}

// up brings the plan's topology up, with proxies and the clock shim only
// when its faults need them (they cost a little on every command).
func up(ctx context.Context, pl Plan, env Env) (*compose.Topology, error) {
	opts := compose.UpOptions{URLs: pl.URLs, Persistence: pl.Persistence, RestartDelay: pl.RestartDelay, Log: env.Log}
	if len(pl.URLs) == 0 {
		opts.Provider, opts.Image = pl.Provider, pl.Image
	}
	opts.ArmFaults(pl.Faults)
	if len(pl.URLs) == 0 && opts.Provider != compose.ProviderDocker {
		env.logf("starting local %s processes for %s", pl.Topology.Info().Program, pl.Topology)
	}
	topo, err := compose.Up(ctx, pl.Topology, opts)
	if err != nil {
		return nil, fmt.Errorf("bring up %s: %w", pl.Topology, err)
	}
	return topo, nil
}

// newResult is a run's result before anything was measured: what ran, on
// which servers (version as they report it), from which host.
func newResult(id string, pl Plan, topo *compose.Topology, locker lockimpl.Locker, version string, env Env) *results.Result {
	info := locker.Info()
	cfg := resolvedConfig(pl, topo)
	if env.Group != "" {
		cfg["group"] = env.Group
		cfg["repeat"] = env.Repeat
	}
	host := ThisHost()
	if env.Build != "" {
		host.Build = env.Build
	}
	return &results.Result{
		Schema: results.Schema,
		ID:     id,
		Config: cfg,
		Lock: results.LockInfo{Name: info.Name, Fencing: info.Fencing && !pl.Bench.UnfencedWrites, Unsafe: info.Unsafe, Nodes: info.Nodes,
			Library: info.Library, Version: info.Version, Settings: info.Settings, LibraryDefaults: info.Defaults},
		Topology: results.Topology{Kind: string(topo.Spec.Kind), Spec: topo.Spec.String(), Provider: topo.Provider,
			Nodes: topo.Addrs(), ServerVersion: version},
		Hosts: []results.Host{host},
		Label: pl.Label,
		Tags:  pl.Tags,
	}
}

// resolvedConfig is the config as it ran, not as it was typed: the key
// chooser, acquire timeout, provider and Redlock node timeout in the form
// the run used them.
func resolvedConfig(pl Plan, topo *compose.Topology) map[string]any {
	cfg := pl.Values.Config()
	cfg["keys"] = pl.Workload.Keys.String()
	cfg["acquire-timeout"] = pl.Bench.Retry.Timeout.String()
	cfg["provider"] = topo.Provider
	cfg["pool-size"] = strconv.Itoa(pl.PoolSize)
	cfg["pipeline"] = pl.Pipeline
	// The CPUs set (0: Go's default), as auto resolved; client.cpus and the
	// host's gomaxprocs say how many that was.
	cfg["cpus"] = strconv.Itoa(pl.CPUs)
	if pl.Lock == lockimpl.LockRedlock {
		nt := pl.LockOptions.Redlock.NodeTimeout
		if nt == 0 {
			nt = lockimpl.NodeTimeoutFor(pl.Workload.TTL)
		}
		cfg["node-timeout"] = nt.String()
	}
	return cfg
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
