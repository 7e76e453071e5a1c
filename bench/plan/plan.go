package plan

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/bench/metrics"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results/suggest"
	"github.com/lockbench/lockbench/workloads"
)

// Plan is one fully parsed run: one topology, one lock, one workload.
type Plan struct {
	// Values are the resolved flag values this plan came from (its config).
	Values Values
	// Topology is the topology to bring up.
	Topology compose.Spec
	// URLs are external servers; empty means local processes.
	URLs []string
	// Persistence of local servers.
	Persistence compose.Persistence
	// Provider is local or docker (ignored with URLs).
	Provider string
	// Image is the docker provider's image ("" for compose.DefaultImage).
	Image string
	// Faults are injected during the window.
	Faults []compose.FaultSpec
	// RestartDelay keeps a restarted node down this long.
	RestartDelay time.Duration
	// Lock is the lock's name.
	Lock string
	// LockOptions tune the lock.
	LockOptions lockimpl.Options
	// Workload is what the workers do.
	Workload workloads.Workload
	// Bench are the runner options (progress and hooks are set by Execute).
	Bench bench.Options
	// OutDir is where the result file goes.
	OutDir string
	// Format is table or json.
	Format string
	// Quiet turns the live line off.
	Quiet bool
	// PoolSize is the connections per server the lock's clients keep.
	PoolSize int
	// Pipeline is "off" or "auto" (commands batched by lockimpl.Pipe).
	Pipeline string
	// CPUs is the GOMAXPROCS the run sets (--cpus resolved); 0 leaves Go's
	// default.
	CPUs int
	// RunID is the id shared by the generators of one run ("" for a lone
	// run, which gets an id of its own); GeneratorID is this one's index.
	RunID       string
	GeneratorID int
	// Generators is how many generators run together.
	Generators int
	// StartAt is when the warm-up starts (zero: as soon as the servers answer).
	StartAt time.Time
	// Resource is the URL of a Redis holding the protected resource; empty
	// keeps it in process.
	Resource string
	// History is where the run's history goes ("" for none; see HistoryPath).
	History string
	// MetricsAddr is where Prometheus metrics are served during the run.
	MetricsAddr string
	// MetricsLinger is how long /metrics stays up after the run.
	MetricsLinger time.Duration
	// OTLP is the OTLP/HTTP URL the run's metrics are pushed to ("" for none).
	OTLP string
	// Label names the run in lists and legends; Tags mark it for filtering.
	Label string
	Tags  map[string]string
}

// validRunID reports whether id can name keys and files.
func validRunID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ParseStartAt reads --start-at: an RFC 3339 time, or +DURATION from now.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutPrefix(s, "+"); ok {
		dur, err := time.ParseDuration(d)
		if err != nil || dur < 0 {
			return time.Time{}, fmt.Errorf("%q: want +DURATION such as +30s, or an RFC 3339 time", s)
		}
		return now.Add(dur), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time such as 2026-12-02T10:00:00Z, or +DURATION such as +30s", s)
	}
	return t, nil
}

// MaxAutoPool bounds the automatic pool size: past it, a connection per
// worker costs the client memory (and the server clients) without a server
// that could answer them any sooner.
const MaxAutoPool = 1024

// AutoPoolSize is the pool of --pool-size 0: one connection per worker, so
// no worker waits for one, and 8 for the lock's background work, up to
// MaxAutoPool.
func AutoPoolSize(workers int) int { return min(workers+8, MaxAutoPool) }

// ParseTags reads repeated key=value tags; a key given twice is refused.
func ParseTags(list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	tags := map[string]string{}
	for _, t := range list {
		k, v, ok := strings.Cut(t, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " ,") {
			return nil, fmt.Errorf("%q: want key=value, the key without spaces or commas", t)
		}
		if _, dup := tags[k]; dup {
			return nil, fmt.Errorf("%q: tag %s given twice", t, k)
		}
		tags[k] = strings.TrimSpace(v)
	}
	return tags, nil
}

// Resolve applies a preset (--workload) under the given values and the
// defaults under both, so the result's config holds every flag's value.
func Resolve(given Values) (Values, error) {
	v := Values{}
	for _, f := range runFlags {
		if f.Default != "" {
			v.Set(f.Name, f.Default)
		}
	}
	if name := given.Get("workload"); name != "" {
		p, err := workloads.LookupPreset(name)
		if err != nil {
			return nil, badInput("workload", "%v", err)
		}
		for k, val := range p.Flags {
			if _, ok := lookupFlag(k); !ok {
				return nil, fmt.Errorf("preset %s sets unknown flag %q", name, k)
			}
			v.Set(k, val)
		}
	}
	for k, s := range given {
		if _, ok := lookupFlag(k); !ok {
			return nil, badInput(k, "unknown flag")
		}
		v[k] = append([]string(nil), s...)
	}
	if v.Get("workload") == "" {
		v.Set("workload", "custom")
	}
	stagedWindow(v, given)
	return v, nil
}

// StagedRate reports whether v gives --rate as stages, whose sum is then
// the window: a command's own default duration must not replace it.
func StagedRate(v Values) bool {
	r, err := workloads.ParseRate("rate", v.Get("rate"))
	return err == nil && r.Staged()
}

// stagedWindow makes a staged --rate's stages the window when no duration
// was given, so the result's config records the window the run had; a
// duration given that differs is refused by Parse.
func stagedWindow(v, given Values) {
	if given.Has("duration") {
		return
	}
	if r, err := workloads.ParseRate("rate", v.Get("rate")); err == nil && r.Staged() {
		v.Set("duration", r.Window().String())
	}
}

// Expand resolves the given values and returns one plan per --topology.
func Expand(given Values) ([]Plan, error) {
	v, err := Resolve(given)
	if err != nil {
		return nil, err
	}
	topologies := compose.JoinClusterPieces(v["topology"])
	if len(topologies) == 0 {
		topologies = []string{"single"}
	}
	var plans []Plan
	seen := map[string]string{}
	for _, t := range topologies {
		one := v.Clone()
		one.Set("topology", t)
		p, err := Parse(one)
		if err != nil {
			return nil, err
		}
		if err := RefuseRepeatedTopology(seen, p, t, "and --count N to repeat runs"); err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// RefuseRepeatedTopology refuses p's topology when seen (canonical name →
// the form it was given in) holds it already: the same topology twice would
// be run twice and shown as if it were two to compare. It records it
// otherwise. repeat says how the command repeats runs ("" when it cannot).
func RefuseRepeatedTopology(seen map[string]string, p Plan, given, repeat string) error {
	name := p.Topology.String()
	first, twice := seen[name]
	if !twice {
		seen[name] = given
		return nil
	}
	as := ""
	if first != given {
		as = fmt.Sprintf(" (as %q and %q)", first, given)
	}
	if repeat != "" {
		repeat = ", " + repeat
	}
	return badInput("topology", "%s given twice%s; give each topology once%s", name, as, repeat)
}

// parser collects the first bad flag while reading values, so Parse reads as
// a list of fields rather than a ladder of error checks.
type parser struct {
	v   Values
	err error
}

func (p *parser) fail(flag, format string, args ...any) {
	if p.err == nil {
		p.err = badInput(flag, format, args...)
	}
}

func (p *parser) duration(flag string, min time.Duration) time.Duration {
	s := p.v.Get(flag)
	d, err := time.ParseDuration(s)
	if err != nil {
		p.fail(flag, "%q is not a duration; want a Go duration such as 500ms, 10s or 1m", s)
		return 0
	}
	if d < min {
		p.fail(flag, "%v is too small; want at least %v", d, min)
	}
	return d
}

func (p *parser) integer(flag string, lo, hi int) int {
	s := p.v.Get(flag)
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		p.fail(flag, "%q: want a whole number from %d to %d", s, lo, hi)
	}
	return n
}

func (p *parser) float(flag string, lo, hi float64) float64 {
	s := p.v.Get(flag)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < lo || f > hi {
		p.fail(flag, "%q: want a number from %g to %g", s, lo, hi)
	}
	return f
}

// cpus is --cpus as the GOMAXPROCS a run sets: auto is 1 for a pipelined
// run (one CPU batches a pipe's commands with fewer cross-CPU hand-offs,
// and leaves the rest to local servers) and Go's default (0) otherwise.
func (p *parser) cpus(pipeline string) int {
	s := p.v.Get("cpus")
	if s == "auto" {
		if pipeline == "auto" {
			return 1
		}
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxCPUs {
		p.fail("cpus", "%q: want auto, 0 (Go's default) or a number of CPUs from 1 to %d", s, maxCPUs)
		return 0
	}
	return n
}

func (p *parser) boolean(flag string) bool {
	s := p.v.Get(flag)
	b, err := strconv.ParseBool(s)
	if err != nil {
		p.fail(flag, "%q: want true or false", s)
	}
	return b
}

func (p *parser) oneOf(flag string, allowed ...string) string {
	s := p.v.Get(flag)
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	p.fail(flag, "%q: %s", s, suggest.Unknown(s, allowed))
	return ""
}

func (p *parser) dist(flag string) workloads.Dist {
	d, err := workloads.ParseDist(p.v.Get(flag))
	if err != nil {
		p.fail(flag, "%v", err)
	}
	return d
}

// redlockTimings refuses Redlock settings that cannot give a usable lease.
// A drift factor of 0 is refused rather than taken as "the default", which
// is what the lock does with a zero value: the result would record one
// factor while the run used another.
func (p *parser) redlockTimings(o lockimpl.RedlockOptions, ttl time.Duration) {
	if p.err != nil {
		return
	}
	if o.DriftFactor == 0 {
		p.fail("drift-factor", "0: want more than 0 and at most 0.5 (validity = ttl − elapsed − ttl × f − 2ms; Redlock's usual f is 0.01)")
	}
	if o.NodeTimeout >= ttl {
		p.fail("node-timeout", "%v: want less than the ttl %v, much less in practice (0 picks 50ms or ttl/100): a master that answers after the ttl leaves no validity", o.NodeTimeout, ttl)
	}
}

// Parse reads one plan out of resolved values with a single --topology.
func Parse(v Values) (Plan, error) {
	p := &parser{v: v}
	pl := Plan{Values: v, OutDir: v.Get("out")}
	topo, err := compose.ParseSpec(v.Get("topology"))
	if err != nil {
		return Plan{}, badInput("topology", "%v", err)
	}
	pl.URLs = v[topo.Info().URLFlag]
	topo = topo.Resolved(len(pl.URLs))
	pl.Topology = topo
	p.urls()
	pers, err := compose.ParsePersistence(v.Get("persistence"))
	if err != nil {
		p.fail("persistence", "%v", err)
	}
	pl.Persistence = pers
	prov, err := compose.ParseProvider(v.Get("provider"))
	if err != nil {
		p.fail("provider", "%s", strings.TrimPrefix(err.Error(), "--provider "))
	}
	pl.Provider = prov
	pl.Image = v.Get("image")
	pl.Lock = p.lockFor(topo)
	p.checkServers(&pl)
	p.checkScope(runScope{lock: pl.Lock, topo: topo, provider: providerOf(v, topo)})
	pl.LockOptions = lockimpl.Options{
		Redlock: lockimpl.RedlockOptions{
			NodeTimeout: p.duration("node-timeout", 0),
			DriftFactor: p.float("drift-factor", 0, 0.5),
			FailFast:    p.boolean("fail-fast"),
		},
		NaiveGap: p.duration("naive-gap", 0),
		Wait: lockimpl.WaitOptions{
			Replicas: p.integer("wait-replicas", 0, 16),
			Timeout:  p.duration("wait-timeout", time.Millisecond),
		},
	}
	pl.LockOptions.Peer = p.peerOptions(pl.Lock)
	pl.LockOptions.Driver = p.driverOptions()
	if r := topo.Shape().Replicas(topo); r >= 0 && pl.LockOptions.Wait.Replicas > r && len(pl.URLs) == 0 {
		p.fail("wait-replicas", "%d, but %s has %d replica(s) per master; every acquisition would fail", pl.LockOptions.Wait.Replicas, topo, r)
	}
	pl.RestartDelay = p.duration("restart-delay", 0)
	provider := providerOf(v, topo)
	for _, spec := range v["fault"] {
		f, err := compose.ParseFault(spec)
		if err != nil {
			p.fail("fault", "%v", err)
			continue
		}
		if err := compose.FitFault(f, topo, provider); err != nil {
			p.fail("fault", "%q: %v", spec, err)
			continue
		}
		pl.Faults = append(pl.Faults, f)
	}
	pl.Workload = p.workload()
	pl.Bench = p.benchOptions(pl.Workload.TTL)
	if r := pl.Workload.Rate; r.Staged() && pl.Bench.Duration != r.Window() && p.err == nil {
		p.fail("duration", "%v, but --rate %s lasts %v (its stages are the window); drop -d or give %v", pl.Bench.Duration, v.Get("rate"), r.Window(), r.Window())
	}
	for _, f := range pl.Faults {
		if p.err == nil && f.At >= pl.Bench.Duration {
			p.fail("fault", "%q: at=%v is not inside the %v window (--duration); it would never be applied", f.String(), f.At, pl.Bench.Duration)
		}
	}
	p.redlockTimings(pl.LockOptions.Redlock, pl.Workload.TTL)
	pl.Format = p.oneOf("format", "table", "json", "csv", "marked")
	pl.Quiet = p.boolean("quiet")
	pl.Bench.UnfencedWrites = p.boolean("unfenced-writes")
	pl.Pipeline = p.oneOf("pipeline", "off", "auto")
	if pl.Pipeline == "auto" && p.err == nil {
		switch {
		case !lockimpl.IsPipelinable(pl.Lock):
			p.fail("pipeline", "auto works with --lock %s or a --lock-def; %s needs each command's own deadline (Redlock's node timeout) or a plain client (peer libraries), which a batch of many workers' commands does not keep", strings.Join(lockimpl.LocksWhere(func(d lockimpl.Descriptor) bool { return d.Pipelinable }), " or "), pl.Lock)
		case pl.LockOptions.Wait.Replicas > 0:
			p.fail("pipeline", "auto cannot run WAIT on the connection that wrote the key; drop --wait-replicas or --pipeline")
		case len(pl.Faults) > 0:
			p.fail("pipeline", "auto does not keep per-command deadlines, so a fault would hang workers until the client's read timeout; measure faults without it")
		}
	}
	pl.CPUs = p.cpus(pl.Pipeline)
	pl.PoolSize = p.integer("pool-size", 0, 100_000)
	if pl.PoolSize == 0 {
		pl.PoolSize = AutoPoolSize(pl.Bench.Concurrency)
	}
	pl.Label = v.Get("label")
	tags, err := ParseTags(v["tag"])
	if err != nil {
		p.fail("tag", "%v", err)
	}
	pl.Tags = tags
	generators := p.integer("generators", 1, 1<<20)
	pl.Generators = generators
	pl.GeneratorID = p.integer("generator-id", 0, 1<<20)
	if p.err == nil && pl.GeneratorID >= generators {
		p.fail("generator-id", "%d: want 0 to %d (one less than --generators)", pl.GeneratorID, generators-1)
	}
	pl.RunID = v.Get("run-id")
	if pl.RunID != "" && !validRunID(pl.RunID) {
		p.fail("run-id", "%q: want 1 to 64 letters, digits, '.', '_' or '-'", pl.RunID)
	}
	if generators > 1 && pl.RunID == "" {
		p.fail("generators", "%d generators need a shared --run-id, or they would never touch the same keys", generators)
	}
	if s := v.Get("start-at"); s != "" {
		at, err := ParseStartAt(s, time.Now())
		if err != nil {
			p.fail("start-at", "%v", err)
		}
		pl.StartAt = at
	}
	if u := v.Get("resource"); u != "" {
		p.checkResourceURL(u)
		pl.Resource = u
	}
	pl.History = v.Get("history")
	if err := checkHistoryPath(pl.History); err != nil {
		p.fail("history", "%v", err)
	}
	pl.MetricsAddr = v.Get("metrics-addr")
	if a := pl.MetricsAddr; a != "" {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			p.fail("metrics-addr", "%q: want HOST:PORT, e.g. :9464 or 127.0.0.1:9464", a)
		}
	}
	pl.MetricsLinger = p.duration("metrics-linger", 0)
	if pl.MetricsLinger > 0 && pl.MetricsAddr == "" {
		p.fail("metrics-linger", "%v: keeps /metrics up after the run, so it needs --metrics-addr", pl.MetricsLinger)
	}
	if u := v.Get("otlp"); u != "" {
		endpoint, err := metrics.ParseOTLPEndpoint(u)
		if err != nil {
			p.fail("otlp", "%v", err)
		}
		pl.OTLP = endpoint
	}
	p.backendChecks(&pl)
	if p.err != nil {
		return Plan{}, p.err
	}
	return pl, nil
}

// lockFor picks the topology's default lock when none is given, and checks
// the lock runs there.
func (p *parser) lockFor(topo compose.Spec) string {
	lock := p.v.Get("lock")
	// A definition's faults are told under the flag that named it.
	defFlag := "lock"
	if file := p.v.Get("lock-def"); file != "" {
		if lock != "" {
			p.fail("lock-def", "%s given with --lock %s; give one", file, lock)
			return lock
		}
		lock, defFlag = lockimpl.DefPrefix+file, "lock-def"
		p.v.Set("lock", lock)
	}
	if lock == "" {
		lock = topo.DefaultLock()
		p.v.Set("lock", lock)
	}
	switch {
	case lockimpl.IsDriver(lock):
		if _, err := lockimpl.ParseDriverCommand(lock); err != nil {
			p.fail("lock", "%s", strings.TrimPrefix(err.Error(), "lock "))
		} else if why := topo.LockMisfit(lock); why != "" {
			p.fail("lock", "%s", why)
		}
	case lockimpl.IsGo(lock):
		// Which Go locks the program registered is known where the run
		// builds its lock (lockimpl.GoLocksIn); here, its name and topology.
		if _, ok := lockimpl.Describe(lock); !ok {
			p.fail("lock", "%q: a Go lock's name is letters, digits, '.', '-', '_' after %s", lock, lockimpl.GoPrefix)
		} else if why := topo.LockMisfit(lock); why != "" {
			p.fail("lock", "%s", why)
		}
	case lockimpl.IsDef(lock):
		d, err := lockimpl.LoadLockDef(lockimpl.DefFile(lock))
		switch {
		case err != nil:
			p.fail(defFlag, "%v", err)
		case d.Driver() != "":
			// A file naming a driver is that driver lock: every later step
			// (its options, faults on its processes) sees exec:CMD.
			lock = d.Driver()
			p.v.Set("lock", lock)
			if why := topo.LockMisfit(lock); why != "" {
				p.fail(defFlag, "%s: %s", d.File, why)
			}
		default:
			if why := topo.LockMisfit(lock); why != "" {
				p.fail(defFlag, "%s", why)
			}
		}
	case !slices.Contains(lockimpl.Names(), lock):
		p.fail("lock", "%q: unknown; %s", lock, suggest.Unknown(lock, lockimpl.Names()))
	case topo.LockMisfit(lock) != "":
		p.fail("lock", "%s", topo.LockMisfit(lock))
	}
	return lock
}

// driverOptions reads a driver lock's flags; concurrency is the run's
// (one process per worker unless shared).
func (p *parser) driverOptions() lockimpl.DriverOptions {
	procs := p.v.Get("driver-procs")
	if procs != lockimpl.DriverAuto && procs != lockimpl.DriverPerWorker && procs != lockimpl.DriverShared {
		p.fail("driver-procs", "%q: accepted: %s, %s, %s", procs, lockimpl.DriverAuto, lockimpl.DriverPerWorker, lockimpl.DriverShared)
	}
	return lockimpl.DriverOptions{Procs: procs, Timeout: p.duration("driver-timeout", time.Millisecond)}
}

// urls checks the server URLs given, each backend's flag by its own form.
func (p *parser) urls() {
	for _, b := range compose.Backends() {
		flag := b.Info().URLFlag
		for _, u := range p.v[flag] {
			if err := b.CheckURL(u); err != nil {
				p.fail(flag, "%s", strings.TrimPrefix(err.Error(), "--"+flag+" "))
			}
		}
	}
}

// checkServers refuses servers the topology's kind cannot have: a provider
// it does not run from, a number of URLs it cannot use.
func (p *parser) checkServers(pl *Plan) {
	topo, info := pl.Topology, pl.Topology.Info()
	if len(pl.URLs) == 0 {
		if err := topo.CheckProvider(pl.Provider); err != nil && p.err == nil {
			p.fail("provider", "%v", err)
		}
		return
	}
	if n := topo.Shape().URLs(topo); n > 0 && len(pl.URLs) != n {
		p.fail(info.URLFlag, "%s needs %d --%s URLs, one per %s, got %d", topo, n, info.URLFlag, info.Node, len(pl.URLs))
	}
}

func (p *parser) workload() workloads.Workload {
	w := workloads.Workload{Name: p.v.Get("workload")}
	keys, err := workloads.ParseKeys(p.v.Get("keys"))
	if err != nil {
		p.fail("keys", "%v", err)
	}
	w.Keys = keys
	w.TTL = p.duration("ttl", time.Millisecond)
	w.Hold = p.dist("hold")
	w.Think = p.dist("think")
	w.Pause = p.dist("pause")
	w.PauseProb = p.probability("pause-prob")
	w.CrashProb = p.probability("crash-prob")
	w.BurstProb = p.probability("burst-prob")
	w.Burst = p.dist("burst")
	renewer, err := workloads.ParseRenewer(p.v.Get("renewer"))
	if err != nil {
		p.fail("renewer", "%v", err)
	}
	w.Renewer = renewer
	if w.TTL > 0 {
		every, err := workloads.ParseRenewEvery(p.v.Get("renew-every"), w.TTL)
		if err != nil {
			p.fail("renew-every", "%v", err)
		}
		w.RenewEvery = every
	}
	rate, err := workloads.ParseRate("rate", p.v.Get("rate"))
	if err != nil && p.err == nil {
		p.err = &InputError{Flag: "rate", Msg: strings.TrimPrefix(err.Error(), "--rate ")}
	}
	w.Rate = rate
	return w
}

func (p *parser) probability(flag string) float64 {
	f, err := workloads.ParseProbability(flag, p.v.Get(flag))
	if err != nil && p.err == nil {
		p.err = &InputError{Flag: flag, Msg: strings.TrimPrefix(err.Error(), "--"+flag+" ")}
	}
	return f
}

func (p *parser) benchOptions(ttl time.Duration) bench.Options {
	o := bench.Options{
		Concurrency: p.integer("concurrency", 1, 100_000),
		Duration:    p.duration("duration", 100*time.Millisecond),
		Warmup:      p.duration("warmup", 0),
	}
	retry, err := lockimpl.ParseRetry(p.v.Get("retry"))
	if err != nil {
		p.fail("retry", "%v", err)
	}
	retry.Timeout = p.duration("acquire-timeout", 0)
	if retry.Timeout == 0 {
		retry.Timeout = ttl
	}
	o.Retry = retry
	seed, err := strconv.ParseUint(p.v.Get("seed"), 10, 64)
	if err != nil {
		p.fail("seed", "%q: want a whole number from 0 to 2^64-1", p.v.Get("seed"))
	}
	o.Seed = seed
	return o
}
