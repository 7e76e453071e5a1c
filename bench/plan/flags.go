// Package plan turns a run's flag values into a Plan (topology, lock,
// workload, runner options) and executes it: it brings the topology up, builds
// the lock, runs the benchmark, reads server cost and cleans up. The CLI only
// collects flag values; every parse and every validation message lives here,
// so sweeps and scenarios build runs the same way users do.
package plan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// Flag describes one run flag.
type Flag struct {
	// Name is the long flag name, also the key in Values and in the result's config.
	Name string
	// Aliases are short names (-c, -d).
	Aliases []string
	// Default is the value used when the flag is not given ("" for none).
	Default string
	// Usage is the one-line help.
	Usage string
	// Multi marks flags that may be given more than once.
	Multi bool
	// Bool marks switches.
	Bool bool
	// Category groups flags in help.
	Category string
	// URL marks flags whose values are server URLs: a password in them is
	// replaced by xxxxx wherever the value is recorded or shown.
	URL bool
	// Doc adds, in the README's flag table only, what one line of help
	// cannot say.
	Doc string
	// Scope says where the flag has an effect; a value out of it is refused.
	Scope Scope
	// Commands holds what differs by command: the commands that set the
	// flag themselves, and defaults and help of their own.
	Commands map[string]CommandUse
}

// Values holds flag values by flag name; single-valued flags have one element.
type Values map[string][]string

// Get returns the (last) value of name, or "".
func (v Values) Get(name string) string {
	if s := v[name]; len(s) > 0 {
		return s[len(s)-1]
	}
	return ""
}

// Has reports whether name has a value.
func (v Values) Has(name string) bool { return len(v[name]) > 0 }

// Set replaces name's value.
func (v Values) Set(name string, value ...string) { v[name] = value }

// Clone copies v.
func (v Values) Clone() Values {
	out := make(Values, len(v))
	for k, s := range v {
		out[k] = append([]string(nil), s...)
	}
	return out
}

const (
	catTarget   = "target"
	catWorkload = "workload"
	catRunner   = "runner"
	catOutput   = "output"
)

// startedHere are the providers of servers lockbench starts and configures.
var startedHere = []string{compose.ProviderLocal, compose.ProviderDocker}

// runFlags is the flag table: every run flag, its default, help and scope;
// the backends' URL flags come from their registry, after --topology.
var runFlags = slices.Concat(topologyFlags, backendURLFlags(), otherRunFlags)

// backendURLFlags are the backends' URL flags, in registry order, each as
// its backend declares it (compose.BackendInfo): the flag of a kind's
// external servers, which only that backend's kinds take.
func backendURLFlags() []Flag {
	var out []Flag
	for _, b := range compose.Backends() {
		info := b.Info()
		out = append(out, Flag{Name: info.URLFlag, Multi: info.URLPerNode, URL: true, Category: catTarget,
			Usage: info.URLUsage, Scope: Scope{ByKind: true}, Doc: info.URLDoc})
	}
	return out
}

// topologyFlags head the flag table, before the backends' URL flags.
var topologyFlags = []Flag{
	{Name: "topology", Default: "single", Multi: true, Category: catTarget, Usage: "topology: " + compose.SpecHelp() + "; repeat to compare side by side", Commands: map[string]CommandUse{"lock-cost": {Refused: "takes each lock's topology with --lock NAME@TOPOLOGY"}, "redlock-cost": {Refused: "runs single and redlock:N itself; choose N with --masters 3,5,7 or give --redis URLs"}}, Doc: "Repeat it to run the same workload on each and print a side-by-side table with ratios against the first. On `replicated` the lock follows the current primary through a sentinel client; on `cluster:M[,R]` it goes through a cluster client (see [Redis Cluster](#redis-cluster)); `etcd:N`: see [etcd](#etcd)"},
}

// otherRunFlags are the run flags after the backends' URL flags.
var otherRunFlags = []Flag{
	{Name: "lock", Category: catTarget, Usage: lockUsage(), Commands: map[string]CommandUse{"lock-cost": {Own: true}, "redlock-cost": {Refused: "compares single and redlock itself"}}, Doc: "`redsync` is github.com/go-redsync/redsync/v4 (one goredis pool per master), `redislock` github.com/bsm/redislock, `rueidislock` github.com/redis/rueidis/rueidislock, `valkeylock` github.com/valkey-io/valkey-go/valkeylock, `etcd` go.etcd.io/etcd/client/v3. `--lock redlock` on `single` is Redlock with N = 1; a lock refused on a topology is named with where it runs. See [Peer libraries](#peer-libraries)"},
	{Name: "lock-def", Category: catTarget, Usage: "a YAML file defining your own lock by its Redis scripts (acquire, release, renew; on single, or on redlock:N when it asks for a quorum): the same as --lock def:FILE", Commands: map[string]CommandUse{"lock-cost": {Refused: "takes a definition as --lock def:FILE"}, "redlock-cost": {Refused: "compares single and redlock itself"}}, Doc: "The file format: see [Locks defined by their scripts](#locks-defined-by-their-scripts); a definition that does not parse is one line naming the file, exit 2"},
	{Name: "provider", Default: "local", Category: catTarget, Usage: "where servers come from when no --redis is given: local (redis-server processes) or docker (testcontainers; needs a Docker engine)", Scope: Scope{Providers: startedHere}, Doc: "`docker` starts containers of `--image` with testcontainers-go on a network of its own (it needs a Docker engine, and says so clearly when none is reachable); see [Docker](#docker). Compose files for bringing topologies up yourself are in `compose/docker/`"},
	{Name: "image", Category: catTarget, Usage: "--provider docker: the Redis image of its containers (default: " + compose.DefaultImage + "; where none can be pulled: lockbench image build, then --image " + compose.LocalImage + ")", Scope: Scope{Providers: []string{compose.ProviderDocker}}, Doc: "Where no registry can be reached, `lockbench image build` makes `lockbench/redis:local` from this machine's `redis-server`"},
	{Name: "persistence", Default: "none", Category: catTarget, Usage: "local servers' persistence: none or aof-always", Scope: Scope{ByKind: true, Providers: startedHere}},
	{Name: "node-timeout", Default: "0", Category: catTarget, Usage: "redlock per-master timeout (0: 50ms or ttl/100, whichever is smaller); on etcd:N each request's timeout (0: 1s)", Scope: Scope{Locks: lockimpl.LocksTakingFlag("node-timeout"), Peer: "timeout-factor=F (each try's timeout is ttl × F)"}, Doc: "Must be less than `--ttl`"},
	{Name: "drift-factor", Default: "0.01", Category: catTarget, Usage: "redlock clock-drift allowance as a share of the ttl", Scope: Scope{Locks: lockimpl.LocksTakingFlag("drift-factor"), Peer: "drift-factor=F"}, Doc: "0 < f ≤ 0.5 (validity = TTL − elapsed − TTL × f − 2 ms)"},
	{Name: "fail-fast", Bool: true, Default: "false", Category: catTarget, Usage: "redlock: return once quorum is reached or impossible, not after every master answered", Scope: Scope{Locks: lockimpl.LocksTakingFlag("fail-fast"), Peer: "fail-fast"}},
	{Name: "peer-option", Multi: true, Category: catTarget, Usage: "a peer library's setting, repeatable: KEY=VALUE, or KEY for a switch; redsync: " +
		lockimpl.PeerOptionsHelp(lockimpl.LockRedsync) + "; redislock: " + lockimpl.PeerOptionsHelp(lockimpl.LockRedislock),
		Scope: Scope{Locks: lockimpl.LocksTakingFlag("peer-option")}, Doc: "An option the lock does not have is refused"},
	{Name: "naive-gap", Default: "0", Category: catTarget, Usage: "naive lock: time between its GET and DEL (a network round trip)", Scope: Scope{Locks: lockimpl.LocksTakingFlag("naive-gap")}},
	{Name: "driver-procs", Default: lockimpl.DriverAuto, Category: catTarget, Usage: "a driver lock's processes: per-worker (one per worker), shared (one for every worker, requests told apart by id), or auto: shared when the driver's hello says concurrent, else per-worker", Scope: Scope{Needs: driverNeed()}, Doc: "auto picks the layout measured faster for each kind of driver (see [Bring your own lock](#bring-your-own-lock))"},
	{Name: "driver-timeout", Default: lockimpl.DefaultDriverTimeout.String(), Category: catTarget, Usage: "a driver lock's bound on each answer (its hello: four times this); a driver that misses it is hung, and the run ends", Scope: Scope{Needs: driverNeed()}},
	{Name: "wait-replicas", Default: "0", Category: catTarget, Usage: "after SET, WAIT for this many replica acks; fewer counts as not acquired", Scope: Scope{Locks: lockimpl.LocksTakingFlag("wait-replicas"), ByKind: true}, Doc: "`WAIT N` on the same connection; fewer acks count as not acquired (released, counted as `acquire_unreplicated`)"},
	{Name: "wait-timeout", Default: "100ms", Category: catTarget, Usage: "bound on the WAIT of --wait-replicas", Scope: Scope{Needs: &Need{Flag: "wait-replicas", Text: "--wait-replicas above 0", Holds: positive("wait-replicas")}}},
	{Name: "fault", Multi: true, Category: catTarget, Usage: "fault to inject, repeatable: 'at=3s kill primary', 'at=2s pause node=2 for=1500ms', 'at=2s restart node=1', 'at=1s latency node=0 300ms for=2s', 'at=1s partition node=3 for=2s', 'at=2s clock-jump node=2 +9s', 'at=1s lag-replica for=3s'; on a cluster 'at=1s kill master=0', 'at=1s failover shard=1', 'at=0s lag-replica shard=0 for=2s'", Commands: map[string]CommandUse{"lock-cost": {Refused: "puts each topology's canonical fault itself; use --with-fault"}, "redlock-cost": {Refused: "kills one master itself"}, "chaos": {Refused: "draws its faults from --seed, or replays them with --schedule FILE"}}, Doc: "See [Faults](#faults)"},
	{Name: "restart-delay", Default: "0", Category: catTarget, Usage: "how long a restart fault keeps the node down", Scope: Scope{Needs: faultNeed("restart-delay")}},

	{Name: "workload", Category: catWorkload, Usage: "preset name (see: lockbench workloads); flags given override it", Commands: map[string]CommandUse{"tune-ttl": {Default: "long-work"}}},
	{Name: "keys", Default: "0", Category: catWorkload, Usage: "key chooser: unique (or 0), uniform:K (or K), zipf:K,s (s>1), hot:K,p"},
	{Name: "ttl", Default: "10s", Category: catWorkload, Usage: "lease time to live", Commands: map[string]CommandUse{"tune-ttl": {Refused: "sweeps TTLs itself; use --ttls 1s,2s,4s"}}},
	{Name: "hold", Default: "0", Category: catWorkload, Usage: "work time inside the lock: D, const:D, uniform:A,B, exp:MEAN, lognormal:MEDIAN,SIGMA, pareto:MIN,ALPHA"},
	{Name: "think", Default: "0", Category: catWorkload, Usage: "time between critical sections (closed loop), same forms as --hold", Scope: Scope{Needs: &Need{Flag: "rate", Text: "a closed loop (no --rate): with --rate requests arrive on a schedule, not after thinking", Holds: closedLoop}}},
	{Name: "renew-every", Default: "0", Category: catWorkload, Usage: "renew the lease while holding: a duration, ttl/N, or 0 for never", Commands: map[string]CommandUse{"tune-ttl": {Refused: "sweeps renewal intervals itself; use --renews 0,ttl/2,ttl/3"}}},
	{Name: "pause-prob", Default: "0", Category: catWorkload, Usage: "probability that a holder stalls before its protected write (GC pause)", Doc: "The stall comes after acquiring, before the protected write, in real time"},
	{Name: "pause", Default: "0", Category: catWorkload, Usage: "stall length distribution, same forms as --hold", Scope: Scope{Needs: &Need{Flag: "pause-prob", Text: "--pause-prob above 0", Holds: positive("pause-prob")}}},
	{Name: "renewer", Default: "inline", Category: catWorkload, Usage: "who renews: inline (the holder, between the sleeps of its work) or goroutine (a renewer goroutine per held lease, beside the work; a lost renewal cancels the work)", Scope: Scope{Needs: &Need{Flag: "renew-every", Text: "--renew-every above 0", Holds: renewing}}, Commands: map[string]CommandUse{"tune-ttl": {Refused: "sweeps renewal intervals, 0 among them, with the holder renewing inline; use lockbench sweep --renewer goroutine --renew-every ttl/2,ttl/3"}}, Doc: "With `goroutine` the holder checks right before its protected write whether its renewer found the lease lost (then it stops without writing); it stops the renewer, and waits for a renewal in flight, before it releases"},
	{Name: "unfenced-writes", Bool: true, Default: "false", Category: catWorkload, Usage: "protected writes carry no fencing token, as when the resource cannot check one: a fencing lock's stale holders then write as an unfenced lock's do", Scope: Scope{Locks: lockimpl.LocksTakingFlag("unfenced-writes")}, Doc: "The result's `lock.fencing` is then false"},
	{Name: "burst-prob", Default: "0", Category: catWorkload, Usage: "probability that a holder's work starts with a CPU-bound burst on every CPU Go may use, which the Go scheduler cannot preempt (a renewer goroutine starves)", Doc: "The burst is a loop in assembly, as hashing or copying a large buffer is: ordinary Go code is preempted every 10 ms or so, and delays a renewer by tens of milliseconds at most. It stalls the whole process for its length, and occupies every CPU of GOMAXPROCS"},
	{Name: "burst", Default: "0", Category: catWorkload, Usage: "burst length distribution, same forms as --hold", Scope: Scope{Needs: &Need{Flag: "burst-prob", Text: "--burst-prob above 0", Holds: positive("burst-prob")}}},
	{Name: "crash-prob", Default: "0", Category: catWorkload, Usage: "probability that a holder dies without releasing", Commands: map[string]CommandUse{"tune-ttl": {Default: "0.05", Usage: "probability that a holder dies without releasing (tune-ttl: 0.05 unless the workload sets it, so blocked time is measured)"}}},
	{Name: "rate", Default: closedLoopRate, Category: catWorkload, Usage: "open loop: lock requests per second (500, 50/100ms), or stages START,TARGET:DURATION,... ramping linearly (100,2000:30s,2000:1m), whose sum is the window (0: closed loop)", Doc: "At most `-c` requests in flight; see [Open loop](#open-loop)"},

	{Name: "concurrency", Aliases: []string{"c"}, Default: "16", Category: catRunner, Usage: "workers (open loop: most requests in flight)", Commands: map[string]CommandUse{"capacity": {Usage: "with --rate: the most requests in flight (without --rate capacity ramps concurrency itself from --start to --max, and refuses -c)",
		Refused: "ramps concurrency itself; use --start and --max (or --rate to ramp the request rate)", Unless: &Need{Flag: "rate", Text: "--rate", Holds: given("rate")}}}},
	{Name: "pipeline", Default: "off", Category: catRunner, Usage: "off, or auto: workers' commands are batched onto two connections per server, every command queued written before the replies are read, so one generator can reach the server's limit; latency then includes batching", Scope: Scope{ByKind: true}, Doc: "Latencies then include the batching delay, and the table says so. Only for `--lock single`, `fenced` and a `--lock-def`, without faults or `--wait-replicas` (a batch has one deadline, not one per command)"},
	{Name: "cpus", Default: "auto", Category: catRunner, Usage: "CPUs the generator's Go code may run on at once (GOMAXPROCS): auto (1 with --pipeline auto, else Go's default), 0 (Go's default) or N", Doc: "A pipelined generator on one CPU leaves the others to a local server and spares the Go scheduler's hand-offs between CPUs (see [Beyond one machine](#beyond-one-machine) for what it measured). `config.cpus` and `client.cpus` record what ran; capacity's limit line judges the generator against the CPUs it was allowed"},
	{Name: "pool-size", Default: "0", Category: catRunner, Usage: "connections per server (0: one per worker plus 8, at most 1024; workers beyond it wait for a connection, and that wait is part of their latency)", Scope: Scope{ByKind: true}, Doc: "`config.pool-size` records what ran. Local servers start with `maxclients 16384`; an external server needs room for the pool"},
	{Name: "duration", Aliases: []string{"d"}, Default: "10s", Category: catRunner, Usage: "measured window", Commands: map[string]CommandUse{"capacity": {Default: "3s"}, "tune-ttl": {Default: "8s"}, "lock-cost": {Default: "5s"}, "redlock-cost": {Default: "5s"}, "chaos": {Default: "30s", Usage: "measured window, over which the faults are drawn (a --schedule FILE sets its own)"}}},
	{Name: "warmup", Default: "1s", Category: catRunner, Usage: "unrecorded warm-up before the window", Commands: map[string]CommandUse{"capacity": {Default: "500ms"}, "tune-ttl": {Default: "0"}}},
	{Name: "retry", Default: "none", Category: catRunner, Usage: "acquire retry: none, fixed:DELAY or exp:BASE,CAP (full jitter)", Commands: map[string]CommandUse{"tune-ttl": {Default: "exp:1ms,50ms", Usage: "acquire retry: none, fixed:DELAY or exp:BASE,CAP (full jitter); tune-ttl: exp:1ms,50ms unless the workload sets one, so waiters on a crashed holder's key back off"}}},
	{Name: "acquire-timeout", Default: "0", Category: catRunner, Usage: "give up an acquisition after this long, retries included (0: the ttl)"},
	{Name: "seed", Default: "1", Category: catRunner, Usage: "seed of the workers' random generators", Commands: map[string]CommandUse{"chaos": {Own: true}}, Doc: "Worker i gets seed, i: runs repeat"},
	{Name: "generator-id", Default: "0", Category: catRunner, Usage: "this generator's index when several run together (see results merge)"},
	{Name: "generators", Default: "1", Category: catRunner, Usage: "how many generators run together", Doc: "See [Beyond one machine](#beyond-one-machine)"},
	{Name: "run-id", Category: catRunner, Usage: "one id shared by every generator of a run, so they contend on the same keys (lockbench:<run-id>:) and their results merge (files <run-id>-g<i>.json); letters, digits, . _ -"},
	{Name: "start-at", Category: catRunner, Usage: "when every generator starts its warm-up: an RFC 3339 time or +DURATION from now (e.g. +30s)"},
	{Name: "resource", URL: true, Category: catRunner, Usage: "redis://HOST:PORT of a Redis, or postgres://… of a PostgreSQL (fencing enforced by the write statement), that holds the protected resource, so overlaps and stale writes are seen across generators (default: in process; on postgres the topology's database)"},
	{Name: "history", Category: catOutput, Usage: "write every operation of the run to FILE (JSON lines, gzip'd when FILE ends in .gz; see lockbench check); a DIR/ or a FILE with {id} in it gets one file per run (sweep, scenario and lock-cost cells)",
		Doc: "One file where a command makes many runs is refused; `off` keeps none, so a sweep axis can compare: `--history off,hist/`. See [Histories and `lockbench check`](#histories-and-lockbench-check)"},
	{Name: "metrics-addr", Category: catOutput, Usage: "HOST:PORT to serve Prometheus metrics on during the run (/metrics)", Doc: "See [Metrics: Prometheus, Grafana, OpenTelemetry](#metrics-prometheus-grafana-opentelemetry)"},
	{Name: "metrics-linger", Default: "0", Category: catOutput, Usage: "keep serving /metrics this long after the run ends, with the stored result's figures, so a Prometheus scraping every N s reads the final ones (e.g. twice the scrape interval); needs --metrics-addr"},
	{Name: "otlp", Category: catOutput, Usage: "OTLP/HTTP URL to push the run's metrics to every 5 s and at its end, e.g. http://127.0.0.1:4318 (path /v1/metrics by default); failed pushes never fail the run, their count is reported at the end"},

	{Name: "label", Category: catOutput, Usage: "a name for the run, shown by results ls and in report legends instead of its id", Doc: "A sweep's cells get their coordinates after it"},
	{Name: "tag", Multi: true, Category: catOutput, Usage: "key=value mark stored with the run, repeatable; results ls --tag key=value filters by it"},
	{Name: "out", Default: "./runs", Category: catOutput, Usage: "directory for result files"},
	{Name: "format", Default: "table", Category: catOutput, Usage: "output: table, json, csv (every measured figure, one a line: id,key,metric,unit,value), or marked (the JSON between markers that results collect reads from logs)", Commands: map[string]CommandUse{"sweep": {Own: true}, "capacity": {Own: true}, "tune-ttl": {Own: true}, "lock-cost": {Own: true}, "redlock-cost": {Own: true}, "chaos": {Own: true}}},
	{Name: "quiet", Aliases: []string{"q"}, Bool: true, Default: "false", Category: catOutput, Usage: "no live progress line", Doc: "Also no step messages on stderr"},
}

// lockUsage is --lock's help: each lock and the topologies it runs on, from
// the kind registry, and each kind's default.
func lockUsage() string {
	var locks, defaults []string
	for _, name := range lockimpl.Names() {
		locks = append(locks, fmt.Sprintf("%s (%s)", name, strings.Join(compose.KindsWithLock(name), ", ")))
	}
	for _, sh := range compose.Shapes() {
		info := sh.Info()
		defaults = append(defaults, info.Locks[0]+" on "+info.Example)
	}
	return "lock: " + strings.Join(locks, ", ") + "; " + strings.Join(lockimpl.LocksWhere(func(d lockimpl.Descriptor) bool { return d.Peer }), ", ") + " are peer libraries; exec:'CMD ARGS' runs your own lock program, a driver (single, redlock:N); def:FILE a lock defined by its scripts (see --lock-def); go:NAME a Go lock that a program built on lockbench's library registers (default: " + strings.Join(defaults, ", ") + ")"
}

// RunFlags returns the run flags in help order.
func RunFlags() []Flag { return append([]Flag(nil), runFlags...) }

func lookupFlag(name string) (Flag, bool) {
	for _, f := range runFlags {
		if f.Name == name {
			return f, true
		}
	}
	return Flag{}, false
}

// InputError is bad input: it names the flag and what the flag accepts.
type InputError struct {
	Flag string
	Msg  string
}

// Error names the flag once: a message that already starts with it (a
// parser's `--renew-every "ttl/0": …`) is not prefixed again.
func (e *InputError) Error() string {
	if strings.HasPrefix(e.Msg, "--"+e.Flag+" ") || strings.HasPrefix(e.Msg, "--"+e.Flag+":") {
		return e.Msg
	}
	return fmt.Sprintf("--%s: %s", e.Flag, e.Msg)
}

// badInput builds an InputError.
func badInput(flag, format string, args ...any) error {
	return &InputError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}

// IsInputError reports whether err is bad input (exit code 2).
// Requests a topology cannot meet (the wrong number of --redis URLs) are
// bad input too, though some are only found as it comes up.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie) || compose.IsInputError(err)
}

// Shown returns a flag's value as it may be recorded or printed: URLs with
// their passwords replaced by xxxxx, everything else as given.
func Shown(name, value string) string {
	if f, ok := lookupFlag(name); ok && f.URL {
		return compose.RedactURL(value)
	}
	return value
}

// outputOnly are flags that choose where and how a run is reported, not
// what it measures; the result's config leaves them out (label and tags are
// fields of their own).
var outputOnly = []string{"out", "format", "quiet", "report", "label", "tag", "metrics-addr", "metrics-linger", "otlp", "start-at", "history"}

// Config renders resolved values as the result's config: every flag's value
// but the output-only ones, single values as strings and repeated ones as
// lists, passwords redacted.
func (v Values) Config() map[string]any {
	out := map[string]any{}
	keys := make([]string, 0, len(v))
	for k := range v {
		if !slices.Contains(outputOnly, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, known := lookupFlag(k)
		shown := make([]string, len(v[k]))
		for i, s := range v[k] {
			shown[i] = Shown(k, s)
		}
		switch {
		case known && f.Multi:
			out[k] = shown
		default:
			out[k] = strings.Join(shown, ",")
		}
	}
	return out
}

// IsRunFlag reports whether name is a run flag.
func IsRunFlag(name string) bool {
	_, ok := lookupFlag(name)
	return ok
}
