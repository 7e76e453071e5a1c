package failovermap

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

// planted is a failover's result: grants at rate per second before the kill
// at 2 s, none for gap seconds after it, then grants again; doubles double
// grants, inside holders at the kill (-1: the kill failed).
func planted(id string, rate int64, gap float64, doubles int64, inside int) *results.Result {
	r := &results.Result{ID: id, DurationS: 10, Ops: map[string]results.OpSummary{
		results.OpAcquire: {Count: 100, LatencyUS: results.Percentiles{P50: 300, P99: 2000}}}}
	r.Throughput.AcquiredPerS = float64(rate)
	r.Incidents.DoubleGrants = doubles
	fe := results.FaultEvent{Spec: "at=2s kill primary", AtS: 2}
	if inside < 0 {
		fe.Error = "no primary"
	} else {
		fe.Exposure = &results.FaultExposure{Inside: inside}
	}
	// The lag of the 500 ms cells, begun on time.
	r.Faults = []results.FaultEvent{{Spec: "at=1500ms lag-replica for=800ms", AtS: 1.5}, fe}
	for s := 1; s <= 10; s++ {
		p := results.SeriesPoint{ElapsedS: float64(s)}
		switch first := 2 + gap; {
		case float64(s) <= 2:
			p.Acquired, p.FirstAcquiredS, p.LastAcquiredS = rate, float64(s)-0.9, float64(s)-0.1
		case float64(s) > first:
			p.Acquired, p.FirstAcquiredS, p.LastAcquiredS = rate, max(first, float64(s)-1), float64(s)-0.1
		}
		r.Contention.Acquired += p.Acquired
		r.Series = append(r.Series, p)
	}
	return r
}

func replicated(t *testing.T) compose.Spec {
	t.Helper()
	spec, err := ParseTopology("replicated")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestReadFailover: the rate before the kill, the outage after it, the
// exposure and the prediction come from the planted series.
func TestReadFailover(t *testing.T) {
	spec := replicated(t)
	c := Cell{Lock: "single", Mitigation: None, Lag: 500 * time.Millisecond, Hold: 5 * time.Second}
	f := readFailover(c, spec, planted("r1", 4, 3, 1, 6))
	if !f.Conclusive || f.RatePerS == nil || *f.RatePerS != 4 || f.UnavailableS == nil || math.Abs(*f.UnavailableS-3) > 1e-9 || *f.Exposure != 6 {
		t.Fatalf("read %+v", f)
	}
	// Holds uniform over [2.5, 7.5] s, TTL 8 s, D = 3 s: every h_A + h_B
	// pair that matters passes the TTL only in part; the formula's own
	// integral is the answer.
	want := Predict(PredictInput{RatePerS: 4, Lag: c.Lag, Unavailable: 3 * time.Second, HoldLo: 2500 * time.Millisecond,
		HoldHi: 7500 * time.Millisecond, TTL: 8 * time.Second})
	if f.Predicted == nil || *f.Predicted != want || want <= 0 {
		t.Errorf("predicted %v, want %v > 0", f.Predicted, want)
	}
	if f := readFailover(c, spec, planted("r2", 4, 3, 0, 0)); f.Conclusive || f.Why != "nobody inside at the kill" {
		t.Errorf("a kill with nobody inside: %+v", f)
	}
	if f := readFailover(c, spec, planted("r3", 4, 3, 0, -1)); f.Conclusive || f.Why != "the kill did not apply" || f.Predicted != nil {
		t.Errorf("a kill that failed: %+v", f)
	}
	late := planted("r5", 4, 3, 4, 6)
	late.Faults[0].AtS, late.Faults[1].AtS = 5.4, 5.4
	if f := readFailover(c, spec, late); f.Conclusive || f.Why != "the kill fired 3.4s late (a stalled machine)" {
		t.Errorf("a kill 3.4 s late: %+v", f)
	}
	late.Faults[1].AtS = 2
	late.Faults[0].AtS = 1.9
	if f := readFailover(c, spec, late); f.Conclusive || f.Why != "the lag began 100ms before the kill, not 500ms (a stalled machine)" {
		t.Errorf("a lag begun 100 ms before the kill: %+v", f)
	}
	wait := c
	wait.Mitigation = Wait
	if f := readFailover(wait, spec, planted("r4", 4, 20, 0, 6)); f.UnavailableS != nil || f.Predicted == nil || *f.Predicted != 0 {
		t.Errorf("WAIT without a grant after the kill: %+v", f)
	}
}

// TestSummarise: double grants per failover over the conclusive failovers
// only, with the Poisson interval; a prediction outside it is named.
func TestSummarise(t *testing.T) {
	spec := replicated(t)
	c := Cell{Lock: "single", Mitigation: None, Lag: 500 * time.Millisecond, Hold: 5 * time.Second}
	var fs []Failover
	for i, doubles := range []int64{3, 4, 5} {
		f := readFailover(c, spec, planted(string(rune('a'+i)), 4, 3, doubles, 6))
		f.Status = statusMeasured
		fs = append(fs, f)
	}
	idle := readFailover(c, spec, planted("d", 4, 3, 0, 0))
	idle.Status = statusMeasured
	skipped := Failover{Status: statusSkipped, Detail: "not run"}
	cr := summarise(c, 5, append(fs, idle, skipped))
	if cr.Conclusive != 3 || cr.PerFailover == nil || cr.PerFailover.Rate != 4 || cr.PerFailover.K != 12 {
		t.Fatalf("summary %+v", cr)
	}
	// 12 events over 3 failovers: Garwood [6.20, 20.96] / 3.
	if math.Abs(cr.PerFailover.Low-6.2006/3) > 1e-3 || math.Abs(cr.PerFailover.High-20.9622/3) > 1e-3 {
		t.Errorf("interval [%v, %v]", cr.PerFailover.Low, cr.PerFailover.High)
	}
	if !cr.Disagrees || cr.Predicted == nil || *cr.Predicted >= cr.PerFailover.Low {
		t.Errorf("4 per failover against a prediction of %v should disagree", cr.Predicted)
	}
	if cr.Exposure == nil || *cr.Exposure != 6 || cr.UnavailableS == nil || *cr.UnavailableS != 3 || cr.IdleAfterKill {
		t.Errorf("exposure %v, unavailable %v, idle %v", cr.Exposure, cr.UnavailableS, cr.IdleAfterKill)
	}
	none := summarise(c, 1, []Failover{idle})
	if none.PerFailover != nil || none.Per10k != nil || none.Predicted != nil || none.Exposure != nil {
		t.Errorf("no conclusive failover must leave the figures absent: %+v", none)
	}
}

// TestRunResumeAndBudget: a stored result of the same failover is reused,
// a runner's failure is recorded, and Ctrl-C keeps what was measured.
func TestRunResumeAndBudget(t *testing.T) {
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0, 500 * time.Millisecond}, Holds: []time.Duration{5 * time.Second},
		Mitigations: []Mitigation{None}, Locks: []string{"single"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 2, time.Hour, t.TempDir(), "7.0.15")
	if err != nil || len(p.Cells) != 2 || p.PerCell != 2 {
		t.Fatalf("plan %+v, %v", p, err)
	}
	stored := planted("stored", 4, 3, 2, 6)
	v := p.Cells[1].Values(p.spec, axes.WaitTimeout)
	v.Set("label", Label(p.Cells[1], 1))
	resolved, err := plan.Resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	stored.Label, stored.Config = Label(p.Cells[1], 1), resolved.Config()
	pl, err := plan.Parse(resolved)
	if err != nil {
		t.Fatal(err)
	}
	stored.Config["keys"] = pl.Workload.Keys.String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	run := func(_ context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		runs++
		switch runs {
		case 2:
			return nil, errors.New("redis-server did not start")
		case 3:
			// Ctrl-C in the window: the runner stores a partial result.
			cancel()
			r := planted("partial", 4, 3, 0, 6)
			r.Partial = true
			return r, nil
		}
		return planted("ran", 4, 3, 0, 6), nil
	}
	m := Run(ctx, p, Deps{Deps: advise.Deps{Run: run, Stored: []*results.Result{stored}}})
	got := []string{m.Cells[0].Failovers[0].Status, m.Cells[1].Failovers[0].Status, m.Cells[0].Failovers[1].Status, m.Cells[1].Failovers[1].Status}
	want := []string{statusMeasured, statusReused, statusFailed, statusInterrupted}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	}
	if !m.Interrupted || m.Cells[1].PerFailover == nil || m.Cells[1].PerFailover.K != 2 || m.Cells[0].Conclusive != 1 {
		t.Errorf("interrupted %v, reused cell %+v", m.Interrupted, m.Cells[1].PerFailover)
	}
	if advise.HardShare < 1 {
		t.Fatal("advise's hard share is the limit Run keeps")
	}
}

// TestWriteGolden: the table (within 120 columns), the JSON and the heat
// map of a planted map.
func TestWriteGolden(t *testing.T) {
	spec := replicated(t)
	axes := Axes{Topology: "replicated", Lags: []time.Duration{0, 500 * time.Millisecond}, Holds: []time.Duration{5 * time.Second},
		Mitigations: []Mitigation{None, Wait}, Locks: []string{"single", "redislock"}, WaitTimeout: 100 * time.Millisecond}
	p, err := NewPlan(axes, 2, time.Hour, "runs", "7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	m := Map{Plan: p, Elapsed: 95 * time.Second}
	for i, c := range p.Cells {
		var fs []Failover
		for k := range 2 {
			doubles := int64(0)
			if c.Lag > 0 && c.Mitigation == None {
				doubles = int64(k + i%2)
			}
			f := readFailover(c, spec, planted("r", 4, 3, doubles, 6))
			f.Status = statusMeasured
			fs = append(fs, f)
		}
		m.Cells = append(m.Cells, summarise(c, 2, fs))
	}
	pm := 5.05
	m.Measured, m.PerMinute, m.BringUps = 8, &pm, 2
	m.Refused = []string{"after 20261206-180000-abcdef: topology not clean: 127.0.0.1:6379 still has key(s) of the last run, e.g. lockbench:20261206-180000-abcdef:k1"}
	var text, html bytes.Buffer
	if err := WriteText(&text, m); err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(text.Bytes(), []byte("\n")) {
		if n := len([]rune(string(line))); n > 120 {
			t.Errorf("line of %d columns: %s", n, line)
		}
	}
	resultstest.Golden(t, "failover-map.txt", text.Bytes())
	if err := WriteHTML(&html, m); err != nil {
		t.Fatal(err)
	}
	if hm := HeatMaps(m); len(hm) != 3 || hm[0].Text[0][1] == "" {
		t.Errorf("heat maps: %d panels (want single/none, single/wait, redislock/none)", len(hm))
	}
	for _, want := range []string{"single / none on replicated", "replication lag"} {
		if !bytes.Contains(html.Bytes(), []byte(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestClusterOutage: on a cluster the other shards go on granting, so the
// outage is shard 0's promotion, and the grant rate is shard 0's share.
func TestClusterOutage(t *testing.T) {
	spec, err := ParseTopology("cluster:4,1")
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Lock: "single", Mitigation: None, Lag: 500 * time.Millisecond, Hold: 5 * time.Second}
	r := planted("c1", 8, 0.2, 0, 6)
	r.Faults[1].Spec = "at=2000ms kill node=0"
	if f := readFailover(c, spec, r); f.UnavailableS != nil {
		t.Errorf("no promotion seen, yet an outage of %v", *f.UnavailableS)
	}
	r.Faults[1].PromotedAfterS = 3
	f := readFailover(c, spec, r)
	want := Predict(PredictInput{RatePerS: 2, Lag: c.Lag, Unavailable: 3 * time.Second, HoldLo: 2500 * time.Millisecond,
		HoldHi: 7500 * time.Millisecond, TTL: 8 * time.Second})
	if f.UnavailableS == nil || *f.UnavailableS != 3 || f.Predicted == nil || *f.Predicted != want {
		t.Errorf("cluster failover %+v, want outage 3 s and prediction %v", f, want)
	}
}
