package scenario

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

// plantedRecipe is a recipe whose answers follow from first principles, with
// margins no loaded machine closes: the naive lock's release by GET then
// DEL deletes the next holder's lease (naive-release-race: harm in every
// trial), and single with a 5 s TTL, holds of 20 ms and no fault cannot
// grant a key twice (its key outlives every holder by seconds: no harm).
// naive-release's own mitigated variant, at a 100 ms TTL, is a matter of
// timing on a machine loaded past its cores (the race detector's, say).
func plantedRecipe() Scenario {
	return Scenario{
		Name:      "planted",
		Violation: "double grants",
		violated:  doubleGrants,
		Base:      vals("duration", "2s", "warmup", "0"),
		Variants: []Variant{
			{Name: "naive GET+DEL", Flags: vals("workload", "naive-release-race", "duration", "3s")},
			{Name: "single, no fault", Mitigated: true, Flags: vals("lock", "single", "keys", "uniform:2", "concurrency", "4",
				"ttl", "5s", "hold", "const:20ms", "retry", "fixed:5ms", "acquire-timeout", "10s")},
		},
	}
}

// TestParallelGivesTheSameVerdicts runs the planted recipe with two trials
// at once and one at a time, on real servers: the same words, the naive
// variant violated and single never, the trials numbered 1..n in order,
// and no server left behind.
func TestParallelGivesTheSameVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real trials")
	}
	s := plantedRecipe()
	words := map[int][]string{}
	for _, parallel := range []int{1, 2} {
		v, err := Run(context.Background(), s, Options{Trials: 2, Parallel: parallel}, execute)
		if err != nil {
			t.Fatalf("--parallel %d: %v", parallel, err)
		}
		if left := redisChildren(); len(left) > 0 {
			t.Fatalf("--parallel %d: redis processes left behind: %v", parallel, left)
		}
		for _, vv := range v.Variants {
			words[parallel] = append(words[parallel], vv.Variant.Name+": "+vv.Word())
			switch {
			case vv.Variant.Mitigated && vv.Violated > 0:
				t.Errorf("--parallel %d, %s: violated in %d trials", parallel, vv.Variant.Name, vv.Violated)
			case !vv.Variant.Mitigated && vv.Violated == 0:
				t.Errorf("--parallel %d, %s: no violation", parallel, vv.Variant.Name)
			}
			var labels []string
			for _, tr := range vv.Trials {
				labels = append(labels, tr.Result.Label)
			}
			want := []string{TrialLabel(s, vv.Variant.Name, 1), TrialLabel(s, vv.Variant.Name, 2)}
			if !slices.Equal(labels, want) {
				t.Errorf("--parallel %d, %s: trials %q, want %q", parallel, vv.Variant.Name, labels, want)
			}
		}
	}
	if !slices.Equal(words[1], words[2]) {
		t.Errorf("--parallel 2 says %q, --parallel 1 %q", words[2], words[1])
	}
}

// TestParallelCtrlCKeepsFinishedTrials: Ctrl-C while trials run side by
// side keeps every trial that finished, in trial order, and starts none
// after it.
func TestParallelCtrlCKeepsFinishedTrials(t *testing.T) {
	s, _ := Lookup(quickScenario)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var ran []string
	// Trial 3 of the first variant is Ctrl-C: it returns cancelled; a
	// trial running beside it finishes.
	run := func(ctx context.Context, v plan.Values) (*results.Result, error) {
		label := v.Get("label")
		mu.Lock()
		ran = append(ran, label)
		mu.Unlock()
		switch label {
		case TrialLabel(s, s.Variants[0].Name, 3):
			cancel()
			return nil, fmt.Errorf("interrupted: %w", ctx.Err())
		case TrialLabel(s, s.Variants[0].Name, 4):
			// Beside trial 3: it ends after the Ctrl-C, and is kept.
			<-ctx.Done()
		}
		return &results.Result{ID: label, Label: label, Ops: map[string]results.OpSummary{}}, nil
	}
	v, err := Run(ctx, s, Options{Trials: 4, Parallel: 2}, run)
	if err != context.Canceled {
		t.Fatalf("err %v, want the context's", err)
	}
	if len(v.Variants) != 1 {
		t.Fatalf("%d variants in the verdict, want the one begun", len(v.Variants))
	}
	var kept []string
	for _, tr := range v.Variants[0].Trials {
		kept = append(kept, tr.Result.ID)
	}
	var want []string
	for _, label := range ran {
		if label != TrialLabel(s, s.Variants[0].Name, 3) {
			want = append(want, label)
		}
	}
	slices.Sort(want)
	if !slices.Equal(kept, want) || len(ran) > 4 {
		t.Errorf("kept %q of the trials run %q, want every one that finished", kept, ran)
	}
}
