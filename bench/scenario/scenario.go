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

	"github.com/lockbench/lockbench/bench/plan"
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
		etcdLeaderFailover(), etcdLeaderIsolated(), etcdGCPause(), pgSessionLoss(), zkSessionExpiry(), natsLeaderLoss()}
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
	// Rate is the violation rate over them, with its 95% interval.
	Conclusive int
	Rate       verdict.TrialRate
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
}

// Progress is told before each trial.
type Progress func(variant string, trial, trials int)

// Run runs every variant trials times.
func Run(ctx context.Context, s Scenario, trials int, run Runner, progress Progress) (Verdict, error) {
	v := Verdict{Scenario: s}
	for _, variant := range s.Variants {
		vv := VariantVerdict{Variant: variant}
		var attempts, errs int64
		var p99s, tputs []float64
		for i := range trials {
			if progress != nil {
				progress(variant.Name, i+1, trials)
			}
			flags := s.Base.Clone()
			for k, val := range variant.Flags {
				flags[k] = append([]string(nil), val...)
			}
			// Each trial's stored result is named by what it is, so a listing
			// tells the trials of a scenario apart without their ids.
			flags.Set("label", fmt.Sprintf("%s / %s / trial %d", s.Name, variant.Name, i+1))
			r, err := run(ctx, flags)
			if err != nil {
				return v, fmt.Errorf("scenario %s, %s, trial %d: %w", s.Name, variant.Name, i+1, err)
			}
			t := Trial{Result: r, Violated: s.violated != nil && s.violated(r)}
			s.judge(&t)
			if t.Violated {
				vv.Violated++
			}
			if t.Conclusive {
				vv.Conclusive++
			}
			vv.Trials = append(vv.Trials, t)
			vv.DoubleGrants += r.Incidents.DoubleGrants
			vv.Overruns += r.Incidents.Overruns
			vv.StaleAccepted += r.Incidents.StaleWritesAccepted
			vv.FencingRejected += r.Incidents.FencingRejected
			attempts += r.Contention.Attempts
			errs += r.TotalErrors()
			p99s = append(p99s, r.Ops[results.OpAcquire].LatencyUS.P99)
			tputs = append(tputs, r.Throughput.AcquiredPerS)
			if gap, _, ok := results.LongestGap(r.Series, r.DurationS); ok {
				vv.GapsS = append(vv.GapsS, gap)
			}
			if ctx.Err() != nil {
				v.Variants = append(v.Variants, vv)
				return v, ctx.Err()
			}
		}
		if attempts > 0 {
			vv.ErrorShare = float64(errs) / float64(attempts)
		}
		vv.AcquireP99US, vv.AcquiredPerS = results.Median(p99s), results.Median(tputs)
		s.estimate(&vv)
		v.Variants = append(v.Variants, vv)
	}
	return v, nil
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

// boundTarget is the upper bound a clean variant's trials should bring its
// violation rate under; the verdict says how many trials that takes.
const boundTarget = 0.10

// Statement is the variant's verdict in words: its violation rate over its
// conclusive trials with the 95% interval, the trials a clean variant needs
// to bound it under 10%, what made trials inconclusive, and a mitigation
// that was safe only by granting nothing after the fault.
func (s Scenario) Statement(vv VariantVerdict) string {
	if s.violated == nil {
		return ""
	}
	st := vv.Variant.Name + ": violated in " + vv.Rate.String(s.per())
	if vv.Violated == 0 && vv.Rate.High >= boundTarget {
		st += fmt.Sprintf("; %d conclusive trials would bound it under %.0f%%", verdict.TrialsToBound(boundTarget), 100*boundTarget)
	}
	if n := len(vv.Trials) - vv.Conclusive; n > 0 {
		st += fmt.Sprintf("; %d inconclusive (%s)", n, whyInconclusive(vv.Trials))
	}
	if vv.IdleAfterFault {
		st += fmt.Sprintf("; it granted nothing after %s: safe only by being unavailable", s.exposure.what)
	}
	return st
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
	fmt.Fprintln(w, "verdict (violation rate over conclusive trials, 95% interval):")
	for _, vv := range v.Variants {
		fmt.Fprintf(w, "  %s\n", s.Statement(vv))
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
