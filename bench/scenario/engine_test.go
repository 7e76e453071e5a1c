package scenario

import (
	"testing"
)

// Index k of an Indexed Job runs the trial Run plans k-th: variant by
// variant, trials numbered from 1, and an index out of the plan refused.
func TestPlannedTrial(t *testing.T) {
	s := plantedRecipe() // two variants
	for _, tc := range []struct {
		trials, k, variant, n int
		bad                   bool
	}{
		{trials: 3, k: 0, variant: 0, n: 1},
		{trials: 3, k: 2, variant: 0, n: 3},
		{trials: 3, k: 3, variant: 1, n: 1},
		{trials: 3, k: 5, variant: 1, n: 3},
		{trials: 3, k: 6, bad: true},
		{trials: 3, k: -1, bad: true},
		{trials: 0, k: 0, bad: true},
	} {
		variant, n, err := s.PlannedTrial(tc.trials, tc.k)
		switch {
		case tc.bad && err == nil:
			t.Errorf("trials %d, index %d: (%d, %d), want a refusal", tc.trials, tc.k, variant, n)
		case !tc.bad && (err != nil || variant != tc.variant || n != tc.n):
			t.Errorf("trials %d, index %d: (%d, %d, %v), want (%d, %d)", tc.trials, tc.k, variant, n, err, tc.variant, tc.n)
		}
	}
	if got := s.PlannedTrials(3); got != 6 {
		t.Errorf("PlannedTrials(3) = %d, want 6", got)
	}
	flags := s.TrialFlags(1, 2)
	if flags.Get("label") != TrialLabel(s, s.Variants[1].Name, 2) || flags.Get("lock") != "single" || flags.Get("duration") != "2s" {
		t.Errorf("TrialFlags(1, 2) = %v: want the base, the variant's flags and the trial's label", flags)
	}
}
