package results

import (
	"fmt"
	"slices"
	"sort"
)

// Units of the figures in comparisons and CSV exports. They say how a value
// is formatted and whether a ratio between runs means anything.
const (
	UnitSeconds = "s"
	UnitPerS    = "/s"
	UnitUS      = "us"
	UnitCount   = "count"
	UnitRatio   = "ratio"
)

// metric is one comparable figure of a run. Key is the figure's path in the
// result JSON (so a script can find it again); Name is what a table shows.
type metric struct {
	key, name, unit string
	// better is "higher", "lower" or "" when neither direction is good news.
	better string
	value  func(r *Result) (float64, bool)
}

// metricsFor lists the figures present in at least one of runs, in report
// order: throughput, every operation's latency, contention, incidents,
// errors, server cost, client cost. Figures absent from every run are left out so that
// tables do not fill up with dashes.
func metricsFor(runs []*Result) []metric {
	ms := throughputMetrics()
	for _, op := range opsPresent(runs) {
		ms = append(ms, opMetrics(op)...)
	}
	ms = append(ms, contentionMetrics()...)
	ms = append(ms, incidentMetrics()...)
	ms = append(ms, errorMetrics(runs)...)
	if anyServers(runs) {
		ms = append(ms, serverMetrics()...)
	}
	if slices.ContainsFunc(runs, func(r *Result) bool { return r.Client.Measured() }) {
		ms = append(ms, clientMetric())
	}
	return ms
}

func always(f func(r *Result) float64) func(r *Result) (float64, bool) {
	return func(r *Result) (float64, bool) { return f(r), true }
}

func throughputMetrics() []metric {
	return []metric{
		{"duration_s", "duration", UnitSeconds, "", always(func(r *Result) float64 { return r.DurationS })},
		{"throughput.acquired_per_s", "acquired/s", UnitPerS, "higher", always(func(r *Result) float64 { return r.Throughput.AcquiredPerS })},
		{"throughput.attempts_per_s", "attempts/s", UnitPerS, "", always(func(r *Result) float64 { return r.Throughput.AttemptsPerS })},
	}
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

func opMetrics(op string) []metric {
	get := func(f func(s OpSummary) float64) func(r *Result) (float64, bool) {
		return func(r *Result) (float64, bool) {
			s, ok := r.Ops[op]
			if !ok || s.Count == 0 {
				return 0, false
			}
			return f(s), true
		}
	}
	k := "ops." + op + "."
	return []metric{
		{k + "count", op + " count", UnitCount, "", get(func(s OpSummary) float64 { return float64(s.Count) })},
		{k + "errors", op + " errors", UnitCount, "lower", get(func(s OpSummary) float64 { return float64(s.Errors) })},
		{k + "latency_us.p50", op + " p50", UnitUS, "lower", get(func(s OpSummary) float64 { return s.LatencyUS.P50 })},
		{k + "latency_us.p90", op + " p90", UnitUS, "lower", get(func(s OpSummary) float64 { return s.LatencyUS.P90 })},
		{k + "latency_us.p99", op + " p99", UnitUS, "lower", get(func(s OpSummary) float64 { return s.LatencyUS.P99 })},
		{k + "latency_us.p999", op + " p99.9", UnitUS, "lower", get(func(s OpSummary) float64 { return s.LatencyUS.P999 })},
		{k + "latency_us.max", op + " max", UnitUS, "lower", get(func(s OpSummary) float64 { return s.LatencyUS.Max })},
		{k + "latency_us.mean", op + " mean", UnitUS, "lower", get(func(s OpSummary) float64 { return s.LatencyUS.Mean })},
	}
}

func contentionMetrics() []metric {
	c := func(f func(c Contention) float64) func(r *Result) (float64, bool) {
		return always(func(r *Result) float64 { return f(r.Contention) })
	}
	return []metric{
		{"contention.attempts", "attempts", UnitCount, "", c(func(c Contention) float64 { return float64(c.Attempts) })},
		{"contention.acquired", "acquired", UnitCount, "higher", c(func(c Contention) float64 { return float64(c.Acquired) })},
		{"contention.contended", "contended", UnitCount, "lower", c(func(c Contention) float64 { return float64(c.Contended) })},
		{"contention.gave_up", "gave up", UnitCount, "lower", c(func(c Contention) float64 { return float64(c.GaveUp) })},
		{"contention.rate", "contention rate", UnitRatio, "lower", c(func(c Contention) float64 { return c.Rate })},
		{"contention.attempts_per_acquire", "attempts/acquire", UnitRatio, "lower", c(func(c Contention) float64 { return c.AttemptsPerAcquire })},
	}
}

// incidentFields pairs each incident's JSON name with its count, in the
// order of the schema, so tables, CSV and the report's bars agree.
func incidentFields(i Incidents) []namedCount {
	return []namedCount{
		{"expired_during_work", i.ExpiredDuringWork},
		{"release_lost", i.ReleaseLost},
		{"renew_lost", i.RenewLost},
		{"work_aborted", i.WorkAborted},
		{"overlaps", i.Overlaps},
		{"fencing_rejected", i.FencingRejected},
		{"stale_writes_accepted", i.StaleWritesAccepted},
	}
}

type namedCount struct {
	name  string
	count int64
}

func incidentMetrics() []metric {
	var ms []metric
	for idx, f := range incidentFields(Incidents{}) {
		ms = append(ms, metric{"incidents." + f.name, f.name, UnitCount, "lower",
			always(func(r *Result) float64 { return float64(incidentFields(r.Incidents)[idx].count) })})
	}
	return append(ms, metric{"incidents.total", "incidents total", UnitCount, "lower",
		always(func(r *Result) float64 { return float64(r.Incidents.Total()) })})
}

func errorMetrics(runs []*Result) []metric {
	ms := []metric{{"errors_total", "errors", UnitCount, "lower",
		always(func(r *Result) float64 { return float64(r.TotalErrors()) })}}
	kinds := map[string]bool{}
	for _, r := range runs {
		for k := range r.Errors {
			kinds[k] = true
		}
	}
	for _, k := range sortedKeys(kinds) {
		ms = append(ms, metric{"errors." + k, "errors " + k, UnitCount, "lower",
			always(func(r *Result) float64 { return float64(r.Errors[k]) })})
	}
	return ms
}

// hasServerCost says whether r carries server-side figures; a run whose
// servers refused INFO has none, and a zero there would read as "free".
func hasServerCost(r *Result) bool { return r.Servers.Measured() }

func anyServers(runs []*Result) bool {
	for _, r := range runs {
		if hasServerCost(r) {
			return true
		}
	}
	return false
}

func serverMetrics() []metric {
	get := func(f func(s *Servers) float64) func(r *Result) (float64, bool) {
		return func(r *Result) (float64, bool) {
			if !hasServerCost(r) {
				return 0, false
			}
			return f(r.Servers), true
		}
	}
	return []metric{
		{"servers.commands_per_acquire", "server commands/acquire", UnitRatio, "lower", get(func(s *Servers) float64 { return s.CommandsPerAcquire })},
		{"servers.cpu_us_per_acquire", "server cpu/acquire", UnitUS, "lower", get(func(s *Servers) float64 { return s.CPUUSPerAcquire })},
	}
}

func clientMetric() metric {
	return metric{"client.cpu_us_per_acquire", "client cpu/acquire", UnitUS, "lower", func(r *Result) (float64, bool) {
		if !r.Client.Measured() {
			return 0, false
		}
		return r.Client.CPUUSPerAcquire, true
	}}
}

// formatValue renders v for a table in its unit.
func formatValue(unit string, v float64) string {
	switch unit {
	case UnitUS:
		return FormatUS(v)
	case UnitSeconds:
		return fmt.Sprintf("%.1fs", v)
	case UnitPerS, UnitCount:
		return fmt.Sprintf("%.0f", v)
	}
	if v != 0 && v < 0.01 {
		return fmt.Sprintf("%.4f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
