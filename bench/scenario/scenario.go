// Package scenario reproduces the known failure modes of Redis locks as fixed
// recipes of topology, workload, faults and mitigations, runs each variant
// several times, and reports how often mutual exclusion broke.
package scenario

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/pool"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/suggest"
)

// Variant is one way of running a scenario: with or without a mitigation.
type Variant struct {
	// Name says what differs, e.g. "single, no renewal".
	Name string
	// Mitigated marks variants meant to prevent the violation.
	Mitigated bool
	// Flags are run flags on top of the scenario's base.
	Flags plan.Values
	// TakesLock marks variants that run the lock given with --lock; the
	// others (fenced, WAIT) stay as the reference mitigation.
	TakesLock bool
}

// Scenario is a fixed recipe.
type Scenario struct {
	// Name is what `lockbench scenario NAME` takes.
	Name string
	// Description is one line for `scenario list`.
	Description string
	// Base are the run flags every variant shares.
	Base plan.Values
	// Variants are run in order.
	Variants []Variant
	// Violation names what counts as the failure in one trial, given its result;
	// empty when the scenario measures availability and latency only.
	Violation string
	violated  func(r *results.Result) bool
	// Availability adds the unavailability window to the verdict: each
	// variant's longest gap without an acquisition (see availability.go).
	Availability bool
	// Per names what one trial is in the verdict's rate, e.g. "per failover".
	Per string
	// exposure says what a trial put at risk (see exposure.go); nil when
	// only acquisitions in the window make a trial conclusive.
	exposure *exposureRule
}

// vals builds plan.Values from name, value pairs.
func vals(kv ...string) plan.Values {
	v := plan.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v[kv[i]] = append(v[kv[i]], kv[i+1])
	}
	return v
}

func staleWrites(r *results.Result) bool { return r.Incidents.StaleWritesAccepted > 0 }

// doubleGrants is the violation of the recipes whose lock is broken: a key
// granted while an earlier lease on it was still valid. An overrun (a holder
// starved of CPU past its lease on a loaded machine) is not the lock's fault
// and does not count; the verdict table shows both causes.
func doubleGrants(r *results.Result) bool { return r.Incidents.DoubleGrants > 0 }

// All returns the scenarios in list order.
func All() []Scenario {
	return []Scenario{gcPause(), failover(), clusterFailover(), redlockRestart(), redlockClockJump(), redlockNodeDown(), redlockSlowNode(), naiveRelease(),
		replicatedPrimaryIsolated(), clusterMasterIsolated(), etcdLeaderFailover(), etcdLeaderIsolated(), etcdGroupsIsolated(), etcdGCPause(), pgSessionLoss(), zkSessionExpiry(), zkLeaderIsolated(), natsLeaderLoss(), natsLeaderIsolated()}
}

// Lookup finds a scenario by name; the error lists the names.
func Lookup(name string) (Scenario, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scenario{}, fmt.Errorf("scenario %q: unknown; %s", name, suggest.Unknown(name, names))
}

// Runner executes one run of the given flags and returns its stored result.
type Runner func(ctx context.Context, v plan.Values) (*results.Result, error)

// Trial is one run of one variant.
type Trial struct {
	Result   *results.Result
	Violated bool
	// Conclusive says whether the trial could have shown the violation: it
	// acquired in its window and its hazard struck with holders at risk.
	// Why says why not.
	Conclusive bool
	Why        string
	// Exposure is how many holders were at risk when the hazard struck
	// (inside at the fault, or outliving their lease); -1 where the
	// variant has no such hazard.
	Exposure int64
}

// VariantVerdict is a variant's trials and their sums.
type VariantVerdict struct {
	Variant  Variant
	Trials   []Trial
	Violated int
	// Conclusive counts the trials that could have shown the violation;
	// Rate is the violation rate over them, with its 95% interval, and
	// Decision the word the k-of-n rule gives it.
	Conclusive int
	Rate       verdict.TrialRate
	Decision   verdict.TrialDecision
	// IdleAfterFault says that no conclusive trial granted anything after
	// its fault fired: a mitigation that avoided violations that way was
	// safe by being unavailable.
	IdleAfterFault bool
	// DoubleGrants, Overruns (the overlaps by cause), StaleAccepted and
	// FencingRejected sum over trials.
	DoubleGrants, Overruns, StaleAccepted, FencingRejected int64
	// ErrorShare is failed attempts (errors) over all attempts.
	ErrorShare float64
	// AcquireP99US is the median over trials of the acquire p99.
	AcquireP99US float64
	// AcquiredPerS is the median over trials of acquisitions per second.
	AcquiredPerS float64
	// GapsS are each trial's longest gap without an acquisition, in seconds.
	GapsS []float64
}

// Verdict is a scenario's outcome.
type Verdict struct {
	Scenario Scenario
	Variants []VariantVerdict
	// Level is the share a word of safety bounds the violation under.
	Level float64
}

// Options are how Run spends its trials (advise's, as renewal-check's).
type Options = advise.TrialOptions

// TrialWindow is the longest window of the scenario's variants: what one
// trial takes at the least, before its servers' start.
func (s Scenario) TrialWindow() time.Duration {
	longest := time.Duration(0)
	for _, variant := range s.Variants {
		d := s.Base.Get("duration")
		if vd := variant.Flags.Get("duration"); vd != "" {
			d = vd
		}
		if w, err := time.ParseDuration(d); err == nil {
			longest = max(longest, w)
		}
	}
	return longest
}

// TrialLabel names a stored trial by what it is, so a listing tells the
// trials of a scenario apart without their ids, and --resume finds them.
func TrialLabel(s Scenario, variant string, n int) string {
	return fmt.Sprintf("%s / %s / trial %d", s.Name, variant, n)
}

// variantRun is one variant's trials in flight, with the sums kept as
// they come.
type variantRun struct {
	vv             VariantVerdict
	attempts, errs int64
	p99s, tputs    []float64
}

// Run runs every variant's planned trials, then, within o.Budget, one more
// trial at a time of each variant the rule leaves undecided, round by
// round. o.Parallel trials run at once (pool.Round), each on its own
// servers; they are folded in trial order, so the verdict does not depend
// on which finished first. Ctrl-C keeps what was measured: the verdict
// comes back with the context's error.
func Run(ctx context.Context, s Scenario, o Options, run Runner) (Verdict, error) {
	now := o.Clock()
	start := now()
	v := Verdict{Scenario: s, Level: o.LevelOrDefault()}
	vrs := make([]*variantRun, len(s.Variants))
	for i, variant := range s.Variants {
		vrs[i] = &variantRun{vv: VariantVerdict{Variant: variant}}
	}
	begun := make([]bool, len(s.Variants))
	total, done := o.Trials*len(s.Variants), 0
	var spent time.Duration
	// finish sums the variants begun; Ctrl-C's error comes first.
	finish := func(err error) (Verdict, error) {
		for i, vr := range vrs {
			if !begun[i] {
				continue
			}
			s.sum(vr, v.Level)
			v.Variants = append(v.Variants, vr.vv)
		}
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
		return v, err
	}
	// round runs one trial of each variant listed (an index may repeat),
	// numbered on from the variant's trials so far; fits, when set, says
	// whether a trial starting now would end within the budget.
	round := func(variants []int, fits func() bool) error {
		jobs := make([]trialJob, len(variants))
		next := map[int]int{}
		for k, i := range variants {
			next[i]++
			jobs[k] = trialJob{variant: i, n: len(vrs[i].vv.Trials) + next[i]}
		}
		outcomes := pool.Round[*results.Result]{
			Size: o.Parallel,
			Start: func(k int) bool {
				if fits != nil && !fits() {
					return false
				}
				j := jobs[k]
				begun[j.variant] = true
				if o.Progress != nil {
					eta := time.Duration(0)
					if done > 0 {
						eta = spent / time.Duration(done) * time.Duration(total-done) / time.Duration(max(1, o.Parallel))
					}
					o.Progress(advise.Progress{Done: done, Total: total, Label: TrialLabel(s, s.Variants[j.variant].Name, j.n),
						Elapsed: now().Sub(start), ETA: eta})
				}
				return true
			},
			Run: func(ctx context.Context, _, k int) (*results.Result, error) {
				t0 := now()
				r, err := s.trialResult(ctx, jobs[k], o, run)
				jobs[k].took = now().Sub(t0)
				return r, err
			},
			Done: func(k int, _ *results.Result, _ error) {
				spent += jobs[k].took
				done++
			},
		}.Go(ctx, len(jobs))
		for k, out := range outcomes {
			if out.Ran && out.Err == nil && out.Value != nil {
				s.addTrial(vrs[jobs[k].variant], out.Value)
			}
		}
		return pool.FirstErr(outcomes)
	}
	var planned []int
	for i := range s.Variants {
		for range o.Trials {
			planned = append(planned, i)
		}
	}
	if err := round(planned, nil); err != nil || ctx.Err() != nil {
		return finish(err)
	}
	for o.Budget > 0 && s.violated != nil {
		var undecided []int
		for i, vr := range vrs {
			s.sum(vr, v.Level)
			if vr.vv.Decision.Class == verdict.Undecided {
				undecided = append(undecided, i)
			}
		}
		mean := spent / time.Duration(max(1, done))
		if len(undecided) == 0 || now().Sub(start)+mean > o.Budget {
			break
		}
		total += len(undecided)
		fits := func() bool { return now().Sub(start)+mean <= o.Budget }
		if err := round(undecided, fits); err != nil || ctx.Err() != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

// trialJob is one trial in a round: its variant, its number among the
// variant's trials (from 1), and the wall time it took.
type trialJob struct {
	variant, n int
	took       time.Duration
}

// trialResult runs (or, with --resume, reuses) trial j; nil without an
// error where Ctrl-C cut it short.
func (s Scenario) trialResult(ctx context.Context, j trialJob, o Options, run Runner) (*results.Result, error) {
	variant := s.Variants[j.variant]
	flags := s.TrialFlags(j.variant, j.n)
	if r := o.Reusable(flags); r != nil {
		return r, nil
	}
	r, err := run(ctx, flags)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("scenario %s, %s, trial %d: %w", s.Name, variant.Name, j.n, err)
	}
	return r, nil
}

// addTrial adds the trial r to vr's sums.
func (s Scenario) addTrial(vr *variantRun, r *results.Result) {
	t := Trial{Result: r, Violated: s.violated != nil && s.violated(r)}
	s.judge(&t)
	vv := &vr.vv
	vv.Trials = append(vv.Trials, t)
	vv.DoubleGrants += r.Incidents.DoubleGrants
	vv.Overruns += r.Incidents.Overruns
	vv.StaleAccepted += r.Incidents.StaleWritesAccepted
	vv.FencingRejected += r.Incidents.FencingRejected
	vr.attempts += r.Contention.Attempts
	vr.errs += r.TotalErrors()
	vr.p99s = append(vr.p99s, r.Ops[results.OpAcquire].LatencyUS.P99)
	vr.tputs = append(vr.tputs, r.Throughput.AcquiredPerS)
	if gap, _, ok := results.LongestGap(r.Series, r.DurationS); ok {
		vv.GapsS = append(vv.GapsS, gap)
	}
}

// sum sets the variant's counts, medians, rate and decision from its
// trials so far.
func (s Scenario) sum(vr *variantRun, level float64) {
	vv := &vr.vv
	vv.Violated, vv.Conclusive = 0, 0
	for _, t := range vv.Trials {
		if t.Violated {
			vv.Violated++
		}
		if t.Conclusive {
			vv.Conclusive++
		}
	}
	vv.ErrorShare = 0
	if vr.attempts > 0 {
		vv.ErrorShare = float64(vr.errs) / float64(vr.attempts)
	}
	vv.AcquireP99US, vv.AcquiredPerS = results.Median(vr.p99s), results.Median(vr.tputs)
	s.estimate(vv)
	vv.Decision = verdict.DecideTrials(vv.Violated, vv.Conclusive, level)
}

// estimate sets the variant's rate over its conclusive trials and whether
// it granted anything after its faults.
func (s Scenario) estimate(vv *VariantVerdict) {
	vv.Rate = verdict.RateOver(vv.Violated, vv.Conclusive)
	vv.IdleAfterFault = vv.Violated == 0 && vv.Conclusive > 0
	for _, t := range vv.Trials {
		if t.Conclusive && s.grantedAfter(t.Result) {
			vv.IdleAfterFault = false
		}
	}
}

// per is the unit of the scenario's rate.
func (s Scenario) per() string {
	if s.Per != "" {
		return s.Per
	}
	return "per trial"
}

// Word is the variant's decided word: violated (one conclusive trial
// showed it), safe (none did, and the 95% upper bound is within the
// level), undecided, or inconclusive.
func (vv VariantVerdict) Word() string { return vv.Decision.Word("violated", "safe") }

// Statement is the variant's verdict in words: its word by the k-of-n
// rule, the violations over its conclusive trials with their interval, for
// an undecided variant the trials that would decide it, what made trials
// inconclusive, and a mitigation that was safe only by granting nothing
// after the fault.
func (s Scenario) Statement(vv VariantVerdict) string {
	if s.violated == nil {
		return ""
	}
	word := vv.Word()
	if vv.Decision.Class == verdict.Undecided {
		word = vv.Decision.Short("violated", "safe", 0)
	}
	st := vv.Variant.Name + ": " + word + "; " + vv.Decision.Explain("violated", s.per())
	if n := len(vv.Trials) - vv.Conclusive; n > 0 {
		st += fmt.Sprintf("; %d inconclusive (%s)", n, whyInconclusive(vv.Trials))
	}
	if vv.IdleAfterFault {
		st += fmt.Sprintf("; it granted nothing after %s: safe only by being unavailable", s.exposure.what)
	}
	return st
}

// Differences set each mitigated variant against each unmitigated one on
// their violation rates, by Fisher's exact test at 95%: a difference is
// said only where the test shows it.
func (s Scenario) Differences(v Verdict) []string {
	if s.violated == nil {
		return nil
	}
	var out []string
	for _, m := range v.Variants {
		if !m.Variant.Mitigated || m.Conclusive == 0 {
			continue
		}
		for _, u := range v.Variants {
			if u.Variant.Mitigated || u.Conclusive == 0 {
				continue
			}
			d := verdict.DifferTrials(m.Violated, m.Conclusive, u.Violated, u.Conclusive)
			out = append(out, fmt.Sprintf("%s (%d/%d) against %s (%d/%d): %s", m.Variant.Name, m.Violated, m.Conclusive,
				u.Variant.Name, u.Violated, u.Conclusive, d))
		}
	}
	return out
}

// whyInconclusive lists the distinct reasons of the inconclusive trials.
func whyInconclusive(trials []Trial) string {
	var whys []string
	for _, t := range trials {
		if !t.Conclusive && !slices.Contains(whys, t.Why) {
			whys = append(whys, t.Why)
		}
	}
	return strings.Join(whys, "; ")
}

// WriteVerdict prints the verdict table of a scenario.
func WriteVerdict(w io.Writer, v Verdict) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeVerdictText(w, v) })
}

func writeVerdictText(w io.Writer, v Verdict) error {
	s := v.Scenario
	fmt.Fprintf(w, "scenario %s: %s\n", s.Name, s.Description)
	if s.Violation != "" {
		fmt.Fprintf(w, "violation: %s\n", s.Violation)
	}
	// violated/conclusive: "0/2 of 3" is no violation in the 2 conclusive
	// trials of 3; error share: of acquire attempts, failed with errors.
	var (
		doubles  = results.FigureColumn("incidents.double_grants", "double\ngrants")
		overruns = results.FigureColumn("incidents.overruns", "over\nruns")
		stale    = results.FigureColumn("incidents.stale_writes_accepted", "stale\naccepted")
		fenced   = results.FigureColumn("incidents.fencing_rejected", "fencing\nrejected")
		errShare = results.FigureColumn("error_share", "error\nshare")
		rate     = results.FigureColumn("throughput.acquired_per_s", "acq/s")
		p99      = results.FigureColumn("acquire.p99", "acquire\np99")
	)
	t := results.NewTable(w, results.LabelColumn("variant"), results.LabelColumn("miti-\ngated"), results.LabelColumn("violated/\nconclusive"),
		doubles, overruns, stale, fenced, errShare, rate, p99)
	for _, vv := range v.Variants {
		mit := "no"
		if vv.Variant.Mitigated {
			mit = "yes"
		}
		violated := results.NotApplicable
		if s.violated != nil {
			violated = fmt.Sprintf("%d/%d of %d", vv.Violated, vv.Conclusive, len(vv.Trials))
		}
		_ = t.Append(vv.Variant.Name, mit, violated, doubles.Text(float64(vv.DoubleGrants)), overruns.Text(float64(vv.Overruns)),
			stale.Text(float64(vv.StaleAccepted)), fenced.Text(float64(vv.FencingRejected)), errShare.Text(vv.ErrorShare),
			rate.Text(vv.AcquiredPerS), p99.Text(vv.AcquireP99US))
	}
	if err := t.Render(); err != nil {
		return err
	}
	writeEvidence(w, v)
	if !s.Availability {
		return nil
	}
	return writeAvailability(w, v)
}

// writeEvidence states each variant's rate and, per trial, what was at
// risk when the hazard struck: the table's "k of n" is a count, this is
// what it bounds.
func writeEvidence(w io.Writer, v Verdict) {
	s := v.Scenario
	if s.violated == nil {
		return
	}
	if s.exposure != nil {
		fmt.Fprintf(w, "exposure: holders at risk at %s, per trial (- where the variant has no such hazard)\n", s.exposure.what)
		for _, vv := range v.Variants {
			var per []string
			for _, t := range vv.Trials {
				per = append(per, exposureText(t))
			}
			fmt.Fprintf(w, "  %s: %s\n", vv.Variant.Name, strings.Join(per, " "))
		}
	}
	fmt.Fprintf(w, "verdict (violated: one conclusive trial showed it; safe: none did and at most %s of trials would at 95%%; "+
		"else undecided):\n", verdict.LevelText(v.Level))
	for _, vv := range v.Variants {
		fmt.Fprintf(w, "  %s\n", s.Statement(vv))
	}
	if diffs := s.Differences(v); len(diffs) > 0 {
		fmt.Fprintln(w, "mitigated against unmitigated (exact test at 95%):")
		for _, d := range diffs {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
}

// exposureText is one trial's exposure, marked when inconclusive.
func exposureText(t Trial) string {
	x := results.NotApplicable
	if t.Exposure >= 0 {
		x = fmt.Sprint(t.Exposure)
	}
	if !t.Conclusive {
		x += "(inconclusive)"
	}
	return x
}
