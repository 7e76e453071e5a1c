package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

// planted runs a scenario on made-up trials: each call returns the next
// result, so a verdict is judged on facts chosen by the test.
func planted(rs ...*results.Result) Runner {
	i := 0
	return func(context.Context, plan.Values) (*results.Result, error) {
		r := rs[i%len(rs)]
		i++
		return r, nil
	}
}

// killedWith is a failover trial whose primary died with inside holders
// inside, acquired acquisitions in its window and doubles double grants.
func killedWith(inside int, acquired, doubles int64) *results.Result {
	r := &results.Result{ID: "r"}
	r.Contention.Acquired = acquired
	r.Incidents.DoubleGrants = doubles
	r.Faults = []results.FaultEvent{
		{Spec: "at=0s lag-replica for=2500ms", AtS: 0, Exposure: &results.FaultExposure{Inside: 16, ValidLeases: 16}},
		{Spec: "at=2300ms kill primary", AtS: 2.3, Exposure: &results.FaultExposure{Inside: inside, ValidLeases: inside}},
	}
	r.Series = []results.SeriesPoint{{ElapsedS: 1, Acquired: acquired, FirstAcquiredS: 0.5, LastAcquiredS: 0.9}}
	return r
}

// TestFaultWithNobodyInsideIsInconclusive: a trial whose decisive fault
// fired with nobody inside, or that acquired nothing in its window, could
// not have shown a double grant: it is inconclusive, shown so in the table
// ("0/0 of 2"), the statement and the JSON, never counted as a pass.
func TestFaultWithNobodyInsideIsInconclusive(t *testing.T) {
	s := failover()
	s.Variants = s.Variants[1:] // the mitigated one: a clean count would read as a pass
	cases := []struct {
		name       string
		trials     []*results.Result
		conclusive int
		want       []string
	}{
		{"nobody inside at the kill", []*results.Result{killedWith(0, 40, 0), killedWith(0, 40, 0)}, 0,
			[]string{"0/0 of 2", "inconclusive; no conclusive trial: nothing shown either way", "2 inconclusive (nobody at risk at kill primary)"}},
		{"no acquisition in the window", []*results.Result{killedWith(12, 0, 0), killedWith(0, 40, 0)}, 0,
			[]string{"0/0 of 2", "no acquisition in its window; nobody at risk at kill primary"}},
		{"one of two exposed", []*results.Result{killedWith(12, 40, 0), killedWith(0, 40, 0)}, 1,
			[]string{"0/1 of 2", "undecided 0/1 (≤95%); violated in 0 of 1 conclusive trial(s) (≤95% per failover at 95%)",
				"about 28 more conclusive trial(s) without it would decide",
				"granted nothing after kill primary: safe only by being unavailable"}},
		{"a violation is conclusive", []*results.Result{killedWith(12, 40, 3), killedWith(9, 40, 0)}, 2,
			[]string{"1/2 of 2", "violated; violated in 1 of 2 conclusive trial(s) (1.2%–99% per failover at 95%)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Run(context.Background(), s, Options{Trials: len(c.trials)}, planted(c.trials...))
			if err != nil {
				t.Fatal(err)
			}
			vv := v.Variants[0]
			if vv.Conclusive != c.conclusive {
				t.Errorf("conclusive %d, want %d", vv.Conclusive, c.conclusive)
			}
			var out bytes.Buffer
			if err := WriteVerdict(&out, v); err != nil {
				t.Fatal(err)
			}
			// The verdict wraps at 120 columns: compare words, not lines.
			text := strings.Join(strings.Fields(out.String()), " ")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("verdict lacks %q:\n%s", w, out.String())
				}
			}
			var js bytes.Buffer
			if err := WriteVerdictJSON(&js, v); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Variants []struct {
					Conclusive *int `json:"conclusive"`
					Trials     []struct {
						Conclusive bool   `json:"conclusive"`
						Why        string `json:"inconclusive_why"`
						Exposure   *int64 `json:"exposure"`
					} `json:"trials"`
				} `json:"variants"`
			}
			if err := json.Unmarshal(js.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			g := got.Variants[0]
			if g.Conclusive == nil || *g.Conclusive != c.conclusive {
				t.Errorf("json: %s", js.String())
			}
			for _, tr := range g.Trials {
				if tr.Conclusive != (tr.Why == "") || tr.Exposure == nil {
					t.Errorf("json trial %+v", tr)
				}
			}
		})
	}
}

// TestControlWithoutTheFaultCountsAcquisitions: a variant without the
// hazard's fault (a control) is conclusive when it acquired in its window,
// with its exposure not measured (null), not 0.
func TestControlWithoutTheFaultCountsAcquisitions(t *testing.T) {
	s := redlockClockJump()
	r := &results.Result{ID: "c"}
	r.Contention.Acquired = 5
	tr := Trial{Result: r}
	s.judge(&tr)
	if !tr.Conclusive || tr.Exposure != -1 {
		t.Errorf("control: %+v", tr)
	}
	r.Contention.Acquired = 0
	s.judge(&tr)
	if tr.Conclusive || tr.Why != "no acquisition in its window" {
		t.Errorf("idle control: %+v", tr)
	}
}

// TestUnrecordedExposureIsInconclusive: a result whose fault carries no
// exposure (an older lockbench's) is not known to have had holders inside:
// inconclusive, its exposure not measured (-1, null), never 0.
func TestUnrecordedExposureIsInconclusive(t *testing.T) {
	r := killedWith(5, 40, 0)
	r.Faults[1].Exposure = nil
	tr := Trial{Result: r}
	failover().judge(&tr)
	if tr.Conclusive || tr.Exposure != -1 || tr.Why != "exposure at kill primary not recorded" {
		t.Errorf("trial %+v", tr)
	}
}
