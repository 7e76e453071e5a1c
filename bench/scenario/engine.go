package scenario

import (
	"fmt"

	"github.com/lockbench/lockbench/bench/plan"
)

// TrialFlags are the run flags of trial n (from 1) of variant i: the
// scenario's base, the variant's own on top, and the trial's label. Every
// engine runs a trial from them: this machine's pool, a Swarm task, a pod.
func (s Scenario) TrialFlags(i, n int) plan.Values {
	flags := s.Base.Clone()
	for k, val := range s.Variants[i].Flags {
		flags[k] = append([]string(nil), val...)
	}
	flags.Set("label", TrialLabel(s, s.Variants[i].Name, n))
	return flags
}

// PlannedTrials is how many trials Run plans for trials a variant: one
// index each for an Indexed Job (k8s), in Run's order.
func (s Scenario) PlannedTrials(trials int) int { return trials * len(s.Variants) }

// PlannedTrial is the variant and the trial number (from 1) of planned
// trial k (from 0) in Run's order, variant by variant, so that index k of
// an Indexed Job runs the trial Run would have run k-th.
func (s Scenario) PlannedTrial(trials, k int) (variant, n int, err error) {
	if total := s.PlannedTrials(trials); trials < 1 || k < 0 || k >= total {
		return 0, 0, fmt.Errorf("trial index %d: want 0 to %d (%d variants × %d trials)", k, max(0, total-1), len(s.Variants), trials)
	}
	return k / trials, k%trials + 1, nil
}
