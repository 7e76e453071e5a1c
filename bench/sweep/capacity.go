package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/lockbench/lockbench/bench"
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

// MinServedShare is the share of its offered requests an open-loop step must
// serve, dropping none that was already late, to count as keeping up: below
// it the generator or the lock is saturated, whatever its percentiles say.
const MinServedShare = 0.95

// edgeDrops is how many of a step's requests may go unstarted at the
// window's close without proving it saturated: those intended in its last
// late threshold (bench.DefaultLateThreshold), which were not yet late when
// it closed (a timer firing a little late on a busy machine leaves one
// behind at any rate). A step that dropped more dropped at least one request
// that was already late.
func edgeDrops(offered int64, durationS float64) int64 {
	if durationS <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(offered) / durationS * bench.DefaultLateThreshold.Seconds()))
}

// LatencyOp is the operation whose latency a ramp's SLO reads.
func (r Ramp) LatencyOp() string {
	if r.OpenLoop {
		return results.OpTimeToAcquire
	}
	return results.OpAcquire
}

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
	// SLO reads: acquire in closed loop, time_to_acquire in open loop (from
	// each request's intended start, so queueing in the generator counts).
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
	CPU CPUUse `json:"cpu"`
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
	Limit *Verdict `json:"limit,omitempty"`
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
func limitOf(c Capacity) *Verdict {
	at := c.Saturation
	if at == nil && len(c.Steps) > 0 {
		at = &c.Steps[0]
	}
	if at == nil {
		return nil
	}
	v := Judge(at.CPU)
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
	op := ramp.LatencyOp()
	s := Step{Load: load, RunID: r.ID, Throughput: r.Throughput.AcquiredPerS, LatencyOp: op, P99US: r.Ops[op].LatencyUS.P99, MetSLO: true, CPU: cpuUse(r)}
	for _, a := range slo {
		a = a.For(op)
		v, err := a.Measure(r)
		if err != nil || !a.Holds(v) {
			s.MetSLO = false
			s.Broken = append(s.Broken, fmt.Sprintf("%s: %s", a.Expr, formatMeasured(a, v, err)))
		}
	}
	if ramp.OpenLoop {
		c := r.Counters
		s.Offered, s.Served, s.Dropped = c.Scheduled, c.Served, c.Dropped
		if c.Dropped > edgeDrops(c.Scheduled, r.DurationS) || float64(c.Served) < MinServedShare*float64(c.Scheduled) {
			s.MetSLO = false
			s.Broken = append([]string{fmt.Sprintf("saturated: served %d of %d offered, %d dropped", c.Served, c.Scheduled, c.Dropped)}, s.Broken...)
		}
	}
	return s
}

// formatMeasured renders what an SLO read, in its unit, or why it could not.
func formatMeasured(a results.Assertion, v float64, err error) string {
	if err != nil {
		return err.Error()
	}
	if a.IsLatency() {
		return results.FormatUS(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
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
