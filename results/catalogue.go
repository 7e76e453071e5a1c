package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Units of the figures. They say how a value is formatted and whether a
// ratio between runs means anything.
const (
	UnitSeconds = "s"
	UnitPerS    = "/s"
	UnitUS      = "us"
	UnitCount   = "count"
	UnitRatio   = "ratio"
	// UnitShare is a share of a whole (0..1), printed as a percentage.
	UnitShare = "share"
)

// WholeNumbers is the Precision of a figure printed without decimals where
// its unit's default has some (seconds, ratios, shares).
const WholeNumbers = -1

// MergeRule says how a figure of several generators' results becomes the
// figure of their merged result.
type MergeRule string

const (
	// MergeClient sums the generators' CPU time (each is its own process),
	// then divides by the merged acquisitions.
	MergeClient MergeRule = "client"
	// MergeSum adds the generators' figures (counts, rates per second).
	MergeSum MergeRule = "sum"
	// MergeHistogram recomputes the figure from the generators' HDR
	// histograms merged exactly (percentiles, counts of an operation).
	MergeHistogram MergeRule = "histogram"
	// MergeRecompute recomputes the figure from merged sums (ratios).
	MergeRecompute MergeRule = "recompute"
	// MergeMax takes the largest of the generators' figures (the window's
	// length; the worst worker's p99, since the worst of all workers is the
	// worst of some generator's).
	MergeMax MergeRule = "max"
	// MergeWorkers recomputes the figure over the union of every
	// generator's workers.
	MergeWorkers MergeRule = "workers"
	// MergeServers takes, per server, the largest reading of any generator
	// (they all read the same global counters), then divides by the merged
	// acquisitions.
	MergeServers MergeRule = "servers"
)

// Groups a figure belongs to: the section of the run table, the report and
// the compare table it is shown in.
const (
	GroupRun        = "run"
	GroupLatency    = "latency"
	GroupContention = "contention"
	GroupOpenLoop   = "open loop"
	GroupCounters   = "counters"
	GroupIncidents  = "incidents"
	GroupFairness   = "fairness"
	GroupErrors     = "errors"
	GroupServers    = "servers"
	GroupClient     = "client"
)

// Figure is one figure a result carries, defined once: every output (the run
// table, show and compare in table, CSV and JSON, the HTML report, --assert
// and --slo, CSV export, merge) reads it from here.
type Figure struct {
	// Name is the figure as --assert and --slo name it, e.g. acquire.p99.
	Name string
	// Key is its path in the result JSON, e.g. ops.acquire.latency_us.p99.
	Key string
	// Label is what tables and charts call it.
	Label string
	// Unit is one of the Unit constants.
	Unit string
	// Better is "higher", "lower" or "" when neither direction is good news.
	Better string
	// Merge says how generators' figures combine.
	Merge MergeRule
	// Group is the section it is shown in.
	Group string
	// Op is the operation of a latency figure, "" for the others.
	Op string
	// Precision is how many decimals a table shows of a figure in units of
	// seconds, counts, rates per second or ratios; 0 leaves the unit's
	// default (see Decimals). Latencies in µs keep 3 significant digits in
	// an adaptive unit (FormatUS). Ratios between runs are of the values as
	// shown at this precision, so two figures that print alike are "same".
	Precision int
	// Significant, when set, prints the figure with that many significant
	// digits instead of fixed decimals (whole from 10^Significant up, never
	// an exponent there): for rates that span orders of magnitude, such as
	// incidents per failover or per 10,000 acquisitions.
	Significant int

	read func(r *Result) (float64, error)
	// counter, when set, is where a summed count lives: it is read through
	// it, and merge, the recorder and the live snapshot add through it.
	counter func(c *Counts) *int64
	// total is counter's float sibling (rates per second).
	total func(r *Result) *float64
	// needsSent marks a figure read from Client.Sent, shown only for runs
	// that counted what their lock sent.
	needsSent bool
}

// Value reads the figure from r, or says why r has none: a figure that was
// not measured is an error, never a zero that would pass a threshold.
func (f Figure) Value(r *Result) (float64, error) {
	switch {
	case f.counter != nil:
		return float64(*f.counter(&r.Counts)), nil
	case f.total != nil:
		return *f.total(r), nil
	}
	return f.read(r)
}

// Decimals is the figure's precision: its own, or its unit's default (one
// decimal of a second, whole counts and rates, two decimals of a ratio).
func (f Figure) Decimals() int {
	switch {
	case f.Precision == WholeNumbers:
		return 0
	case f.Precision > 0:
		return f.Precision
	case f.Unit == UnitSeconds:
		return 1
	case f.Unit == UnitRatio:
		return 2
	}
	return 0
}

// Format renders v in the figure's unit at the figure's precision.
func (f Figure) Format(v float64) string {
	switch f.Unit {
	case UnitUS:
		return FormatUS(v)
	case UnitSeconds:
		return f.Number(v) + "s"
	case UnitShare:
		return f.Number(v) + "%"
	}
	return f.Number(v)
}

// Number is v at the figure's precision without its unit's suffix (a list
// of values whose unit the heading gives); shares are in percent.
func (f Figure) Number(v float64) string {
	if f.Unit == UnitShare {
		v *= 100
	}
	if f.Significant > 0 {
		return significant(v, f.Significant)
	}
	return strconv.FormatFloat(v, 'f', f.Decimals(), 64)
}

// significant prints v with n significant digits, whole from 10^n up so
// that a large value never prints as an exponent (1234, not 1.23e+03).
func significant(v float64, n int) string {
	s := strconv.FormatFloat(v, 'g', n, 64)
	if math.Abs(v) >= 1 && strings.Contains(s, "e") {
		// 99.7 at two digits is 1e+02: whole numbers read better.
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return s
}

// Shown is v as Format shows it: rounded to the figure's precision. Ratios
// between runs divide shown values, so a ratio never claims a difference
// the table cannot show.
func (f Figure) Shown(v float64) float64 {
	switch {
	case f.Unit == UnitUS:
		return shownUS(v)
	case f.Significant > 0:
		if r, err := strconv.ParseFloat(significant(v, f.Significant), 64); err == nil {
			return r
		}
		return v
	case f.Unit == UnitShare:
		return roundAsPrinted(100*v, f.Decimals()) / 100
	}
	return roundAsPrinted(v, f.Decimals())
}

// roundAsPrinted rounds v to d decimals exactly as %.*f prints it (half to
// even), so a shown value and its text never disagree.
func roundAsPrinted(v float64, d int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', d, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// shownUS rounds microseconds as FormatUS prints them: whole µs below 1ms,
// then 10µs steps (1.23ms), 100µs steps (12.3ms), 10ms steps (1.23s).
func shownUS(us float64) float64 {
	step := 1.0
	switch {
	case us < 999.5:
	case us < 10_000:
		step = 10
	case us < 1_000_000:
		step = 100
	default:
		step = 10_000
	}
	return roundAsPrinted(us/step, 0) * step
}

// IsLatency reports whether the figure is a latency in µs.
func (f Figure) IsLatency() bool { return f.Unit == UnitUS }

// aliases are the short names --assert accepts for common figures.
var aliases = map[string]string{
	"throughput": "throughput.acquired_per_s",
	"p50":        "acquire.p50", "p90": "acquire.p90", "p95": "acquire.p95", "p99": "acquire.p99",
	"p999": "acquire.p999", "max": "acquire.max", "mean": "acquire.mean",
}

// percentileFields are the latency figures of every operation, in order.
var percentileFields = []struct {
	field, label string
	get          func(p Percentiles) float64
}{
	{"p50", "p50", func(p Percentiles) float64 { return p.P50 }},
	{"p90", "p90", func(p Percentiles) float64 { return p.P90 }},
	{"p95", "p95", func(p Percentiles) float64 { return p.P95 }},
	{"p99", "p99", func(p Percentiles) float64 { return p.P99 }},
	{"p999", "p99.9", func(p Percentiles) float64 { return p.P999 }},
	{"max", "max", func(p Percentiles) float64 { return p.Max }},
	{"mean", "mean", func(p Percentiles) float64 { return p.Mean }},
}

// Catalogue lists every figure lockbench defines, in the order outputs show
// them. Error kinds (errors.KIND) are a family outside it: see FiguresFor.
func Catalogue() []Figure {
	fs := runFigures()
	for _, op := range opOrder() {
		fs = append(fs, opFigures(op)...)
	}
	fs = append(fs, contentionFigures()...)
	fs = append(fs, openLoopFigures()...)
	fs = append(fs, counterFigures()...)
	fs = append(fs, incidentFigures()...)
	fs = append(fs, fairnessFigures()...)
	fs = append(fs, Figure{Name: "errors", Key: "errors", Label: "errors", Unit: UnitCount, Better: "lower", Merge: MergeSum, Group: GroupErrors,
		read: func(r *Result) (float64, error) { return float64(r.TotalErrors()), nil }})
	fs = append(fs, serverFigures()...)
	return append(fs, clientFigures()...)
}

// CounterFigures are the catalogue's summed counts (contention, open loop,
// counters, incidents), in catalogue order. A run's recorder keeps its counts
// in a Counts and adds them up through these, its live snapshot and /metrics
// name them by these, and merge sums them: nothing lists the counters again.
//
// Adding a counter: give it a field in the section of Counts it belongs to
// (Counters, or Incidents for an event that means a lease did not protect
// its work; the field is the result file's schema), and one line in
// counterFigures or incidentFigures below, e.g.
//
//	i("double_grants", func(i *Incidents) *int64 { return &i.DoubleGrants }),
//
// then count the event where it happens (bench/worker.go, inside
// rec.count: c.Incidents.DoubleGrants++). The result file, the run table,
// compare, --assert, merge, the live snapshot and /metrics carry it with
// nothing else to edit; a test (bench/metrics) holds the live and Prometheus
// names equal to these. Incidents.Total sums the incidents by hand: say
// there whether the new one adds to the total.
func CounterFigures() []Figure {
	var out []Figure
	for _, group := range [][]Figure{contentionFigures(), openLoopFigures(), counterFigures(), incidentFigures()} {
		for _, f := range group {
			if f.counter != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// IsCounter reports whether f is a summed count kept in Counts.
func (f Figure) IsCounter() bool { return f.counter != nil }

// Count returns where f's count lives in c; f must be a counter (IsCounter).
func (f Figure) Count(c *Counts) *int64 { return f.counter(c) }

// Add adds o's counts into c, counter by counter.
func (c *Counts) Add(o *Counts) {
	for _, f := range CounterFigures() {
		*f.counter(c) += *f.counter(o)
	}
}

func clientFigures() []Figure {
	c := func(name, label string, get func(r *Result) (float64, error)) Figure {
		return Figure{Name: "client." + name, Key: "client." + name, Label: label, Unit: UnitUS, Better: "lower", Merge: MergeClient, Group: GroupClient,
			read: func(r *Result) (float64, error) {
				switch {
				case r.Client == nil:
					return 0, fmt.Errorf("the result has no client figures")
				case !r.Client.Measured():
					return 0, fmt.Errorf("%s", r.Client.Unavailable)
				}
				return get(r)
			}}
	}
	sent := func(name, label string, get func(s *Sent) *float64) Figure {
		return Figure{Name: "client." + name, Key: "client.sent." + name, Label: label, Unit: UnitRatio, Better: "lower", Merge: MergeClient, Group: GroupClient,
			needsSent: true, read: func(r *Result) (float64, error) {
				if r.Client == nil || r.Client.Sent == nil {
					return 0, fmt.Errorf("the result has no count of the commands its lock sent")
				}
				return perAcquisition(r, get(r.Client.Sent))
			}}
	}
	return []Figure{
		c("cpu_us", "client cpu", func(r *Result) (float64, error) { return r.Client.CPUUS, nil }),
		c("cpu_us_per_acquire", "client cpu/acquire", func(r *Result) (float64, error) { return perAcquisition(r, r.Client.CPUUSPerAcquire) }),
		{Name: "client.cpu_share", Key: "client.cpu_share", Label: "client cpu share", Unit: UnitRatio, Better: "lower", Merge: MergeMax, Group: GroupClient,
			read: func(r *Result) (float64, error) {
				if !r.Client.Measured() {
					return 0, fmt.Errorf("the result has no client CPU reading")
				}
				return r.Client.CPUShare, nil
			}},
		// What client.cpu_share is a share of: --cpus (GOMAXPROCS) as the
		// run set it, so a generator held to 1 CPU is not read as idle.
		{Name: "client.cpus", Key: "client.cpus", Label: "client cpus", Unit: UnitCount, Merge: MergeMax, Group: GroupClient,
			read: func(r *Result) (float64, error) {
				if !r.Client.Measured() || r.Client.CPUs == 0 {
					return 0, fmt.Errorf("the result does not say how many CPUs its generator had")
				}
				return float64(r.Client.CPUs), nil
			}},
		// The whole host's busy share over the window, every process on it:
		// beside client.cpu_share it tells a generator starved by others
		// (capacity's "host" limit) from one that had the CPUs to itself.
		{Name: "client.host_cpu_share", Key: "client.host_cpu_share", Label: "host cpu busy", Unit: UnitRatio, Better: "lower", Merge: MergeMax, Group: GroupClient,
			read: func(r *Result) (float64, error) {
				if r.Client == nil || r.Client.HostCPUShare == nil {
					return 0, fmt.Errorf("the result has no reading of its host's CPU")
				}
				return *r.Client.HostCPUShare, nil
			}},
		sent("round_trips_per_acquire", "round trips/acquire", func(s *Sent) *float64 { return s.RoundTripsPerAcquire }),
		sent("commands_per_acquire", "client commands/acquire", func(s *Sent) *float64 { return s.CommandsPerAcquire }),
	}
}

// perAcquisition reads a figure per acquisition: absent (ErrNoAcquisitions)
// when the run made none, whatever a file written before says.
func perAcquisition(r *Result, v *float64) (float64, error) {
	if v == nil || r.Contention.Acquired == 0 {
		return 0, ErrNoAcquisitions
	}
	return *v, nil
}

func always(f func(r *Result) float64) func(r *Result) (float64, error) {
	return func(r *Result) (float64, error) { return f(r), nil }
}

func runFigures() []Figure {
	return []Figure{
		{Name: "duration_s", Key: "duration_s", Label: "duration", Unit: UnitSeconds, Merge: MergeMax, Group: GroupRun,
			total: func(r *Result) *float64 { return &r.DurationS }},
		{Name: "throughput.acquired_per_s", Key: "throughput.acquired_per_s", Label: "acquired/s", Unit: UnitPerS, Better: "higher", Merge: MergeSum, Group: GroupRun,
			total: func(r *Result) *float64 { return &r.Throughput.AcquiredPerS }},
		{Name: "throughput.attempts_per_s", Key: "throughput.attempts_per_s", Label: "attempts/s", Unit: UnitPerS, Merge: MergeSum, Group: GroupRun,
			total: func(r *Result) *float64 { return &r.Throughput.AttemptsPerS }},
	}
}

// opFigures are one operation's count, errors and latencies.
func opFigures(op string) []Figure {
	recorded := func(f func(s OpSummary) float64) func(r *Result) (float64, error) {
		return func(r *Result) (float64, error) {
			s, ok := r.Ops[op]
			if !ok || s.Count == 0 {
				// No latency was recorded: 0 would pass any "<" threshold unmeasured.
				return 0, fmt.Errorf("the run recorded no %s", op)
			}
			return f(s), nil
		}
	}
	counted := func(f func(s OpSummary) int64) func(r *Result) (float64, error) {
		return always(func(r *Result) float64 { return float64(f(r.Ops[op])) })
	}
	k := "ops." + op + "."
	fs := []Figure{
		{Name: op + ".count", Key: k + "count", Label: op + " count", Unit: UnitCount, Merge: MergeHistogram, Group: GroupLatency, Op: op,
			read: counted(func(s OpSummary) int64 { return s.Count })},
		{Name: op + ".errors", Key: k + "errors", Label: op + " errors", Unit: UnitCount, Better: "lower", Merge: MergeSum, Group: GroupLatency, Op: op,
			read: counted(func(s OpSummary) int64 {
				if IsFailedOp(op) {
					// Every operation of a failure row failed, whatever an
					// older file wrote.
					return max(s.Errors, s.Count)
				}
				return s.Errors
			})},
	}
	for _, p := range percentileFields {
		fs = append(fs, Figure{Name: op + "." + p.field, Key: k + "latency_us." + p.field, Label: op + " " + p.label, Unit: UnitUS, Better: "lower",
			Merge: MergeHistogram, Group: GroupLatency, Op: op, read: recorded(func(s OpSummary) float64 { return p.get(s.LatencyUS) })})
	}
	return fs
}

func contentionFigures() []Figure {
	c := func(name, label, better string, f func(c *Contention) *int64) Figure {
		return Figure{Name: "contention." + name, Key: "contention." + name, Label: label, Unit: UnitCount, Better: better, Merge: MergeSum,
			Group: GroupContention, counter: func(c *Counts) *int64 { return f(&c.Contention) }}
	}
	return []Figure{
		c("attempts", "attempts", "", func(c *Contention) *int64 { return &c.Attempts }),
		c("acquired", "acquired", "higher", func(c *Contention) *int64 { return &c.Acquired }),
		c("contended", "contended", "lower", func(c *Contention) *int64 { return &c.Contended }),
		c("gave_up", "gave up", "lower", func(c *Contention) *int64 { return &c.GaveUp }),
		{Name: "contention.rate", Key: "contention.rate", Label: "contention rate", Unit: UnitRatio, Better: "lower", Merge: MergeRecompute,
			Group: GroupContention, Precision: 4, read: always(func(r *Result) float64 { return r.Contention.Rate })},
		{Name: "contention.attempts_per_acquire", Key: "contention.attempts_per_acquire", Label: "attempts/acquire", Unit: UnitRatio, Better: "lower",
			Merge: MergeRecompute, Group: GroupContention, read: func(r *Result) (float64, error) { return perAcquisition(r, r.Contention.AttemptsPerAcquire) }},
	}
}

// counter is a summed count of Counters.
func counter(name, label, better, group string, f func(c *Counters) *int64) Figure {
	return Figure{Name: "counters." + name, Key: "counters." + name, Label: label, Unit: UnitCount, Better: better, Merge: MergeSum,
		Group: group, counter: func(c *Counts) *int64 { return f(&c.Counters) }}
}

func openLoopFigures() []Figure {
	g := GroupOpenLoop
	return []Figure{
		counter("scheduled", "scheduled", "", g, func(c *Counters) *int64 { return &c.Scheduled }),
		counter("served", "served", "higher", g, func(c *Counters) *int64 { return &c.Served }),
		counter("dropped", "dropped", "lower", g, func(c *Counters) *int64 { return &c.Dropped }),
		counter("late", "late", "lower", g, func(c *Counters) *int64 { return &c.Late }),
	}
}

func counterFigures() []Figure {
	g := GroupCounters
	return []Figure{
		counter("released", "released", "", g, func(c *Counters) *int64 { return &c.Released }),
		counter("renewed", "renewed", "", g, func(c *Counters) *int64 { return &c.Renewed }),
		counter("crashed", "crashed", "", g, func(c *Counters) *int64 { return &c.Crashed }),
		counter("paused", "paused", "", g, func(c *Counters) *int64 { return &c.Paused }),
		counter("unfinished", "unfinished", "lower", g, func(c *Counters) *int64 { return &c.Unfinished }),
		counter("writes", "writes", "", g, func(c *Counters) *int64 { return &c.Writes }),
		counter("acquire_unreplicated", "acquire unreplicated", "lower", g, func(c *Counters) *int64 { return &c.Unreplicated }),
	}
}

func incidentFigures() []Figure {
	i := func(name string, f func(i *Incidents) *int64) Figure {
		return Figure{Name: "incidents." + name, Key: "incidents." + name, Label: name, Unit: UnitCount, Better: "lower", Merge: MergeSum,
			Group: GroupIncidents, counter: func(c *Counts) *int64 { return f(&c.Incidents) }}
	}
	return []Figure{
		i("expired_during_work", func(i *Incidents) *int64 { return &i.ExpiredDuringWork }),
		i("release_lost", func(i *Incidents) *int64 { return &i.ReleaseLost }),
		i("renew_lost", func(i *Incidents) *int64 { return &i.RenewLost }),
		i("work_aborted", func(i *Incidents) *int64 { return &i.WorkAborted }),
		i("overlaps", func(i *Incidents) *int64 { return &i.Overlaps }),
		i("double_grants", func(i *Incidents) *int64 { return &i.DoubleGrants }),
		i("overruns", func(i *Incidents) *int64 { return &i.Overruns }),
		i("fencing_rejected", func(i *Incidents) *int64 { return &i.FencingRejected }),
		i("stale_writes_accepted", func(i *Incidents) *int64 { return &i.StaleWritesAccepted }),
		i("possible_double_grants", func(i *Incidents) *int64 { return &i.PossibleDoubleGrants }),
		{Name: "incidents", Key: "incidents", Label: "incidents total", Unit: UnitCount, Better: "lower", Merge: MergeSum, Group: GroupIncidents,
			read: always(func(r *Result) float64 { return float64(r.Incidents.Total()) })},
	}
}

func fairnessFigures() []Figure {
	f := func(name, label, unit, better string, rule MergeRule, get func(f *Fairness) float64) Figure {
		return Figure{Name: "fairness." + name, Key: "fairness." + name, Label: label, Unit: unit, Better: better, Merge: rule, Group: GroupFairness,
			read: func(r *Result) (float64, error) {
				if r.Fairness == nil {
					return 0, fmt.Errorf("the run recorded no per-worker acquisitions")
				}
				return get(r.Fairness), nil
			}}
	}
	jain := f("jain", "Jain's index", UnitRatio, "higher", MergeWorkers, func(f *Fairness) float64 { return f.Jain })
	jain.Precision = 3
	return []Figure{
		f("min_acquired", "min acquired/worker", UnitCount, "higher", MergeWorkers, func(f *Fairness) float64 { return float64(f.MinAcquired) }),
		f("max_acquired", "max acquired/worker", UnitCount, "", MergeWorkers, func(f *Fairness) float64 { return float64(f.MaxAcquired) }),
		jain,
		f("starved", "starved workers", UnitCount, "lower", MergeWorkers, func(f *Fairness) float64 { return float64(f.Starved) }),
		f("worst_time_to_acquire_p99_us", "worst worker's time_to_acquire p99", UnitUS, "lower", MergeMax,
			func(f *Fairness) float64 { return f.WorstTimeToAcquireP99US }),
	}
}

func serverFigures() []Figure {
	s := func(name, label, unit string, get func(r *Result) (float64, error)) Figure {
		return Figure{Name: "servers." + name, Key: "servers." + name, Label: label, Unit: unit, Better: "lower", Merge: MergeServers, Group: GroupServers,
			read: func(r *Result) (float64, error) {
				switch {
				case r.Servers == nil:
					return 0, fmt.Errorf("the result has no server figures")
				case !r.Servers.Measured():
					// A sum over only the nodes that answered INFO would pass for a measured one.
					return 0, fmt.Errorf("%s", r.Servers.Unavailable)
				}
				return get(r)
			}}
	}
	inScripts := s("script_commands_per_acquire", "in scripts/acquire", UnitRatio, func(r *Result) (float64, error) {
		n, err := r.ScriptCommands()
		if err != nil {
			return 0, err
		}
		return perAcquisition(r, PerAcquire(float64(n), r.Contention.Acquired))
	})
	inScripts.needsSent = true
	return []Figure{
		s("commands_per_acquire", "server commands/acquire", UnitRatio, func(r *Result) (float64, error) { return perAcquisition(r, r.Servers.CommandsPerAcquire) }),
		inScripts,
		s("cpu_us_per_acquire", "server cpu/acquire", UnitUS, func(r *Result) (float64, error) { return perAcquisition(r, r.Servers.CPUUSPerAcquire) }),
	}
}

// errorKindFigure is errors.KIND: how many failures of one kind.
func errorKindFigure(kind string) Figure {
	return Figure{Name: "errors." + kind, Key: "errors." + kind, Label: "errors " + kind, Unit: UnitCount, Better: "lower", Merge: MergeSum,
		Group: GroupErrors, read: func(r *Result) (float64, error) {
			// A known kind the run never saw is a measured zero; an unknown
			// one is a typo, not a zero.
			if !knownErrorKind(r, kind) {
				return 0, unknownErrorKind(r, kind)
			}
			return float64(r.Errors[kind]), nil
		}}
}

// LookupFigure finds a figure by its name or alias (p99 is acquire.p99,
// throughput is throughput.acquired_per_s), including errors.KIND.
func LookupFigure(name string) (Figure, error) {
	name = strings.TrimSpace(name)
	if a, ok := aliases[name]; ok {
		name = a
	}
	if kind, ok := strings.CutPrefix(name, "errors."); ok && kind != "" {
		return errorKindFigure(kind), nil
	}
	for _, f := range Catalogue() {
		if f.Name == name {
			return f, nil
		}
	}
	return Figure{}, unknownFigure(name)
}

// unknownFigure says what a misspelt name could have been.
func unknownFigure(name string) error {
	group, _, _ := strings.Cut(name, ".")
	if full, ok := aliases[group]; ok && group != "throughput" {
		return fmt.Errorf("unknown metric %q: %s is short for %s; for another operation write OP.%s", name, group, full, group)
	}
	var same []string
	for _, f := range Catalogue() {
		if g, _, _ := strings.Cut(f.Name, "."); g == group {
			same = append(same, strings.TrimPrefix(f.Name, group+"."))
		}
	}
	if len(same) > 0 {
		return fmt.Errorf("unknown metric %q: %s has %s", name, group, strings.Join(same, " "))
	}
	var groups []string
	for _, f := range Catalogue() {
		if g, _, _ := strings.Cut(f.Name, "."); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	return fmt.Errorf("unknown metric %q: want one of %s, errors.KIND, or a short name (throughput, p99)", name, strings.Join(groups, ", "))
}

// FiguresFor lists the figures present in at least one of runs, in report
// order, with the error kinds any of them saw. Figures no run has are left
// out so that tables do not fill up with dashes.
func FiguresFor(runs []*Result) []Figure {
	ops := map[string]bool{}
	for _, op := range opsPresent(runs) {
		ops[op] = true
	}
	var out []Figure
	for _, f := range Catalogue() {
		switch {
		case f.Op != "" && !ops[f.Op]:
			continue
		case f.Group == GroupOpenLoop && !anyOpenLoop(runs):
			continue
		case f.Group == GroupFairness && !anyFairness(runs):
			continue
		case f.Group == GroupServers && !anyServers(runs):
			continue
		case f.Group == GroupClient && !slices.ContainsFunc(runs, func(r *Result) bool { return r.Client.Measured() }):
			continue
		}
		if len(keepSent(runs, []Figure{f})) == 0 {
			continue
		}
		out = append(out, f)
		if f.Name == "errors" {
			for _, k := range errorKindsSeen(runs) {
				out = append(out, errorKindFigure(k))
			}
		}
	}
	// Operations from newer writers, after the known ones.
	for _, op := range opsPresent(runs) {
		if !slices.Contains(opNames, op) {
			out = append(out, opFigures(op)...)
		}
	}
	return out
}

// keepSent leaves out of figs the figures read from Client.Sent when no run
// counted what its lock sent.
func keepSent(runs []*Result, figs []Figure) []Figure {
	if slices.ContainsFunc(runs, func(r *Result) bool { return r.Client != nil && r.Client.Sent != nil }) {
		return figs
	}
	return slices.DeleteFunc(figs, func(f Figure) bool { return f.needsSent })
}

// InGroup returns the figures of fs in group.
func InGroup(fs []Figure, group string) []Figure {
	var out []Figure
	for _, f := range fs {
		if f.Group == group {
			out = append(out, f)
		}
	}
	return out
}

// figuresNamed resolves the names of a table view; a test checks that every
// view names only figures that exist.
func figuresNamed(names ...string) []Figure {
	out := make([]Figure, 0, len(names))
	for _, n := range names {
		if f, err := LookupFigure(n); err == nil {
			out = append(out, f)
		}
	}
	return out
}

func errorKindsSeen(runs []*Result) []string {
	kinds := map[string]bool{}
	for _, r := range runs {
		for k := range r.Errors {
			kinds[k] = true
		}
	}
	return sortedKeys(kinds)
}

func anyFairness(runs []*Result) bool {
	return slices.ContainsFunc(runs, func(r *Result) bool { return r.Fairness != nil })
}

func anyServers(runs []*Result) bool {
	return slices.ContainsFunc(runs, func(r *Result) bool { return r.Servers.Measured() })
}

func anyOpenLoop(runs []*Result) bool {
	return slices.ContainsFunc(runs, func(r *Result) bool { return r.OpenLoop() })
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// opsPresent returns the operations any run recorded: the known ones in
// report order, then unknown ones (from newer writers) sorted by name.
func opsPresent(runs []*Result) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		for op, s := range r.Ops {
			if s.Count > 0 {
				seen[op] = true
			}
		}
	}
	var ops []string
	for _, op := range opOrder() {
		if seen[op] {
			ops = append(ops, op)
			delete(seen, op)
		}
	}
	return append(ops, sortedKeys(seen)...)
}
