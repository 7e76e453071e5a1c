package failovermap

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/longtest"
	"github.com/lockbench/lockbench/results"
)

// execute runs one failover on real servers (redis-server, sentinels on
// free loopback ports, started and stopped by the run).
func execute(ctx context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
	v = v.Clone()
	v.Set("quiet", "true")
	plans, err := plan.Expand(v)
	if err != nil {
		return nil, err
	}
	return plan.Execute(ctx, plans[0], plan.Env{})
}

// executeOn runs one failover on a topology kept up between failovers,
// keeping each result by its id.
func executeOn(got map[string]*results.Result) func(*compose.Topology) sweep.Runner {
	return func(topo *compose.Topology) sweep.Runner {
		return func(ctx context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
			v = v.Clone()
			v.Set("quiet", "true")
			plans, err := plan.Expand(v)
			if err != nil {
				return nil, err
			}
			r, err := plan.Execute(ctx, plans[0], plan.Env{Topology: topo})
			if r != nil {
				got[r.ID] = r
			}
			return r, err
		}
	}
}

// TestSuccessiveFailoversAttributed: three failovers of one cell follow one
// another on one replicated topology (one bring-up, the state verified clean
// before each next one, none refused), and each is judged from its own run:
// its double grants are its result's, and the cell's count is theirs added
// up. At 500 ms of lag and 3 s holds the cell predicts several double
// grants a failover, so the chain shows some.
//
// On today's main each failover brought up its own topology, and no map
// said how many it used.
func TestSuccessiveFailoversAttributed(t *testing.T) {
	longtest.Waiting(t)
	axes := Axes{Topology: "replicated", Lags: []time.Duration{500 * time.Millisecond}, Holds: []time.Duration{3 * time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 3, time.Hour, t.TempDir(), "7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*results.Result{}
	m := Run(context.Background(), p, Deps{Deps: advise.Deps{Run: execute}, On: executeOn(got)})
	if m.BringUps != 1 || len(m.Refused) != 0 {
		t.Fatalf("%d bring-ups, refused %q; want one topology for the chain", m.BringUps, m.Refused)
	}
	c := m.Cells[0]
	// A failover whose faults slipped on a loaded host is inconclusive
	// (the cell then gets more), but its run is still its own.
	var sum, all int64
	for i, f := range c.Failovers {
		r := got[f.RunID]
		if f.Status != statusMeasured || f.OnTopology != i+1 || r == nil {
			t.Fatalf("failover %d: %s %s, %d on its topology", i+1, f.Status, f.Detail, f.OnTopology)
		}
		if f.DoubleGrants != r.Incidents.DoubleGrants || f.Acquired != r.Contention.Acquired {
			t.Errorf("failover %d: %d double grants of %d acquisitions, its run's %d of %d", i+1, f.DoubleGrants, f.Acquired,
				r.Incidents.DoubleGrants, r.Contention.Acquired)
		}
		all += f.DoubleGrants
		if f.Conclusive {
			sum += f.DoubleGrants
		}
		t.Logf("failover %d (%s): conclusive %v %s, %d double grants, inside %v, rate %v/s, predicted %v", i+1, f.RunID, f.Conclusive, f.Why,
			f.DoubleGrants, deref64(f.Exposure), deref(f.RatePerS), deref(f.Predicted))
	}
	if c.Conclusive > 0 && (c.PerFailover == nil || c.PerFailover.K != sum) || c.Conclusive == 0 && c.PerFailover != nil {
		t.Errorf("the cell's count %+v over %d conclusive, want the conclusive failovers' %d", c.PerFailover, c.Conclusive, sum)
	}
	if all == 0 {
		t.Errorf("no double grant in %d failovers predicted at several each", len(c.Failovers))
	}
}

func deref64(x *int64) any {
	if x == nil {
		return "n/a"
	}
	return *x
}

// runCell measures one panel of a small grid on replicated.
func runCell(t *testing.T, m Mitigation, lags []time.Duration, failovers int) Map {
	t.Helper()
	axes := Axes{Topology: "replicated", Lags: lags, Holds: []time.Duration{5 * time.Second}, Mitigations: []Mitigation{m},
		Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, failovers, time.Hour, t.TempDir(), "7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	mp := Run(context.Background(), p, Deps{Deps: advise.Deps{Run: execute}})
	for _, c := range mp.Cells {
		for _, f := range c.Failovers {
			if f.Status != statusMeasured {
				t.Fatalf("%s: a failover %s: %s", c.Cell, f.Status, f.Detail)
			}
		}
		t.Logf("%s: %d/%d conclusive, double grants per failover %+v, predicted %v, unavailable %v s",
			c.Cell, c.Conclusive, len(c.Failovers), c.PerFailover, deref(c.Predicted), deref(c.UnavailableS))
	}
	return mp
}

func deref(x *float64) any {
	if x == nil {
		return "n/a"
	}
	return *x
}

// TestMoreLagNoFewerDoubleGrants: holds (2.5–7.5 s) outlast the promotion,
// so a grant the replica lacks is granted again while its holder is inside.
// With 500 ms of lag the map must not show significantly fewer double
// grants per failover than with none: its interval's top is not below the
// lag-free interval's bottom.
func TestMoreLagNoFewerDoubleGrants(t *testing.T) {
	longtest.Waiting(t)
	m := runCell(t, None, []time.Duration{0, 500 * time.Millisecond}, 3)
	none, lagged := m.Cells[0], m.Cells[1]
	if none.PerFailover == nil || lagged.PerFailover == nil {
		t.Fatalf("a cell without a conclusive failover: %+v, %+v", none, lagged)
	}
	if lagged.PerFailover.High < none.PerFailover.Low {
		t.Errorf("500 ms of lag gave fewer double grants per failover (%+v) than none (%+v)", lagged.PerFailover, none.PerFailover)
	}
}

// TestWaitAtZeroLagConclusive: with WAIT 1 and no lag every grant is on the
// replica before it counts, so the promoted replica knows every holder:
// conclusive failovers (holders inside at the kill) and no double grant.
func TestWaitAtZeroLagConclusive(t *testing.T) {
	longtest.Waiting(t)
	m := runCell(t, Wait, []time.Duration{0}, 2)
	c := m.Cells[0]
	if c.Conclusive == 0 || c.PerFailover == nil || c.PerFailover.K != 0 {
		t.Fatalf("WAIT at zero lag: %d conclusive, %+v; want conclusive failovers with 0 double grants", c.Conclusive, c.PerFailover)
	}
	if c.IdleAfterKill {
		t.Errorf("WAIT granted nothing after the kill: the restored replica never answered it")
	}
}
