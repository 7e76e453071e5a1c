package verdict

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

// WaitOp is the latency every SLO on a bare percentile (p99<10ms) judges:
// time_to_acquire, from the first try to the grant with retries and waits
// included (open loop: from each request's intended start). One try's
// latency (acquire) stays a figure of its own, but a caller waits for the
// lock, not for one try, and a blocking acquire and a retrying one are only
// alike on what the caller waited.
const WaitOp = results.OpTimeToAcquire

// JudgedOn says in the output which latency an SLO judged: op is WaitOp,
// or acquire in a judgement stored before the rulebook judged the wait.
func JudgedOn(op string) string {
	if op == WaitOp {
		return "SLO judged on time_to_acquire: the caller's wait from the first try to the grant, retries included" +
			" (open loop: from the intended start); a give-up counts as a failure at its wait"
	}
	return "SLO judged on " + op + ": one try's latency (judged before the rulebook read the caller's wait)"
}

// MinServedShare is the share of its offered requests an open-loop run must
// serve, dropping none that was already late, to count as keeping up: below
// it the generator or the lock is saturated, whatever its percentiles say.
const MinServedShare = 0.95

// Failures are what went wrong beside a run's rate: no rate is a verdict's
// input without them.
type Failures struct {
	// Attempts and FailedAttempts are acquire tries and those that ended
	// in an error (not contended: an error); ErrorsByKind names the kinds.
	Attempts       int64            `json:"attempts"`
	FailedAttempts int64            `json:"failed_attempts"`
	ErrorsByKind   map[string]int64 `json:"errors_by_kind,omitempty"`
	// Acquired and GaveUp are acquisitions and those that ended without
	// the lock (the wait limit or the retries ran out).
	Acquired int64 `json:"acquired"`
	GaveUp   int64 `json:"gave_up"`
	// OpenLoop says whether Scheduled, Served, Dropped and Late apply.
	OpenLoop  bool  `json:"open_loop"`
	Scheduled int64 `json:"scheduled,omitempty"`
	Served    int64 `json:"served,omitempty"`
	Dropped   int64 `json:"dropped,omitempty"`
	Late      int64 `json:"late,omitempty"`
}

// FailuresOf reads a run's failures.
func FailuresOf(r *results.Result, openLoop bool) Failures {
	byKind := r.AcquireErrors
	if byKind == nil {
		// A result stored before acquire_errors: every operation's kinds.
		byKind = r.Errors
	}
	f := Failures{Attempts: r.Contention.Attempts, FailedAttempts: r.Ops[results.OpAcquireFailed].Count, ErrorsByKind: byKind,
		Acquired: r.Contention.Acquired, GaveUp: r.Contention.GaveUp, OpenLoop: openLoop}
	if openLoop {
		c := r.Counters
		f.Scheduled, f.Served, f.Dropped, f.Late = c.Scheduled, c.Served, c.Dropped, c.Late
	}
	return f
}

// Add sums g into f: the failures of several runs of one configuration.
func (f *Failures) Add(g Failures) {
	f.Attempts += g.Attempts
	f.FailedAttempts += g.FailedAttempts
	f.Acquired += g.Acquired
	f.GaveUp += g.GaveUp
	f.OpenLoop = f.OpenLoop || g.OpenLoop
	f.Scheduled += g.Scheduled
	f.Served += g.Served
	f.Dropped += g.Dropped
	f.Late += g.Late
	for kind, n := range g.ErrorsByKind {
		if f.ErrorsByKind == nil {
			f.ErrorsByKind = map[string]int64{}
		}
		f.ErrorsByKind[kind] += n
	}
}

// MostlyFailed is the rule "a run whose tries mostly failed, or whose
// acquisitions mostly gave up, meets nothing": its reason, or "".
func (f Failures) MostlyFailed() string {
	switch {
	case f.Attempts > 0 && 2*f.FailedAttempts > f.Attempts:
		return fmt.Sprintf("most tries failed: %d of %d (%s)", f.FailedAttempts, f.Attempts, kindsText(f.ErrorsByKind))
	case f.GaveUp > f.Acquired:
		return fmt.Sprintf("most acquisitions gave up: %d gave up, %d acquired", f.GaveUp, f.Acquired)
	}
	return ""
}

// Text is the failures in one line, to stand beside a rate.
func (f Failures) Text() string {
	parts := []string{fmt.Sprintf("%s of %s tries failed", thousands(f.FailedAttempts), thousands(f.Attempts))}
	if f.FailedAttempts > 0 {
		parts[0] += " (" + kindsText(f.ErrorsByKind) + ")"
	}
	parts = append(parts, fmt.Sprintf("%s gave up at the wait limit", thousands(f.GaveUp)))
	if f.OpenLoop {
		parts = append(parts, fmt.Sprintf("%s of %s offered served, %s late, %s dropped",
			thousands(f.Served), thousands(f.Scheduled), thousands(f.Late), thousands(f.Dropped)))
	}
	return strings.Join(parts, "; ")
}

// kindsText is errors by kind, most first: "no_quorum 14957, timeout 3".
func kindsText(m map[string]int64) string {
	if len(m) == 0 {
		return "no kind recorded"
	}
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if m[kinds[i]] != m[kinds[j]] {
			return m[kinds[i]] > m[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// thousands writes n with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// SLO is one run judged against the SLO on what its callers waited.
type SLO struct {
	// Word is Meets or Misses.
	Word Word `json:"word"`
	// Op is the latency judged (WaitOp), P99US its p99 over the grants
	// (and, open loop, the dropped requests).
	Op    string  `json:"latency_op"`
	P99US float64 `json:"p99_us"`
	// Broken lists what failed, first the rule that sank it.
	Broken []string `json:"broken,omitempty"`
	// Failures stand beside the rate.
	Failures Failures `json:"failures"`
}

// Met reports whether the SLO held.
func (s SLO) Met() bool { return s.Word == Meets }

// JudgeSLO judges a run against slo (the rule Meets): every assertion
// holds, a bare percentile read on WaitOp with the give-ups counted as
// failures at the wait limit (a percentile that falls among them is
// broken); the run's tries did not mostly fail; and in open loop it served
// at least MinServedShare of what it offered, dropping none already late.
func JudgeSLO(r *results.Result, slo []results.Assertion, openLoop bool) SLO {
	s := SLO{Word: Meets, Op: WaitOp, P99US: r.Ops[WaitOp].LatencyUS.P99, Failures: FailuresOf(r, openLoop)}
	if why := s.Failures.MostlyFailed(); why != "" {
		s.Broken = append(s.Broken, why)
	}
	if openLoop {
		f := s.Failures
		if f.Dropped > edgeDrops(f.Scheduled, r.DurationS) || float64(f.Served) < MinServedShare*float64(f.Scheduled) {
			s.Broken = append(s.Broken, fmt.Sprintf("saturated: served %d of %d offered, %d dropped", f.Served, f.Scheduled, f.Dropped))
		}
	}
	for _, a := range slo {
		a = a.For(WaitOp)
		v, err := waitMeasure(a, r)
		switch {
		case err != nil:
			s.Broken = append(s.Broken, fmt.Sprintf("%s: %v", a.Expr, err))
		case math.IsInf(v, 1):
			s.Broken = append(s.Broken, fmt.Sprintf("%s: falls among the %d acquisitions that gave up at the wait limit (of %d)",
				a.Expr, r.Contention.GaveUp, r.Contention.GaveUp+r.Ops[WaitOp].Count))
		case !a.Holds(v):
			s.Broken = append(s.Broken, fmt.Sprintf("%s: %s", a.Expr, measured(a, v)))
		}
	}
	if len(s.Broken) > 0 {
		s.Word = Misses
	}
	return s
}

// waitMeasure reads an assertion; a percentile of WaitOp counts the run's
// give-ups as waits at least as long as any grant (+Inf when the
// percentile falls among them).
func waitMeasure(a results.Assertion, r *results.Result) (float64, error) {
	q, ok := quantileOf(a.Metric)
	g := r.Contention.GaveUp
	if !ok || g == 0 {
		return a.Measure(r)
	}
	sum := r.Ops[WaitOp]
	n := sum.Count
	if float64(g) > (1-q)*float64(n+g) {
		return math.Inf(1), nil
	}
	h, err := results.DecodeHistogram(sum.HDR)
	if err != nil || n == 0 || h.TotalCount() == 0 {
		return a.Measure(r)
	}
	return float64(h.ValueAtQuantile(min(100, 100*q*float64(n+g)/float64(n)))), nil
}

// quantileOf is the quantile a WaitOp percentile metric reads.
func quantileOf(metric string) (float64, bool) {
	suffix, ok := strings.CutPrefix(metric, WaitOp+".")
	if !ok {
		return 0, false
	}
	switch suffix {
	case "p50":
		return 0.5, true
	case "p90":
		return 0.9, true
	case "p95":
		return 0.95, true
	case "p99":
		return 0.99, true
	case "p999":
		return 0.999, true
	case "max":
		return 1, true
	}
	return 0, false
}

// measured renders what an assertion read, in its unit.
func measured(a results.Assertion, v float64) string {
	if a.IsLatency() {
		return results.FormatUS(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// edgeDrops is how many of an open-loop run's requests may go unstarted at
// the window's close without proving it saturated: those intended in its
// last late threshold (bench.DefaultLateThreshold), which were not yet late
// when it closed. A run that dropped more dropped one already late.
func edgeDrops(offered int64, durationS float64) int64 {
	if durationS <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(offered) / durationS * bench.DefaultLateThreshold.Seconds()))
}
