package advise

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

// fixture is a finished advise over two candidates with synthetic results:
// the fenced lock refused stale writes the single lock accepted, Redlock's
// demand run failed to start, and one experiment was left out.
func fixture(t *testing.T) Evidence {
	t.Helper()
	in := input(t, 45*time.Second, plan.Values{"hold": {"5ms"}, "pause-prob": {"0.01"}, "pause": {"300ms"}, "keys": {"64"}},
		"single@single", "fenced@single", "redlock@redlock:3")
	in.Req.SLO = sloOf(t, "p99<10ms")
	in.Out = "runs"
	p, err := NewPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	ev := Evidence{Plan: p, Elapsed: 41 * time.Second}
	for i, e := range p.Experiments {
		o := Outcome{Experiment: e, Flags: flagsText(p.Values(e, Tuning{TTL: "500ms", RenewEvery: "0"}))}
		if e.Candidate.Lock == "redlock" {
			o.Status, o.Detail = Failed, "start redlock:3: redis-server exited"
			if e.Kind != KindDemand {
				o.Status, o.Detail = Skipped, "not run: redlock@redlock:3 failed earlier"
			}
			ev.Outcomes = append(ev.Outcomes, o)
			continue
		}
		r := &results.Result{ID: fmt.Sprintf("20261204-1200%02d-abcdef", i), Lock: results.LockInfo{Name: e.Candidate.Lock, Fencing: e.Candidate.Lock == "fenced"},
			Topology: results.Topology{Nodes: []string{"127.0.0.1:7000"}}, Throughput: results.Throughput{AcquiredPerS: 3000 - 100*float64(i)},
			Ops: map[string]results.OpSummary{results.OpAcquire: {Count: 36118, LatencyUS: results.Percentiles{P99: 900 + 10*float64(i)}},
				results.OpAcquireFailed: {Count: 2}, results.OpTimeToAcquire: {Count: 36000, LatencyUS: results.Percentiles{P99: 1500 + 10*float64(i)}}},
			Errors: map[string]int64{"timeout": 2}}
		cmds := 4.0
		if r.Lock.Fencing {
			cmds = 6
		}
		r.Servers = &results.Servers{CommandsPerAcquire: &cmds}
		r.Contention.Attempts, r.Contention.Acquired, r.Contention.Contended, r.Contention.GaveUp = 36120, 36000, 120, 2
		if e.TTL == "100ms" || e.Kind != KindTTL {
			r.Incidents.ExpiredDuringWork = 360
			if r.Lock.Fencing {
				r.Incidents.FencingRejected = 40
			} else {
				r.Incidents.StaleWritesAccepted = 40
			}
		}
		o.Status, o.RunID, o.Result, o.Wall = Measured, r.ID, r, e.Estimate
		ev.Outcomes = append(ev.Outcomes, o)
	}
	ev.Tuning = Tune(ev.Outcomes, p)
	return ev
}

// TestPageGolden renders the plan and the page in every format against
// golden files, and keeps every terminal line within the table width.
func TestPageGolden(t *testing.T) {
	ev := fixture(t)
	pg := Build(ev)
	var planOut, text, js, html bytes.Buffer
	if err := WritePlan(&planOut, ev.Plan); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, pg); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, pg); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, pg, "runs"); err != nil {
		t.Fatal(err)
	}
	resultstest.Golden(t, "plan.txt", planOut.Bytes())
	resultstest.Golden(t, "page.txt", text.Bytes())
	resultstest.Golden(t, "page.json", js.Bytes())
	resultstest.Golden(t, "page.html", html.Bytes())
	for _, out := range []*bytes.Buffer{&planOut, &text} {
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "No cell") || strings.HasPrefix(line, "TTL ") {
				continue // tune-ttl's sentence, printed as it prints it
			}
			if n := utf8.RuneCountInString(line); n > results.MaxTableWidth {
				t.Errorf("line of %d columns: %s", n, line)
			}
		}
	}
	for _, want := range []string{"Run `fenced` on single", "[", "too thin", "start redlock:3"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Every cited number links to a run the page lists.
	for _, v := range pg.Verdicts {
		for _, part := range v.Answer {
			for _, id := range part.Runs {
				if pg.Ref(id) == 0 || !strings.Contains(html.String(), `id="run-`+id+`"`) {
					t.Errorf("%s cites %s, which the page does not list", v.Question, id)
				}
			}
		}
	}
}

// TestCountTextSaysWhatWasReused: after --resume the page says how many
// experiments stood on stored results, so "in 0s" is not read as all of
// them measured in no time.
func TestCountTextSaysWhatWasReused(t *testing.T) {
	rows := []Row{{N: 1, Outcome: Outcome{Status: Measured, Result: &results.Result{}}}, {N: 2, Outcome: Outcome{Status: Reused, Result: &results.Result{}}}}
	if got, want := countText(rows), "2 of 2 measured (1 reused: a stored result of the same configuration)"; got != want {
		t.Errorf("countText = %q, want %q", got, want)
	}
	if got := countText(rows[:1]); got != "1 of 1 measured" {
		t.Errorf("countText without reuse = %q", got)
	}
}
