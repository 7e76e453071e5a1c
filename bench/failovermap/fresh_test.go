package failovermap

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

// freshTestPlan is two cells of single without WAIT on replicated, two
// failovers each: cells that run in succession unless made fresh.
func freshTestPlan(t *testing.T) Plan {
	t.Helper()
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0, 500 * time.Millisecond}, Holds: []time.Duration{time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 2, time.Hour, t.TempDir(), "7.0.15")
	if err != nil || len(p.Cells) != 2 || p.PerCell != 2 {
		t.Fatalf("plan %+v, %v", p, err)
	}
	return p
}

// storedAs is a stored result of run flags v, as a run of them records
// its label and resolved configuration.
func storedAs(t *testing.T, id string, v plan.Values) *results.Result {
	t.Helper()
	resolved, err := plan.Resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Parse(resolved)
	if err != nil {
		t.Fatal(err)
	}
	r := planted(id, 4, 3, 0, 6)
	r.Label, r.Config = v.Get("label"), resolved.Config()
	r.Config["keys"] = pl.Workload.Keys.String()
	return r
}

// A fresh plan's failovers each restart the dead primary inside their own
// window (a successive one's restore follows its run), and the planned
// failovers are numbered round by round, as Run runs them.
func TestSetFreshAndPlannedFailovers(t *testing.T) {
	p := freshTestPlan(t)
	successive := strings.Join(p.Cells[0].Values(p.spec, p.Axes.WaitTimeout)["fault"], ";")
	p.SetFresh()
	fresh := strings.Join(p.Cells[0].Values(p.spec, p.Axes.WaitTimeout)["fault"], ";")
	if strings.Contains(successive, "restart") || !strings.Contains(fresh, "restart node=0") || !p.Cells[0].Fresh || p.Cells[0].Successive(p.spec) {
		t.Fatalf("faults %q then %q: want the restart only on a fresh topology", successive, fresh)
	}
	if p.Planned() != 4 {
		t.Fatalf("planned %d: want 4", p.Planned())
	}
	for k, want := range []string{"lag=0s hold=1s / failover 1", "lag=500ms hold=1s / failover 1", "lag=0s hold=1s / failover 2", "lag=500ms hold=1s / failover 2"} {
		_, _, v, err := p.PlannedFailover(k)
		if err != nil || !strings.HasSuffix(v.Get("label"), want) || v.Get("out") != p.Out {
			t.Errorf("failover %d: label %q out %q, %v: want …%s", k, v.Get("label"), v.Get("out"), err, want)
		}
	}
	for _, k := range []int{-1, 4} {
		if _, _, _, err := p.PlannedFailover(k); err == nil || !strings.Contains(err.Error(), "want 0 to 3") {
			t.Errorf("failover %d: %v, want refused naming 0 to 3", k, err)
		}
	}
}

// StoredOnlyFresh is true only where every stored failover of a planned
// cell ran on a fresh topology and the plan would run them in succession:
// there --resume would reuse nothing.
func TestStoredOnlyFresh(t *testing.T) {
	p := freshTestPlan(t)
	f := freshTestPlan(t)
	f.SetFresh()
	freshRun := storedAs(t, "fresh", f.failoverValues(f.Cells[0], 1))
	successiveRun := storedAs(t, "successive", p.failoverValues(p.Cells[0], 1))
	other := storedAs(t, "other", plan.Values{"label": {"another command"}, "lock": {"single"}})
	for name, tc := range map[string]struct {
		plan   Plan
		stored []*results.Result
		want   bool
	}{
		"fresh only":            {p, []*results.Result{freshRun, other}, true},
		"both":                  {p, []*results.Result{freshRun, successiveRun}, false},
		"successive only":       {p, []*results.Result{successiveRun}, false},
		"nothing of this map":   {p, []*results.Result{other}, false},
		"the plan is fresh too": {f, []*results.Result{freshRun}, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.plan.StoredOnlyFresh(tc.stored); got != tc.want {
				t.Errorf("StoredOnlyFresh = %v, want %v", got, tc.want)
			}
		})
	}
}
