// Package scenario reproduces the known failure modes of Redis locks as fixed
// recipes of topology, workload, faults and mitigations, runs each variant
// several times, and reports how often mutual exclusion broke.
package scenario

import (
	"context"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/suggest"
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
		etcdLeaderFailover(), etcdGCPause(), pgSessionLoss()}
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
}

// VariantVerdict is a variant's trials and their sums.
type VariantVerdict struct {
	Variant  Variant
	Trials   []Trial
	Violated int
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
			if t.Violated {
				vv.Violated++
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
		v.Variants = append(v.Variants, vv)
	}
	return v, nil
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
	t := results.NewTable(w, "variant", "mitig-\nated", "vio-\nlated", "double\ngrants", "over\nruns", "stale\naccepted", "fencing\nrejected",
		"failed\nattempts", "acq/s", "acquire\np99")
	for _, vv := range v.Variants {
		mit := "no"
		if vv.Variant.Mitigated {
			mit = "yes"
		}
		violated := "-"
		if s.violated != nil {
			violated = fmt.Sprintf("%d/%d", vv.Violated, len(vv.Trials))
		}
		_ = t.Append(vv.Variant.Name, mit, violated, vv.DoubleGrants, vv.Overruns, vv.StaleAccepted, vv.FencingRejected,
			fmt.Sprintf("%.1f%%", 100*vv.ErrorShare), fmt.Sprintf("%.0f", vv.AcquiredPerS), results.FormatUS(vv.AcquireP99US))
	}
	if err := t.Render(); err != nil || !s.Availability {
		return err
	}
	return writeAvailability(w, v)
}
