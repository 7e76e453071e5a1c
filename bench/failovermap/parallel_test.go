package failovermap

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

// TestParallelSameMap: failovers side by side give the map one at a time
// gives, cell by cell and failover by failover in their order, whichever
// finished first. Each planted failover's double grants follow from its
// label (the second of each cell has two), and the runner makes the
// later-started failovers finish first.
func TestParallelSameMap(t *testing.T) {
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0, 500 * time.Millisecond}, Holds: []time.Duration{5 * time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	maps := map[int]string{}
	for _, parallel := range []int{1, 2} {
		p, err := NewPlan(axes, 3, time.Hour, t.TempDir(), "7.0.15")
		if err != nil {
			t.Fatal(err)
		}
		p.SetParallel(parallel)
		if p.PerCell != 3 || len(p.Cells) != 2 {
			t.Fatalf("--parallel %d: plan of %d cells × %d", parallel, len(p.Cells), p.PerCell)
		}
		var mu sync.Mutex
		running, most := 0, 0
		run := func(_ context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			label := v.Get("label")
			if strings.HasSuffix(label, "failover 1") {
				// The first of a round ends last.
				time.Sleep(20 * time.Millisecond)
			}
			doubles := int64(0)
			if strings.HasSuffix(label, "failover 2") {
				doubles = 2
			}
			r := planted(label, 4, 3, doubles, 6)
			mu.Lock()
			running--
			mu.Unlock()
			return r, nil
		}
		m := Run(context.Background(), p, Deps{Deps: advise.Deps{Run: run}})
		if most > parallel {
			t.Errorf("--parallel %d: %d failovers at once", parallel, most)
		}
		for _, cr := range m.Cells {
			for n, f := range cr.Failovers {
				if want := Label(cr.Cell, n+1); f.RunID != want || f.Status != statusMeasured {
					t.Errorf("--parallel %d: %s failover %d is %s (%s), want %s measured", parallel, cr.Cell, n+1, f.RunID, f.Status, want)
				}
			}
		}
		b, err := json.Marshal(m.Cells)
		if err != nil {
			t.Fatal(err)
		}
		maps[parallel] = string(b)
	}
	if maps[1] != maps[2] {
		t.Errorf("--parallel 2 gave another map:\n%s\n--parallel 1:\n%s", maps[2], maps[1])
	}
}

// TestSetParallelFitsMore: failovers side by side fit more of them into a
// budget, and the estimate is their wall time.
func TestSetParallelFitsMore(t *testing.T) {
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0}, Holds: []time.Duration{5 * time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 100, 5*time.Minute, t.TempDir(), "7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	one, est := p.PerCell, p.Estimate
	p.SetParallel(2)
	if p.PerCell < 2*one-1 || p.Estimate > est*2 || p.Parallel != 2 {
		t.Errorf("--parallel 2: %d per cell in %v, against %d in %v one at a time", p.PerCell, p.Estimate, one, est)
	}
	p.SetParallel(1)
	if p.PerCell != one || p.Estimate != est || p.Parallel != 0 {
		t.Errorf("back to one at a time: %d per cell in %v, want %d in %v", p.PerCell, p.Estimate, one, est)
	}
}
