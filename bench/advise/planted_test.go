package advise

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// storeIn runs one experiment on real local servers and stores its result
// in dir, as the command's runner does.
func storeIn(dir string) func(ctx context.Context, v plan.Values, group string, repeat int) (*results.Result, error) {
	return func(ctx context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		v.Set("quiet", "true")
		plans, err := plan.Expand(v)
		if err != nil {
			return nil, err
		}
		r, err := plan.Execute(ctx, plans[0], plan.Env{})
		if err != nil {
			return nil, err
		}
		_, err = results.Write(dir, r)
		return r, err
	}
}

// planted runs advise on real servers with a short budget and returns its
// page.
func planted(t *testing.T, budget time.Duration, req Requirements, work plan.Values, cands ...string) (Page, Evidence) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	in := input(t, budget, work, cands...)
	in.Req, in.Out = req, t.TempDir()
	p, err := NewPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	ev := Run(context.Background(), p, Deps{Run: storeIn(in.Out)})
	for _, o := range ev.Outcomes {
		if o.Status == Failed {
			t.Fatalf("%s failed: %s", o.Experiment.Name, o.Detail)
		}
	}
	return Build(ev), ev
}

func sloOf(t *testing.T, expr string) []results.Assertion {
	a, err := results.ParseAssertion(expr)
	if err != nil {
		t.Fatal(err)
	}
	return []results.Assertion{a}
}

func recommended(pg Page) string {
	if i := Choose(pg.Judgements); i >= 0 {
		return pg.Judgements[i].Candidate
	}
	return ""
}

// TestPlantedNoPausesShortHold: with no pauses and a short hold, no holder
// outlives even the shortest TTL, so the advice is the cheapest single lock
// and the TTL floor. (The target is loose so that a short budget proves it;
// the SLO is loose so that a loaded machine's latency decides nothing.)
func TestPlantedNoPausesShortHold(t *testing.T) {
	req := Requirements{SLO: sloOf(t, "p99<2s"), MaxIncidentRate: 1e-2, Correctness: Strict}
	pg, ev := planted(t, 20*time.Second, req, plan.Values{"hold": {"1ms"}, "concurrency": {"4"}}, "single@single", "fenced@single", "redlock@redlock:3")
	if got := recommended(pg); got != "single@single" {
		t.Errorf("recommended %q, want single@single; candidates %+v", got, pg.Judgements)
	}
	if !ev.Tuning.Proven || ev.Tuning.TTL != ev.Plan.TTLs[0] {
		t.Errorf("tuned TTL %s (proven %v), want the floor %s: %s", ev.Tuning.TTL, ev.Tuning.Proven, ev.Plan.TTLs[0], ev.Tuning.Rec.Why)
	}
	text := new(strings.Builder)
	if err := WriteText(text, pg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Run `single` on single") {
		t.Errorf("page does not say the advice:\n%s", text)
	}
}

// TestPlantedPausesPastEveryTTL: holders pause past every TTL the budget
// can try, on shared keys, and correctness is strict: only a fenced lock
// qualifies, and no TTL is proven.
//
// Waiters give up when a holder pauses past their wait limit (about a fifth
// of acquisitions here), and a give-up is a failure at its wait, so the SLO
// is on the median, which the give-ups do not reach.
func TestPlantedPausesPastEveryTTL(t *testing.T) {
	req := Requirements{SLO: sloOf(t, "p50<5s"), MaxIncidentRate: 1e-2, Correctness: Strict}
	work := plan.Values{"hold": {"1ms"}, "pause-prob": {"0.2"}, "pause": {"1s"}, "keys": {"4"}, "concurrency": {"8"}}
	pg, ev := planted(t, 20*time.Second, req, work, "single@single", "fenced@single")
	if !ev.Plan.TTLCapped {
		t.Fatalf("plan's TTLs %v reach past the 1s pauses; the test plants pauses past every TTL", ev.Plan.TTLs)
	}
	for _, j := range pg.Judgements {
		fenced := j.Cell != nil && j.Cell.Fenced
		if j.Qualifies != fenced {
			t.Errorf("%s (fenced %v) qualifies %v: %s", j.Candidate, fenced, j.Qualifies, j.Why)
		}
	}
	if got := recommended(pg); got != "fenced@single" {
		t.Errorf("recommended %q, want fenced@single", got)
	}
	if ev.Tuning.Proven {
		t.Errorf("a TTL under the pauses was proven: %s", ev.Tuning.Rec.Why)
	}
	// The same stored results judged bounded: what passed strict passes
	// bounded, and a rate shown above the target fails rather than being
	// too thin.
	for _, j := range pg.Judgements {
		if j.Cell == nil {
			continue
		}
		b := Judge(*j.Cell, Requirements{SLO: req.SLO, MaxIncidentRate: req.MaxIncidentRate, Correctness: Bounded})
		if j.Safe && !b.Safe {
			t.Errorf("%s: safe strict, not bounded: %s", j.Candidate, b.Why)
		}
		if c := j.Cell; !c.Fenced && verdict.LowerBound(c.Expired, c.Acquired) > req.MaxIncidentRate && (j.Correctness != verdict.Fails || j.Thin != "") {
			t.Errorf("%s: %d of %d outlived their lease, shown above the target, judged %s (thin %q)", j.Candidate, c.Expired, c.Acquired, j.Correctness, j.Thin)
		}
	}
}

// TestPlantedOneKeyHeldLong: one key held 50ms by 16 workers serialises on
// any lock: at most about 20 acquisitions/s, and each caller waits for the
// others' holds, hundreds of ms. The SLO judged on the wait misses for every
// lock alike, and the run names the key's hold as the limit.
func TestPlantedOneKeyHeldLong(t *testing.T) {
	req := Requirements{SLO: sloOf(t, "p99<10ms"), MaxIncidentRate: 1e-2, Correctness: Strict}
	work := plan.Values{"hold": {"50ms"}, "keys": {"1"}, "concurrency": {"16"}}
	pg, _ := planted(t, 12*time.Second, req, work, "single@single", "fenced@single")
	if got := recommended(pg); got != "" {
		t.Errorf("recommended %q: no lock waits under 10ms for a key 16 workers hold 50ms each", got)
	}
	for _, j := range pg.Judgements {
		if j.Cell == nil {
			t.Fatalf("%s not measured", j.Candidate)
		}
		s := j.Cell.Step
		if s.LatencyOp != verdict.WaitOp || s.MetSLO || j.SLO != verdict.Misses {
			t.Errorf("%s: SLO %s on %s (met %v), want misses on %s", j.Candidate, j.SLO, s.LatencyOp, s.MetSLO, verdict.WaitOp)
		}
		if s.Limit == nil || s.Limit.Limit != verdict.LimitContention {
			t.Errorf("%s: limit %+v, want contention on the one key", j.Candidate, s.Limit)
		}
	}
	text := new(strings.Builder)
	if err := WriteText(text, pg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"time_to_acquire", "limit: contention on the keys", "gave up at the wait limit"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, text)
		}
	}
}

// TestPlantedBudgetMeasuresOnlySome: a budget that the first candidate's
// experiments fill leaves the others unmeasured (windows cannot run faster
// than their length, so some must be left whatever the machine): each of
// those is "not measured", none is judged, and the page counts only the
// candidates measured.
func TestPlantedBudgetMeasuresOnlySome(t *testing.T) {
	req := Requirements{SLO: sloOf(t, "p99<1s"), MaxIncidentRate: 1e-2, Correctness: Strict}
	work := plan.Values{"hold": {"1ms"}, "concurrency": {"4"}}
	pg, _ := planted(t, 5*time.Second, req, work, "single@single", "fenced@single", "redlock@redlock:5", "etcd@etcd:3")
	measured, unmeasured := 0, []string{}
	for _, j := range pg.Judgements {
		if j.Measured() {
			measured++
			continue
		}
		unmeasured = append(unmeasured, j.Candidate)
		if j.Correctness != verdict.NotMeasured || j.SLO == verdict.Meets {
			t.Errorf("%s was not measured, yet judged: correctness %s, SLO %s", j.Candidate, j.Correctness, j.SLO)
		}
	}
	t.Logf("%d measured; not measured: %v", measured, unmeasured)
	if measured == 0 || len(unmeasured) == 0 {
		t.Fatalf("%d measured, unmeasured %v: a 5s budget should measure the first candidate and not all four", measured, unmeasured)
	}
	text := new(strings.Builder)
	if err := WriteText(text, pg); err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(text.String()), " ")
	// The candidates' names appear in the plan's lines too: the page must
	// say they were not measured, and list each there.
	notMeasured := page[max(0, strings.Index(page, "not measured")):]
	if !strings.Contains(page, "not measured") {
		t.Errorf("page never says a candidate was not measured:\n%s", text)
	}
	for _, c := range unmeasured {
		if !strings.Contains(notMeasured, c) || strings.Contains(page, "too thin: "+c) {
			t.Errorf("page does not list %s as not measured (or calls it too thin):\n%s", c, text)
		}
	}
	if strings.Contains(page, "of the 4 candidates") {
		t.Errorf("page counts the unmeasured among the candidates judged:\n%s", text)
	}
}
