package failovermap

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// TestGrantRateDecides: the default grid's largest cell (500 ms of lag,
// 3 s holds) at the planned grant rate predicts at least 3 double grants
// per failover with the outage measured here (≈ 3 s), so ten failovers
// tell it from 0; the keys follow the hold within their bounds.
func TestGrantRateDecides(t *testing.T) {
	hold := 3 * time.Second
	lo, hi := holdRange(hold)
	got := Predict(PredictInput{RatePerS: float64(keysOf(hold)) / hold.Seconds(), Lag: 500 * time.Millisecond,
		Unavailable: 3 * time.Second, HoldLo: lo, HoldHi: hi, TTL: ttlOf(hold)})
	if got < 3 {
		t.Errorf("the largest cell predicts %.2f double grants per failover, want at least 3", got)
	}
	for _, tt := range []struct {
		hold time.Duration
		keys int
	}{{time.Millisecond, minKeys}, {100 * time.Millisecond, minKeys}, {time.Second, 40}, {3 * time.Second, 120}, {time.Minute, maxKeys}} {
		if k := keysOf(tt.hold); k != tt.keys || workersOf(tt.hold) != waitersPerKey*k {
			t.Errorf("hold %v: %d keys, %d workers; want %d keys", tt.hold, k, workersOf(tt.hold), tt.keys)
		}
	}
}

// TestSuccessiveValues: on replicated without WAIT a failover's run has no
// restart fault (the restore follows the run) and a window that ends once
// the promotion came and the holders around the kill left; with WAIT, or on
// a cluster, each failover keeps its fresh topology and in-window restart.
func TestSuccessiveValues(t *testing.T) {
	spec := replicated(t)
	cluster, err := ParseTopology("cluster:3,1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		c          Cell
		spec       compose.Spec
		successive bool
		window     time.Duration
	}{
		{"replicated, none, 3s holds", Cell{Lock: "single", Mitigation: None, Lag: 500 * time.Millisecond, Hold: 3 * time.Second}, spec, true, 7 * time.Second},
		{"replicated, none, 100ms holds: the promotion bounds it", Cell{Lock: "single", Mitigation: None, Hold: 100 * time.Millisecond}, spec, true, 6500 * time.Millisecond},
		{"replicated, wait", Cell{Lock: "single", Mitigation: Wait, Hold: time.Second}, spec, false, 0},
		{"cluster, none", Cell{Lock: "single", Mitigation: None, Hold: time.Second}, cluster, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Successive(tt.spec); got != tt.successive {
				t.Fatalf("Successive = %v, want %v", got, tt.successive)
			}
			v := tt.c.Values(tt.spec, 100*time.Millisecond)
			restart := slices.ContainsFunc(v["fault"], func(f string) bool { return strings.Contains(f, "restart") })
			if restart == tt.successive {
				t.Errorf("faults %q: a restart in the window %v, want %v", v["fault"], restart, !tt.successive)
			}
			if tt.window > 0 && timingOf(tt.c, tt.spec).Window != tt.window {
				t.Errorf("window %v, want %v", timingOf(tt.c, tt.spec).Window, tt.window)
			}
			if v.Get("keys") != fmt.Sprintf("uniform:%d", keysOf(tt.c.Hold)) {
				t.Errorf("keys %q", v.Get("keys"))
			}
			if _, err := plan.Expand(withOut(v)); err != nil {
				t.Errorf("the run flags do not parse: %v", err)
			}
		})
	}
}

func withOut(v plan.Values) plan.Values {
	v = v.Clone()
	v.Set("out", "runs")
	return v
}

// TestAgreement: the one function behind the map's agree and disagree.
func TestAgreement(t *testing.T) {
	rate := func(k int64, n float64) *verdict.CountRate {
		r, ok := verdict.PoissonRate(k, n)
		if !ok {
			t.Fatalf("PoissonRate(%d, %v)", k, n)
		}
		return &r
	}
	x := func(f float64) *float64 { return &f }
	tests := []struct {
		name      string
		measured  *verdict.CountRate
		predicted *float64
		want      string
	}{
		{"the interval holds the prediction", rate(30, 10), x(3.5), Agree},
		{"the prediction above the interval", rate(5, 10), x(4), Disagree},
		{"the prediction below the interval", rate(40, 10), x(1), Disagree},
		{"0 of 10 against 0.2: the interval holds it", rate(0, 10), x(0.2), Agree},
		{"no conclusive failover", nil, x(1), Unjudged},
		{"no prediction", rate(3, 10), nil, Unjudged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Agreement(tt.measured, tt.predicted); got != tt.want {
				t.Errorf("Agreement = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSuccessiveAttribution: a chain of failovers on one topology is judged
// failover by failover, each from its own result: its exposure at its own
// kill, its own rate before it, its own double grants; one whose kill
// slipped is inconclusive and its double grants stay out of the cell's
// count, while the others' add up with their Poisson interval.
func TestSuccessiveAttribution(t *testing.T) {
	spec := replicated(t)
	c := Cell{Lock: "single", Mitigation: None, Lag: 500 * time.Millisecond, Hold: 5 * time.Second}
	chain := []*results.Result{planted("f1", 4, 3, 2, 6), planted("f2", 8, 3, 7, 9), planted("f3", 6, 3, 0, 5), planted("f4", 4, 3, 1, 4)}
	// The third's kill came 1.5 s late: a stalled machine.
	chain[2].Faults[1].AtS, chain[2].Faults[0].AtS = 3.5, 3
	var fs []Failover
	for i, r := range chain {
		f := readFailover(c, spec, r)
		f.Status, f.OnTopology = statusMeasured, i+1
		fs = append(fs, f)
	}
	for i, f := range fs {
		r := chain[i]
		if f.RunID != r.ID || f.DoubleGrants != r.Incidents.DoubleGrants || f.Exposure == nil ||
			*f.Exposure != int64(r.Faults[1].Exposure.Inside) || f.RatePerS == nil {
			t.Fatalf("failover %d read %+v from %s", i+1, f, r.ID)
		}
	}
	if *fs[1].RatePerS != 8 || *fs[0].RatePerS != 4 {
		t.Errorf("rates %v, %v: each failover's own", *fs[0].RatePerS, *fs[1].RatePerS)
	}
	if fs[2].Conclusive || !fs[0].Conclusive || !fs[1].Conclusive || !fs[3].Conclusive {
		t.Fatalf("conclusive: %v %v %v %v", fs[0].Conclusive, fs[1].Conclusive, fs[2].Conclusive, fs[3].Conclusive)
	}
	cr := summarise(c, 4, fs)
	want, _ := verdict.PoissonRate(2+7+1, 3)
	if cr.Conclusive != 3 || cr.PerFailover == nil || *cr.PerFailover != want {
		t.Fatalf("cell %d conclusive, %+v; want 3, %+v", cr.Conclusive, cr.PerFailover, want)
	}
	if cr.Exposure == nil || math.Abs(*cr.Exposure-19.0/3) > 1e-9 {
		t.Errorf("exposure %v, want the conclusive failovers' mean 19/3", cr.Exposure)
	}
}

// TestRigRefusesDirty: a topology whose state after a failover cannot be
// verified clean is not handed to the next failover; a fresh one is
// brought up, and the refusal is said once.
func TestRigRefusesDirty(t *testing.T) {
	spec := replicated(t)
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0}, Holds: []time.Duration{time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 3, time.Hour, t.TempDir(), "7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	ups, runs := 0, 0
	deps := Deps{
		Deps: advise.Deps{Run: func(context.Context, plan.Values, string, int) (*results.Result, error) {
			t.Error("a successive cell ran on a fresh topology of its own")
			return nil, nil
		}},
		// A topology of no kind: restore and verify fail on it, as on a
		// dirty one.
		Up: func(context.Context, compose.Spec) (*compose.Topology, error) {
			ups++
			return &compose.Topology{Spec: spec}, nil
		},
		On: func(*compose.Topology) sweep.Runner {
			return func(context.Context, plan.Values, string, int) (*results.Result, error) {
				runs++
				return planted(fmt.Sprintf("run-%d", runs), 40, 3, 0, 20), nil
			}
		},
	}
	m := Run(context.Background(), p, deps)
	if runs != 3 || ups != 3 || m.BringUps != 3 {
		t.Fatalf("%d runs on %d bring-ups (map says %d), want 3 on 3", runs, ups, m.BringUps)
	}
	if len(m.Refused) != 2 || !strings.Contains(m.Refused[0], "after run-1") {
		t.Errorf("refused %q, want one line after each of the first two", m.Refused)
	}
	for i, f := range m.Cells[0].Failovers {
		if f.OnTopology != 1 || f.Status != statusMeasured {
			t.Errorf("failover %d: %+v, want the first on its topology", i+1, f)
		}
	}
	if m.Measured != 3 || m.PerMinute == nil {
		t.Errorf("measured %d, per minute %v", m.Measured, m.PerMinute)
	}
}

// TestTopUp: a cell short of conclusive failovers gets more, up to as many
// again, while the budget lasts; a full cell gets none.
func TestTopUp(t *testing.T) {
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0, 500 * time.Millisecond}, Holds: []time.Duration{time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 2, time.Hour, t.TempDir(), "7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	run := func(_ context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		n++
		inside := 5
		if strings.Contains(v.Get("label"), "lag=500ms") && n < 6 {
			inside = 0 // nobody inside: inconclusive
		}
		return planted(fmt.Sprintf("r%d", n), 40, 3, 0, inside), nil
	}
	m := Run(context.Background(), p, Deps{Deps: advise.Deps{Run: run}})
	full, short := m.Cells[0], m.Cells[1]
	if len(full.Failovers) != 2 || full.Conclusive != 2 {
		t.Errorf("the full cell: %d failovers, %d conclusive; want 2, 2", len(full.Failovers), full.Conclusive)
	}
	if len(short.Failovers) != 4 || short.Conclusive != 1 {
		t.Errorf("the short cell: %d failovers, %d conclusive; want 4 (2 more), 1", len(short.Failovers), short.Conclusive)
	}
}
