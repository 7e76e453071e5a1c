package advise

import (
	"math"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/results"
)

func f64(v float64) *float64 { return &v }

// cell is a synthetic measured cell: n acquisitions at p99 us, SLO met.
func cell(cand string, nodes int, n int64, p99 float64, cmds *float64) Cell {
	return Cell{Candidate: cand, Kind: KindDemand, RunID: "r-" + cand, Nodes: nodes, Acquired: n, CommandsPerAcquire: cmds,
		Step: sweep.Step{MetSLO: true, P99US: p99, Throughput: float64(n) / 10}}
}

func strict(rate float64) Requirements {
	return Requirements{MaxIncidentRate: rate, Correctness: Strict}
}

func TestJudge(t *testing.T) {
	bounded := Requirements{MaxIncidentRate: 1e-3, Correctness: Bounded}
	for _, tc := range []struct {
		name           string
		c              func() Cell
		req            Requirements
		safe, qualify  bool
		thin, whyHolds string
	}{
		{"strict unfenced, no expiry, enough samples", func() Cell { return cell("single@single", 1, 100_000, 500, nil) }, strict(1e-4), true, true, "", "0 of 100000"},
		{"strict unfenced, no expiry, too few samples", func() Cell { return cell("single@single", 1, 5_000, 500, nil) }, strict(1e-4), false, false, "more acquisitions", "at most"},
		{"strict unfenced, holders outlive lease", func() Cell {
			c := cell("single@single", 1, 100_000, 500, nil)
			c.Expired = 50
			return c
		}, strict(1e-4), false, false, "", "50 of 100000"},
		{"strict unfenced, stale write accepted", func() Cell {
			c := cell("single@single", 1, 100_000, 500, nil)
			c.StaleAccepted = 1
			return c
		}, strict(1e-4), false, false, "", "strict correctness allows none"},
		{"strict fenced, holders outlive lease, fence refuses", func() Cell {
			c := cell("fenced@single", 1, 1_000, 500, nil)
			c.Fenced, c.Expired, c.FencingRejected = true, 300, 120
			return c
		}, strict(1e-4), true, true, "", "120 refused"},
		{"strict fenced, double grant the fence refused", func() Cell {
			c := cell("fenced@single", 1, 1_000, 500, nil)
			c.Fenced, c.DoubleGrants, c.FencingRejected = true, 1, 1
			return c
		}, strict(1e-4), true, true, "", "1 refused by the fence"},
		{"strict unfenced, double grant", func() Cell {
			c := cell("single@single", 1, 1_000, 500, nil)
			c.DoubleGrants = 1
			return c
		}, strict(1e-4), false, false, "", "double grants"},
		{"bounded passes what strict passes: fenced, few samples", func() Cell {
			c := cell("fenced@single", 1, 124, 500, nil)
			c.Fenced, c.FencingRejected = true, 2
			return c
		}, bounded, true, true, "", "2 refused by the fence"},
		{"unfenced 2% outlived: fails, not too thin", func() Cell {
			c := cell("single@single", 1, 1_000, 500, nil)
			c.Expired = 20
			return c
		}, strict(1e-4), false, false, "", "at least 139 per 10,000"},
		{"bounded, rare duplicate within target", func() Cell {
			c := cell("single@single", 1, 100_000, 500, nil)
			c.StaleAccepted = 2
			return c
		}, bounded, true, true, "", "2 of 100000"},
		{"bounded, too many duplicates", func() Cell {
			c := cell("single@single", 1, 10_000, 500, nil)
			c.StaleAccepted = 40
			return c
		}, bounded, false, false, "", "40 of 10000"},
		{"safe but misses the SLO", func() Cell {
			c := cell("fenced@single", 1, 1_000, 50_000, nil)
			c.Fenced, c.Step.MetSLO, c.Step.Broken = true, false, []string{"p99<10ms: 50.0ms"}
			return c
		}, strict(1e-4), true, false, "", "misses the SLO"},
		{"nothing acquired", func() Cell { return cell("etcd@etcd:3", 3, 0, 0, nil) }, strict(1e-4), false, false, "run it again", "acquired no lock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Judge(tc.c(), tc.req)
			if j.Safe != tc.safe || j.Qualifies != tc.qualify {
				t.Errorf("safe %v qualifies %v, want %v %v (%s)", j.Safe, j.Qualifies, tc.safe, tc.qualify, j.Why)
			}
			if !strings.Contains(j.Why, tc.whyHolds) {
				t.Errorf("why %q lacks %q", j.Why, tc.whyHolds)
			}
			if (tc.thin == "") != (j.Thin == "") || !strings.Contains(j.Thin, tc.thin) {
				t.Errorf("thin %q, want %q", j.Thin, tc.thin)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	q := func(c Cell) Judgement { return Judgement{Candidate: c.Candidate, Cell: &c, Qualifies: true} }
	no := func(c Cell) Judgement { return Judgement{Candidate: c.Candidate, Cell: &c} }
	for _, tc := range []struct {
		name string
		js   []Judgement
		want int
	}{
		{"none qualifies", []Judgement{no(cell("a@single", 1, 10, 1, nil))}, -1},
		{"nothing measured", []Judgement{{Candidate: "a@single", Qualifies: true}}, -1},
		{"fewest servers first", []Judgement{q(cell("redlock@redlock:5", 5, 10, 100, f64(5))), q(cell("fenced@single", 1, 10, 900, f64(9)))}, 1},
		{"then fewest commands", []Judgement{q(cell("fenced@single", 1, 10, 100, f64(3))), q(cell("single@single", 1, 10, 900, f64(2)))}, 1},
		{"unmeasured commands count as most", []Judgement{q(cell("pg@postgres", 1, 10, 50, nil)), q(cell("single@single", 1, 10, 900, f64(2)))}, 1},
		{"across backends p99, not commands", []Judgement{q(withBackend(cell("pg@postgres", 1, 10, 700, f64(3)), "postgres")), q(withBackend(cell("single@single", 1, 10, 400, f64(4.5)), "redis"))}, 1},
		{"then lowest p99", []Judgement{q(cell("a@single", 1, 10, 900, f64(2))), q(cell("b@single", 1, 10, 100, f64(2)))}, 1},
		{"a disqualified cheaper one is passed over", []Judgement{no(cell("single@single", 1, 10, 100, f64(2))), q(cell("fenced@single", 1, 10, 900, f64(3)))}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Choose(tc.js); got != tc.want {
				t.Errorf("Choose = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCompareRedlock(t *testing.T) {
	rl := cell("redlock@redlock:5", 5, 10_000, 3400, f64(10))
	rl.StaleAccepted = 3
	fenced := cell("fenced@single", 1, 10_000, 1000, f64(2))
	fenced.Fenced, fenced.FencingRejected = true, 7
	rc := CompareRedlock(rl, fenced)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if rc.LatencyX == nil || !near(*rc.LatencyX, 3.4) || rc.CommandsX == nil || !near(*rc.CommandsX, 5) {
		t.Errorf("multiples %v %v, want 3.4 and 5", rc.LatencyX, rc.CommandsX)
	}
	if !near(rc.RedlockPer10k, 3) || rc.AgainstPer10k != 0 || rc.PreventedPer10k != 0 || rc.FencePrevented != 7 {
		t.Errorf("incidents %+v", rc)
	}
	pg := cell("pg@postgres", 1, 10_000, 900, nil)
	if rc := CompareRedlock(rl, pg); rc.CommandsX != nil {
		t.Errorf("commands multiple over an unmeasured cell: %v, want none", *rc.CommandsX)
	}
}

func TestRetryAdvice(t *testing.T) {
	c := cell("single@single", 1, 10, 1, nil)
	if p, _ := RetryAdvice(c); p != "none" {
		t.Errorf("uncontended: %s, want none", p)
	}
	c.Contended = 12
	if p, why := RetryAdvice(c); p != Retry || !strings.Contains(why, "12 attempts") {
		t.Errorf("contended: %s %q", p, why)
	}
}

// TestCellOfReadsTheCatalogue: a cell's figures come from the result
// through the catalogue, and server cost the run could not read is absent.
func TestCellOfReadsTheCatalogue(t *testing.T) {
	r := &results.Result{ID: "r1", Lock: results.LockInfo{Fencing: true}, Topology: results.Topology{Nodes: []string{"a", "b", "c"}},
		Ops: map[string]results.OpSummary{results.OpAcquire: {Count: 100, LatencyUS: results.Percentiles{P99: 300}},
			results.OpTimeToAcquire: {Count: 100, LatencyUS: results.Percentiles{P99: 800}}},
		Throughput: results.Throughput{AcquiredPerS: 1000}}
	r.Contention.Acquired, r.Contention.Contended = 100, 5
	r.Incidents.ExpiredDuringWork, r.Incidents.WorkAborted, r.Incidents.FencingRejected = 3, 1, 2
	slo, err := results.ParseAssertion("p99<1ms")
	if err != nil {
		t.Fatal(err)
	}
	o := Outcome{Experiment: Experiment{Kind: KindDemand, Candidate: sweep.LockSpec{Lock: "fenced", Topology: "single"}}, Status: Measured, RunID: "r1", Result: r}
	c := CellOf(o, Requirements{SLO: []results.Assertion{slo}}, Profile{Concurrency: 16, Demand: 16})
	if c.Acquired != 100 || c.Expired != 4 || c.FencingRejected != 2 || c.Contended != 5 || c.Nodes != 3 || !c.Fenced {
		t.Errorf("cell %+v", c)
	}
	if !c.Step.MetSLO || c.Step.P99US != 800 || c.Step.Throughput != 1000 {
		t.Errorf("step %+v", c.Step)
	}
	if c.CommandsPerAcquire != nil {
		t.Errorf("commands per acquire %v without server figures, want absent", *c.CommandsPerAcquire)
	}
}

func withBackend(c Cell, b string) Cell {
	c.Backend = b
	return c
}

// TestIncidentVerdictNamesNoLease: a lock without a TTL (pg-advisory) is
// not said to have run "at TTL 500ms"; a leased lock still is.
func TestIncidentVerdictNamesNoLease(t *testing.T) {
	ev := Evidence{Tuning: Tuning{TTL: "500ms"}}
	js := []Judgement{
		{Candidate: "pg-advisory@postgres", Cell: &Cell{Candidate: "pg-advisory@postgres", Acquired: 100, RunID: "a"}},
		{Candidate: "single@single", Cell: &Cell{Candidate: "single@single", Acquired: 100, Expired: 1, RunID: "b", Leased: true}},
		{Candidate: "etcd@etcd:3", Cell: &Cell{Candidate: "etcd@etcd:3", Acquired: 100, RunID: "c", Leased: true, TTL: "2s"}},
	}
	var text strings.Builder
	for _, p := range incidentVerdict(ev, js, Profile{}).Answer {
		text.WriteString(p.Text)
	}
	got := text.String()
	if strings.Contains(got, "pg-advisory@postgres at TTL") || !strings.Contains(got, "pg-advisory@postgres has no lease") {
		t.Errorf("pg-advisory's sentence names a TTL it never had: %q", got)
	}
	if !strings.Contains(got, "single@single at TTL 500ms") {
		t.Errorf("single's sentence lost its TTL: %q", got)
	}
	// etcd ran at its own lease (whole seconds), not the tuned 500ms.
	if !strings.Contains(got, "etcd@etcd:3 at TTL 2s") {
		t.Errorf("etcd's sentence names a TTL it did not run at: %q", got)
	}
}

// TestLockVerdictCountsOnlyMeasured: a budget that measured one candidate of
// three judges one; the other two are "not measured", not counted among
// those judged.
func TestLockVerdictCountsOnlyMeasured(t *testing.T) {
	c := cell("fenced@single", 1, 1000, 500, nil)
	c.Fenced = true
	js := []Judgement{NotMeasured("single@single"), Judge(c, strict(1e-4)), NotMeasured("etcd@etcd:3")}
	v := lockVerdict(js, Choose(js), strict(1e-4))
	var text strings.Builder
	for _, p := range v.Answer {
		text.WriteString(p.Text)
	}
	want := "of the 1 candidate measured (2 others were not measured: single@single, etcd@etcd:3), only it meets"
	if !strings.Contains(text.String(), want) {
		t.Errorf("verdict %q lacks %q", text.String(), want)
	}
	for _, j := range js {
		if j.Measured() != (j.Candidate == "fenced@single") {
			t.Errorf("%s measured %v", j.Candidate, j.Measured())
		}
	}
}

// TestRedlockVerdictNamesOutlivedLeases: a Redlock whose holder outlived its
// lease while the single instance's did not must not read as "prevented 0"
// alone: strict correctness counts an outlived unfenced lease, so the
// sentence says how many each had.
func TestRedlockVerdictNamesOutlivedLeases(t *testing.T) {
	js := []Judgement{
		{Candidate: "single@single", Cell: &Cell{Candidate: "single@single", Acquired: 20000, RunID: "s"}},
		{Candidate: "redlock@redlock:5", Cell: &Cell{Candidate: "redlock@redlock:5", Acquired: 10000, Expired: 1, RunID: "r"}},
	}
	var text strings.Builder
	for _, p := range redlockVerdict(js, 0).Answer {
		text.WriteString(p.Text)
	}
	got := text.String()
	for _, want := range []string{"0 incidents (stale writes accepted, unfenced double grants) per 10,000 against 0",
		"1 of its holders outlived their lease against 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("redlock's sentence lacks %q: %q", want, got)
		}
	}
}
