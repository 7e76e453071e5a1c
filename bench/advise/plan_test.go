package advise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

func input(t *testing.T, budget time.Duration, work plan.Values, cands ...string) Input {
	t.Helper()
	in := Input{Work: work, Budget: budget, Req: strict(1e-4)}
	for _, s := range cands {
		c, err := ParseCandidate(s)
		if err != nil {
			t.Fatal(err)
		}
		in.Candidates = append(in.Candidates, c)
	}
	return in
}

func TestLadder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      Profile
		budget time.Duration
		lock   string
		want   string
		capped bool
	}{
		{"short hold: the floor, 4×, 16×", Profile{Hold99: time.Millisecond}, 5 * time.Minute, "single", "[100ms 500ms 1.6s]", false},
		{"longer hold raises the floor", Profile{Hold99: 300 * time.Millisecond}, 5 * time.Minute, "single", "[1s 5s]", false},
		{"pauses set the top rung", Profile{Hold99: time.Millisecond, Pause99: time.Second, PauseProb: 0.01}, 5 * time.Minute, "single", "[100ms 500ms 5s]", false},
		{"pauses past what the budget can judge", Profile{Hold99: time.Millisecond, Pause99: 2 * time.Second, PauseProb: 0.1}, 12 * time.Second, "single", "[100ms 200ms]", true},
		{"etcd leases are whole seconds from 2s", Profile{Hold99: time.Millisecond}, 5 * time.Minute, "etcd", "[2s]", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, capped := Ladder(tc.p, tc.budget, tc.lock)
			if fmtDur(got) != tc.want || capped != tc.capped {
				t.Errorf("Ladder = %v capped %v, want %s capped %v", got, capped, tc.want, tc.capped)
			}
		})
	}
}

func fmtDur(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.String())
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestPlanFitsTheBudget: whatever the budget, the plan's estimate is within
// it, lower-priority experiments are left out first (and said to be), and
// the first candidate's run at the demand is always in.
func TestPlanFitsTheBudget(t *testing.T) {
	for _, budget := range []time.Duration{8 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute} {
		in := input(t, budget, plan.Values{}, "single@single", "fenced@single", "redlock@redlock:5", "etcd@etcd:3")
		p, err := NewPlan(in)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total > budget {
			t.Errorf("budget %v: plan of %v", budget, p.Total)
		}
		if p.Experiments[0].Kind != KindTTL && p.Experiments[0].Kind != KindDemand {
			t.Errorf("budget %v: first experiment %s", budget, p.Experiments[0].Name)
		}
		hasFirst := false
		for _, e := range p.Experiments {
			hasFirst = hasFirst || e.Name == "demand single@single"
			if e.Window < minWindow {
				t.Errorf("budget %v: %s window %v", budget, e.Name, e.Window)
			}
		}
		if !hasFirst {
			t.Errorf("budget %v: the first candidate's demand run was left out", budget)
		}
		if n, want := len(p.Experiments)+len(p.Left), len(p.TTLs)+4+6; n != want {
			t.Errorf("budget %v: %d planned or left out, want %d", budget, n, want)
		}
		if err := p.Check(); err != nil {
			t.Errorf("budget %v: %v", budget, err)
		}
	}
}

func TestPlanValues(t *testing.T) {
	in := input(t, time.Minute, plan.Values{"hold": {"5ms"}, "concurrency": {"8"}}, "single@single", "etcd@etcd:3")
	in.Redis = []string{"redis://u:secret@127.0.0.1:6390"}
	p, err := NewPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	tuned := Tuning{TTL: "300ms", RenewEvery: "ttl/3"}
	for _, e := range p.Experiments {
		v := p.Values(e, tuned)
		switch {
		case e.Kind == KindTTL && (v.Get("ttl") != e.TTL || v.Get("renew-every") != e.RenewEvery):
			t.Errorf("%s: ttl %s renew %s", e.Name, v.Get("ttl"), v.Get("renew-every"))
		case e.Candidate.Topology == "single" && v.Get("redis") == "":
			t.Errorf("%s: not on the --redis target", e.Name)
		case e.Candidate.Topology == "etcd:3" && v.Get("ttl") != "2s":
			t.Errorf("%s: etcd ttl %s, want 2s", e.Name, v.Get("ttl"))
		case e.Candidate.Topology == "etcd:3" && v.Has("redis"):
			t.Errorf("%s: etcd given --redis", e.Name)
		case e.Kind == KindFault && v.Get("keys") != "uniform:2":
			t.Errorf("%s: fault keys %q, want uniform:2 (contended)", e.Name, v.Get("keys"))
		case v.Get("hold") != "5ms" || v.Get("retry") != Retry:
			t.Errorf("%s: %v", e.Name, v)
		}
		if e.Kind == KindFault && e.Candidate.Topology == "single" {
			t.Errorf("%s: a fault on the external target", e.Name)
		}
	}
}

func TestParseInputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"candidate", func() error { _, err := ParseCandidate("@single"); return err }(), "--candidate"},
		{"candidate topology", func() error { _, err := ParseCandidate("fenced@nowhere"); return err }(), "--candidate"},
		{"budget", func() error { _, err := ParseBudget("soon"); return err }(), "\"soon\" is not a duration"},
		{"budget too short", func() error { _, err := ParseBudget("1s"); return err }(), "want from 5s"},
		{"correctness", func() error { _, err := ParseCorrectness("loose"); return err }(), "want strict"},
		{"rate", input(t, time.Minute, plan.Values{"rate": {"100,2000:30s"}}, "single@single").Check(), "--rate"},
		{"incident rate", func() error {
			in := input(t, time.Minute, plan.Values{}, "single@single")
			in.Req.MaxIncidentRate = 2
			return in.Check()
		}(), "--max-incident-rate"},
		{"twice", input(t, time.Minute, plan.Values{}, "single@single", "single@single").Check(), "given twice"},
	} {
		if tc.err == nil || !plan.IsInputError(tc.err) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an input error with %q", tc.name, tc.err, tc.want)
		}
	}
}

func FuzzParseCandidate(f *testing.F) {
	for _, s := range []string{"fenced@single", "redlock@redlock:5", "etcd@etcd:3", "@", "x@", "pg-lease@postgres"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCandidate(s)
		if err == nil && (c.Lock == "" || c.Topology == "") {
			t.Errorf("%q parsed to %+v", s, c)
		}
		if err != nil && !plan.IsInputError(err) {
			t.Errorf("%q: %v is not bad input", s, err)
		}
	})
}

func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"5m", "10s", "1h", "-1s", "", "25h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseBudget(s)
		if err == nil && (d < MinBudget || d > 24*time.Hour) {
			t.Errorf("%q accepted as %v", s, d)
		}
	})
}

// TestMatch: --resume reuses a complete result whose configuration is the
// one the experiment resolves to, and nothing else.
func TestMatch(t *testing.T) {
	v := plan.Values{"lock": {"fenced"}, "topology": {"single"}, "ttl": {"200ms"}, "keys": {"16"}, "duration": {"2s"}}
	resolved, err := plan.Resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(edit func(map[string]any)) map[string]any {
		c := resolved.Config()
		c["keys"], c["acquire-timeout"], c["provider"], c["pool-size"], c["group"] = "uniform:16", "200ms", "local", "24", "g1"
		edit(c)
		return c
	}
	same := &results.Result{ID: "same", Config: cfg(func(map[string]any) {})}
	partial := &results.Result{ID: "partial", Partial: true, Config: cfg(func(map[string]any) {})}
	otherTTL := &results.Result{ID: "ttl", Config: cfg(func(c map[string]any) { c["ttl"] = "400ms" })}
	otherKeys := &results.Result{ID: "keys", Config: cfg(func(c map[string]any) { c["keys"] = "uniform:8" })}
	for _, tc := range []struct {
		stored []*results.Result
		want   string
	}{
		{nil, ""},
		{[]*results.Result{partial, otherTTL, otherKeys}, ""},
		{[]*results.Result{otherTTL, same}, "same"},
	} {
		got := Match(tc.stored, v)
		if (got == nil && tc.want != "") || (got != nil && got.ID != tc.want) {
			t.Errorf("Match = %v, want %q", got, tc.want)
		}
	}
}

// TestRunSkipsAndKeeps: a candidate that fails to start has its other
// experiments skipped, stored results are reused, and an interruption keeps
// what finished.
func TestRunSkipsAndKeeps(t *testing.T) {
	in := input(t, time.Minute, plan.Values{}, "single@single", "fenced@single")
	p, err := NewPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	fake := func(_ context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		calls++
		if v.Get("lock") == "fenced" {
			return nil, errors.New("redis-server did not start")
		}
		r := &results.Result{ID: fmt.Sprintf("r%d", calls), Lock: results.LockInfo{Name: v.Get("lock")}, Topology: results.Topology{Nodes: []string{"a"}}}
		r.Contention.Acquired = 100
		return r, nil
	}
	ev := Run(context.Background(), p, Deps{Run: fake})
	var fencedFailed, fencedSkipped int
	for _, o := range ev.Outcomes {
		if o.Experiment.Candidate.Lock == "fenced" {
			switch o.Status {
			case Failed:
				fencedFailed++
			case Skipped:
				fencedSkipped++
			}
		}
	}
	if fencedFailed != 1 || fencedSkipped == 0 {
		t.Errorf("fenced: %d failed, %d skipped; want 1 and the rest skipped", fencedFailed, fencedSkipped)
	}
	pg := Build(ev)
	if len(pg.Missing) == 0 || !strings.Contains(strings.Join(pg.Missing, "\n"), "did not start") {
		t.Errorf("missing %q does not say the candidate failed to start", pg.Missing)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev = Run(ctx, p, Deps{Run: fake})
	if !ev.Interrupted || ev.Outcomes[0].Status != Skipped {
		t.Errorf("cancelled run: interrupted %v, first %s", ev.Interrupted, ev.Outcomes[0].Status)
	}
	_ = sweep.LockSpec{}
}

// TestTTLForEachLock: a lock whose server counts leases its own way runs at
// the nearest TTL it grants: etcd and nats-kv in whole seconds (etcd from
// 2 s, NATS from 1 s), zk within the local members' session bounds; the
// others at the TTL asked.
func TestTTLForEachLock(t *testing.T) {
	for _, tc := range []struct {
		lock     string
		ttl, got time.Duration
	}{
		{lockimpl.LockSingle, 1600 * time.Millisecond, 1600 * time.Millisecond},
		{lockimpl.LockEtcd, 1600 * time.Millisecond, 2 * time.Second},
		{lockimpl.LockNatsKV, 1600 * time.Millisecond, 2 * time.Second},
		{lockimpl.LockNatsKV, 100 * time.Millisecond, time.Second},
		{lockimpl.LockZk, 100 * time.Millisecond, time.Second},
		{lockimpl.LockZk, 1600 * time.Millisecond, 1600 * time.Millisecond},
		{lockimpl.LockZk, time.Minute, 10 * time.Second},
	} {
		if got := ttlFor(tc.lock, tc.ttl); got != tc.got {
			t.Errorf("ttlFor(%s, %v) = %v, want %v", tc.lock, tc.ttl, got, tc.got)
		}
	}
}
