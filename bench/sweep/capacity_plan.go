package sweep

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// Loads a capacity search ramps: workers, or (open loop) requests per second.
const (
	LoadConcurrency = "concurrency"
	LoadRate        = "rate"
)

// Pipelined ramp: with --pipeline auto each worker is one request in
// flight, batched with the others, and a server's limit lies past a
// thousand of them, so the ramp of in-flight requests starts and ends
// higher than the default's (unless --start or --max say otherwise).
const (
	PipelinedStart = 16
	PipelinedMax   = 4096
)

// CapacityRamp picks what a capacity search ramps from the run flags given:
// the request rate when --rate is given (its value is the first step unless
// startSet, and the maximum 64 times the first unless maxSet), concurrency
// otherwise (with --pipeline auto from PipelinedStart to PipelinedMax,
// unless startSet and maxSet). It returns the ramp and the run flag it sets
// at each step.
func CapacityRamp(given plan.Values, ramp Ramp, startSet, maxSet bool) (Ramp, string, error) {
	load := LoadConcurrency
	if given.Get("pipeline") == "auto" && !given.Has("rate") {
		if !startSet {
			ramp.Start = PipelinedStart
		}
		if !maxSet {
			ramp.Max = max(PipelinedMax, ramp.Start)
		}
	}
	if given.Has("rate") {
		// The same forms run accepts (500, 50/100ms), but a ramp needs one
		// positive rate to multiply.
		rate, err := workloads.ParseRate("rate", given.Get("rate"))
		switch {
		case err != nil:
			return ramp, "", err
		case rate.Staged():
			return ramp, "", fmt.Errorf("--rate %q: capacity ramps the rate itself; give one constant rate to start from (e.g. --rate %s)", given.Get("rate"), formatLoad(max(rate.Start, 1)))
		case rate.Start <= 0:
			return ramp, "", fmt.Errorf("--rate %q: want a positive number of requests per second", given.Get("rate"))
		}
		load, ramp.OpenLoop = LoadRate, true
		if !startSet {
			ramp.Start = rate.Start
		}
		if !maxSet {
			ramp.Max = 64 * ramp.Start
		}
	}
	if err := ramp.Validate(); err != nil {
		return ramp, "", fmt.Errorf("capacity: %w", err)
	}
	return ramp, load, nil
}

// CapacitySearch is a capacity search on each of several topologies: the
// same ramp, the same SLOs, every step an ordinary stored run.
type CapacitySearch struct {
	// Given are the run flags (with the command's own defaults); each
	// --topology is searched in turn (single when none).
	Given plan.Values
	// Ramp and LoadFlag say which run flag each step sets, and to what.
	Ramp     Ramp
	LoadFlag string
	// SLO are the service levels a step must keep.
	SLO []results.Assertion
	// Run executes and stores one step's run.
	Run Runner
	// OnStep, when set, is told of each step before it runs.
	OnStep func(topology, load string)
}

// Search runs the search on every topology and returns one Capacity per
// topology searched and every step's result. Every topology's flags are
// checked first, so bad input is refused before any run.
// When ctx ends, the topology being searched keeps the steps that ran,
// stopped as "interrupted", and the search returns without an error.
func (s CapacitySearch) Search(ctx context.Context) ([]Capacity, []*results.Result, error) {
	topologies := s.Given["topology"]
	if len(topologies) == 0 {
		topologies = []string{"single"}
	}
	seen := map[string]string{}
	for _, topo := range topologies {
		ps, err := plan.Expand(s.valuesFor(topo))
		if err != nil {
			return nil, nil, err
		}
		// Searched twice, it would be reported as two (capacity has no
		// --count to repeat a search).
		if err := plan.RefuseRepeatedTopology(seen, ps[0], topo, ""); err != nil {
			return nil, nil, err
		}
	}
	var caps []Capacity
	var all []*results.Result
	for _, topo := range topologies {
		v := s.valuesFor(topo)
		step := func(ctx context.Context, load float64) (*results.Result, error) {
			sv := v.Clone()
			text := strconv.FormatFloat(load, 'f', -1, 64)
			sv.Set(s.LoadFlag, text)
			// Each step is named by where it stands, after the search's own
			// --label, as a sweep's cells are: lists and report legends then
			// tell the steps apart without their ids.
			sv.Set("label", strings.TrimSpace(s.Given.Get("label")+" "+topo+" "+s.LoadFlag+"="+text))
			if s.OnStep != nil {
				s.OnStep(topo, text)
			}
			r, err := s.Run(ctx, sv, "", 0)
			if err == nil {
				all = append(all, r)
			}
			return r, err
		}
		cp, err := Search(ctx, topo, s.Ramp, s.SLO, step)
		if ctx.Err() != nil {
			if len(cp.Steps) > 0 {
				cp.Stop = "interrupted"
				caps = append(caps, cp)
			}
			break
		}
		if err != nil {
			return caps, all, err
		}
		caps = append(caps, cp)
	}
	return caps, all, nil
}

// valuesFor is the run flags of the search on one topology.
func (s CapacitySearch) valuesFor(topo string) plan.Values {
	v := s.Given.Clone()
	v.Set("topology", topo)
	return v
}
