package sweep

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// Ramp says how a capacity search raises the load.
type Ramp struct {
	// Start is the first load (concurrency, or requests/s in open loop).
	Start float64
	// Max is the highest load tried.
	Max float64
	// Factor multiplies the load each step (2 doubles it).
	Factor float64
	// MinGain is the relative throughput gain below which a step counts as
	// flat (0.05: under 5 % more throughput for twice the load).
	MinGain float64
	// Patience is how many flat steps in a row end the search, so one noisy
	// step does not (default 2).
	Patience int
	// OpenLoop ramps --rate instead of --concurrency.
	OpenLoop bool
}

// LatencyOp is the operation whose latency a ramp's SLO reads: the
// caller's wait, by the rulebook (verdict.WaitOp), in either loop.
func (r Ramp) LatencyOp() string { return verdict.WaitOp }

// DefaultRamp doubles concurrency from 1 to 128: eight steps, sized so that a
// two-topology search fits in a few minutes on a small machine.
func DefaultRamp() Ramp {
	return Ramp{Start: 1, Max: 128, Factor: 2, MinGain: 0.05, Patience: 2}
}

// Validate reports the first setting that cannot work.
func (r Ramp) Validate() error {
	switch {
	case r.Start <= 0 || r.Max < r.Start:
		return fmt.Errorf("ramp from %v to %v: want 0 < start ≤ max", r.Start, r.Max)
	case r.Factor <= 1:
		return fmt.Errorf("ramp factor %v: want more than 1", r.Factor)
	}
	return nil
}

// Step is one load level of a capacity search.
type Step struct {
	// Load is the concurrency (or rate) of the step.
	Load float64 `json:"load"`
	// RunID is the stored result.
	RunID string `json:"run"`
	// Throughput is acquisitions/s.
	Throughput float64 `json:"acquired_per_s"`
	// LatencyOp is the operation whose p99 the step reports and a bare pNN
	// SLO reads: time_to_acquire (verdict.WaitOp), the caller's wait, retries
	// included; in open loop from each request's intended start, so queueing
	// in the generator counts. Steps stored before it read acquire in closed
	// loop.
	LatencyOp string `json:"latency_op"`
	// P99US is LatencyOp's p99.
	P99US float64 `json:"p99_us"`
	// Offered, Served and Dropped are the open-loop requests of the window:
	// scheduled, started, and never started before it closed.
	Offered int64 `json:"offered,omitempty"`
	Served  int64 `json:"served,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
	// MetSLO is true when every SLO held.
	MetSLO bool `json:"met_slo"`
	// Broken lists the SLOs that failed.
	Broken []string `json:"broken,omitempty"`
	// CPU is what the step's run used of the generator's and the
	// servers' CPUs.
	CPU verdict.CPUUse `json:"cpu"`
	// Failures stand beside the step's rate: tries failed by kind,
	// give-ups, and in open loop served, late and dropped.
	Failures *verdict.Failures `json:"failures,omitempty"`
	// Limit is what bounded the step's run (verdict.LimitOf); nil in steps
	// stored before it was judged.
	Limit *verdict.Limit `json:"limit,omitempty"`
}

// Capacity is the outcome of a search on one topology.
type Capacity struct {
	// Label names what was searched (the topology).
	Label string `json:"label"`
	// Steps are the load levels run, in order.
	Steps []Step `json:"steps"`
	// Saturation is the step with the highest throughput that met the SLO.
	Saturation *Step `json:"saturation,omitempty"`
	// Knee is the step where throughput per unit of latency peaks
	// (Kleinrock's power), where more load starts to buy mostly queueing.
	Knee *Step `json:"knee,omitempty"`
	// Stop says why the search ended.
	Stop string `json:"stop"`
	// Limit says what bounded the throughput, judged at Saturation (at
	// the first step when none met the SLO).
	Limit *verdict.Limit `json:"limit,omitempty"`
}

// StepRunner runs one load level and returns its result.
type StepRunner func(ctx context.Context, load float64) (*results.Result, error)

// Search ramps the load until an SLO breaks, throughput stops growing for
// Patience steps, or the ramp's maximum is reached.
func Search(ctx context.Context, label string, ramp Ramp, slo []results.Assertion, run StepRunner) (Capacity, error) {
	if err := ramp.Validate(); err != nil {
		return Capacity{}, err
	}
	patience := max(1, ramp.Patience)
	c := Capacity{Label: label}
	best, flat := 0.0, 0
	for load := ramp.Start; load <= ramp.Max; load = nextLoad(load, ramp.Factor) {
		r, err := run(ctx, load)
		if err != nil {
			return c, fmt.Errorf("capacity %s at load %v: %w", label, load, err)
		}
		s := stepOf(load, r, slo, ramp)
		c.Steps = append(c.Steps, s)
		if !s.MetSLO {
			c.Stop = fmt.Sprintf("SLO broken at load %s (%s)", formatLoad(load), s.Broken[0])
			break
		}
		if best > 0 && s.Throughput < best*(1+ramp.MinGain) {
			flat++
		} else {
			flat = 0
		}
		best = max(best, s.Throughput)
		if flat >= patience {
			c.Stop = fmt.Sprintf("throughput stopped growing (under %.0f%% gain for %d steps)", ramp.MinGain*100, patience)
			break
		}
	}
	if c.Stop == "" {
		c.Stop = fmt.Sprintf("reached the ramp's maximum load %s without saturating", formatLoad(ramp.Max))
	}
	c.Saturation, c.Knee = saturation(c.Steps), knee(c.Steps)
	c.Limit = limitOf(c)
	return c, nil
}

// limitOf judges what bounded a search: at its saturation step, or at its
// first step when none met the SLO; nil without steps.
func limitOf(c Capacity) *verdict.Limit {
	at := c.Saturation
	if at == nil && len(c.Steps) > 0 {
		at = &c.Steps[0]
	}
	if at == nil {
		return nil
	}
	if at.Limit != nil {
		return at.Limit
	}
	v := verdict.JudgeCPU(at.CPU)
	return &v
}

func nextLoad(load, factor float64) float64 {
	next := load * factor
	if next < load+1 {
		next = load + 1
	}
	return float64(int64(next + 0.5))
}

func formatLoad(l float64) string { return strconv.FormatFloat(l, 'f', -1, 64) }

// StepOf judges one run at one load as a capacity search judges its steps:
// its throughput, its latency op's p99 and whether every SLO held (in open
// loop, also whether it served what was offered). advise judges each
// candidate's run at the stated demand with it.
func StepOf(load float64, r *results.Result, slo []results.Assertion, openLoop bool) Step {
	return stepOf(load, r, slo, Ramp{OpenLoop: openLoop})
}

func stepOf(load float64, r *results.Result, slo []results.Assertion, ramp Ramp) Step {
	j := verdict.JudgeSLO(r, slo, ramp.OpenLoop)
	limit := verdict.LimitOf(r)
	s := Step{Load: load, RunID: r.ID, Throughput: r.Throughput.AcquiredPerS, LatencyOp: j.Op, P99US: j.P99US, MetSLO: j.Met(), Broken: j.Broken,
		CPU: verdict.CPUUseOf(r), Failures: &j.Failures, Limit: &limit}
	if ramp.OpenLoop {
		s.Offered, s.Served, s.Dropped = j.Failures.Scheduled, j.Failures.Served, j.Failures.Dropped
	}
	return s
}

func saturation(steps []Step) *Step {
	var best *Step
	for i := range steps {
		if s := &steps[i]; s.MetSLO && (best == nil || s.Throughput > best.Throughput) {
			best = s
		}
	}
	return best
}

func knee(steps []Step) *Step {
	var best *Step
	bestPower := 0.0
	for i := range steps {
		s := &steps[i]
		if !s.MetSLO || s.P99US <= 0 {
			continue
		}
		if p := s.Throughput / s.P99US; best == nil || p > bestPower {
			best, bestPower = s, p
		}
	}
	return best
}
