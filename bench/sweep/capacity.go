package sweep

import (
	"context"
	"fmt"
	"io"
	"strconv"

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
	// P99US is the acquire p99.
	P99US float64 `json:"acquire_p99_us"`
	// MetSLO is true when every SLO held.
	MetSLO bool `json:"met_slo"`
	// Broken lists the SLOs that failed.
	Broken []string `json:"broken,omitempty"`
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
		s := stepOf(load, r, slo)
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
		if ramp.OpenLoop && s.Throughput < 0.9*load {
			c.Stop = fmt.Sprintf("achieved %.0f/s of %.0f/s offered: saturated", s.Throughput, load)
			break
		}
	}
	if c.Stop == "" {
		c.Stop = fmt.Sprintf("reached the ramp's maximum load %s without saturating", formatLoad(ramp.Max))
	}
	c.Saturation, c.Knee = saturation(c.Steps), knee(c.Steps)
	return c, nil
}

func nextLoad(load, factor float64) float64 {
	next := load * factor
	if next < load+1 {
		next = load + 1
	}
	return float64(int64(next + 0.5))
}

func formatLoad(l float64) string { return strconv.FormatFloat(l, 'f', -1, 64) }

func stepOf(load float64, r *results.Result, slo []results.Assertion) Step {
	s := Step{Load: load, RunID: r.ID, Throughput: r.Throughput.AcquiredPerS, P99US: r.Ops[results.OpAcquire].LatencyUS.P99, MetSLO: true}
	for _, a := range slo {
		v, err := a.Measure(r)
		if err != nil || !a.Holds(v) {
			s.MetSLO = false
			s.Broken = append(s.Broken, fmt.Sprintf("%s: %s", a.Expr, strconv.FormatFloat(v, 'g', 4, 64)))
		}
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

// WriteCapacity prints each search's steps and its verdict.
func WriteCapacity(w io.Writer, cs []Capacity, loadName string) error {
	for _, c := range cs {
		fmt.Fprintf(w, "%s\n", c.Label)
		t := results.NewTable(w, loadName, "acq/s", "acquire p99", "SLO", "run")
		for _, s := range c.Steps {
			verdict := "met"
			if !s.MetSLO {
				verdict = "broken: " + s.Broken[0]
			}
			mark := ""
			if c.Knee != nil && s.RunID == c.Knee.RunID {
				mark = " (knee)"
			}
			_ = t.Append(formatLoad(s.Load)+mark, fmt.Sprintf("%.0f", s.Throughput), results.FormatUS(s.P99US), verdict, s.RunID)
		}
		if err := t.Render(); err != nil {
			return err
		}
		if c.Saturation != nil {
			fmt.Fprintf(w, "saturation: %.0f acquisitions/s at %s %s, meeting the SLO; knee at %s %s; stopped: %s\n\n",
				c.Saturation.Throughput, loadName, formatLoad(c.Saturation.Load), loadName, kneeLoad(c), c.Stop)
		} else {
			fmt.Fprintf(w, "saturation: no load level met the SLO; stopped: %s\n\n", c.Stop)
		}
	}
	return nil
}

func kneeLoad(c Capacity) string {
	if c.Knee == nil {
		return "-"
	}
	return formatLoad(c.Knee.Load)
}
