package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

func TestParseLockSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want LockSpec
		err  string
	}{
		{in: "fenced", want: LockSpec{"fenced", "single"}},
		{in: "redsync@redlock:5", want: LockSpec{"redsync", "redlock:5"}},
		{in: " redislock@replicated ", want: LockSpec{"redislock", "replicated"}},
		{in: "", err: "no lock name"},
		{in: "@single", err: "no lock name"},
		{in: "redsync@", err: "no topology"},
		{in: "redsync@redlock:0", err: "master count"},
	} {
		got, err := ParseLockSpec(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "NAME[@TOPOLOGY]") && tc.err != "master count"):
			t.Errorf("%q: %v, want an error saying %q and what is accepted", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseLockSpec(f *testing.F) {
	for _, s := range []string{"single", "redsync@redlock:5", "x@", "@", "a@b@c", "redlock@redlock"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseLockSpec(s)
		if err != nil {
			return
		}
		again, err := ParseLockSpec(spec.String())
		if err != nil || again != spec {
			t.Fatalf("%q parsed to %+v, rendered %q, parsed back to %+v (%v)", s, spec, spec.String(), again, err)
		}
	})
}

func TestCanonicalFault(t *testing.T) {
	for _, tc := range []struct {
		topology, ttl, duration string
		fault                   string
		window                  time.Duration
	}{
		{"redlock:5", "10s", "5s", "at=0s kill node=0", 5 * time.Second},
		{"single", "10s", "5s", "at=2.5s pause node=0 for=11s", 16 * time.Second},
		{"single", "300ms", "2s", "at=1s pause node=0 for=330ms", 2330 * time.Millisecond},
		{"replicated", "10s", "5s", "at=1s kill primary", 5 * time.Second},
		{"cluster:3", "10s", "5s", "at=1s kill master=0", 5 * time.Second},
		{"etcd:3", "10s", "5s", "at=1s kill leader", 5 * time.Second},
	} {
		fault, window, err := CanonicalFault(tc.topology, tc.ttl, tc.duration)
		if err != nil || fault.String() != tc.fault || window != tc.window {
			t.Errorf("%s: %q over %v (%v), want %q over %v", tc.topology, fault, window, err, tc.fault, tc.window)
		}
	}
}

func TestCostPlanValues(t *testing.T) {
	base := plan.Values{"fail-fast": {"true"}, "peer-option": {"tries=2"}, "duration": {"1s"}}
	cp := CostPlan{Locks: []LockSpec{{"redlock", "redlock:3"}, {"redsync", "redlock:3"}}, Base: base, WithFault: true}
	own, err := cp.values(cp.Locks[0], false)
	if err != nil || own.Get("fail-fast") != "true" || own.Has("peer-option") {
		t.Fatalf("redlock's flags %v (%v): want its own fail-fast and no peer option", own, err)
	}
	peer, err := cp.values(cp.Locks[1], true)
	if err != nil || peer.Has("fail-fast") || peer.Get("peer-option") != "tries=2" || peer.Get("fault") != "at=0s kill node=0" {
		t.Fatalf("redsync's faulted flags %v (%v)", peer, err)
	}
	if own.Get("label") != "lock-cost redlock@redlock:3" || peer.Get("label") != "lock-cost redsync@redlock:3 with at=0s kill node=0" {
		t.Errorf("runs named %q and %q; want the lock, and its fault where it has one", own.Get("label"), peer.Get("label"))
	}
	labelled := CostPlan{Locks: cp.Locks, Base: plan.Values{"label": {"before-upgrade"}}}
	if v, _ := labelled.values(cp.Locks[0], false); v.Get("label") != "before-upgrade redlock@redlock:3" {
		t.Errorf("with --label before-upgrade a run is named %q; want the label first", v.Get("label"))
	}
	if err := cp.Check(); err != nil {
		t.Fatalf("check: %v", err)
	}

	ext := CostPlan{Locks: []LockSpec{{"single", "single"}, {"redlock", "redlock:2"}, {"redlock", "redlock"}},
		Base: plan.Values{"redis": {"redis://a:1", "redis://b:2", "redis://c:3"}}}
	for i, want := range []int{1, 2, 3} {
		v, err := ext.values(ext.Locks[i], false)
		if err != nil || len(v["redis"]) != want {
			t.Errorf("%s on 3 external servers: %v (%v), want the first %d", ext.Locks[i], v["redis"], err, want)
		}
	}
	if _, err := ext.values(LockSpec{"redlock", "redlock:5"}, false); err == nil || !plan.IsInputError(err) {
		t.Errorf("redlock:5 on 3 servers: %v, want an input error", err)
	}
	for name, bad := range map[string]CostPlan{
		"fault on external servers":             {Locks: ext.Locks, Base: ext.Base, WithFault: true},
		"peer option without a peer":            {Locks: []LockSpec{{"single", "single"}}, Base: plan.Values{"peer-option": {"tries=2"}}},
		"a lock on a topology it cannot run on": {Locks: []LockSpec{{"redislock", "redlock:3"}}},
		"no locks":                              {},
		"a lock given twice":                    {Locks: []LockSpec{{"single", "single"}, {"fenced", "single"}, {"single", "single"}}},
	} {
		if err := bad.Check(); err == nil || !plan.IsInputError(err) {
			t.Errorf("%s: %v, want an input error", name, err)
		}
	}
}

// TestRunCostRunsEachLockAndFault: every lock runs Count times healthy and
// Count times under its fault, each set its own group, the locks taking
// turns repeat by repeat.
func TestRunCostRunsEachLockAndFault(t *testing.T) {
	cp := CostPlan{Locks: []LockSpec{{"single", "single"}, {"redsync", "redlock:3"}}, Base: plan.Values{"duration": {"2s"}}, Count: 2, WithFault: true}
	var calls []string
	groups := map[string]int{}
	run := func(_ context.Context, v plan.Values, group string, repeat int) (*results.Result, error) {
		calls = append(calls, fmt.Sprintf("%s@%s %s %s", v.Get("lock"), v.Get("topology"), v.Get("duration"), v.Get("fault")))
		groups[group]++
		return &results.Result{ID: fmt.Sprintf("r%d", len(calls))}, nil
	}
	rows, err := RunCost(context.Background(), cp, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 8 || len(groups) != 4 || len(rows) != 2 || len(rows[1].Faulted) != 2 || rows[1].Fault != "at=0s kill node=0" {
		t.Fatalf("calls %q, groups %v, rows %+v", calls, groups, rows)
	}
	if calls[1] != "single@single 13s at=1s pause node=0 for=11s" {
		t.Fatalf("single's fault run: %q", calls[1])
	}
	if want := []string{"single@single 2s ", "redsync@redlock:3 2s "}; calls[0] != want[0] || calls[2] != want[1] || calls[4] != want[0] || calls[6] != want[1] {
		t.Fatalf("calls %q: want the locks taking turns, repeat by repeat", calls)
	}
}

// costFixture is three runs of each lock, with histograms (for p95) and
// client CPU, and one master killed / one pause for the fault runs.
func costFixture(t *testing.T, provider string, cpus int) []CostRuns {
	t.Helper()
	locks := []struct {
		spec    LockSpec
		f       figures
		client  float64
		fault   string
		faulted figures
		errs    int64
	}{
		{LockSpec{"single", "single"}, figures{thr: 21800, p50: 690, p99: 1450, p999: 3100, cmds: 3.02, cpu: 4.0}, 31.5,
			"at=2.5s pause node=0 for=11s", figures{thr: 6600, p50: 700, p99: 3_000_000, p999: 3_000_000, cmds: 3.1, cpu: 4.1}, 48},
		{LockSpec{"redlock", "redlock:5"}, figures{thr: 9400, p50: 1610, p99: 3900, p999: 14500, cmds: 20.0, cpu: 21.3}, 76.0,
			"at=0s kill node=0", figures{thr: 9900, p50: 1500, p99: 3600, p999: 12100, cmds: 16.0, cpu: 17.9}, 0},
		{LockSpec{"redsync", "redlock:5"}, figures{thr: 8100, p50: 1900, p99: 4400, p999: 15900, cmds: 20.4, cpu: 24.2}, 88.0,
			"at=0s kill node=0", figures{thr: 8400, p50: 1800, p99: 4100, p999: 14100, cmds: 16.2, cpu: 19.1}, 0},
	}
	var rows []CostRuns
	for _, l := range locks {
		row := CostRuns{Spec: l.spec, Fault: l.fault}
		for i := range 3 {
			jitter := 1 + 0.01*float64(i-1)
			f := l.f
			f.thr *= jitter
			r := fakeRun(t, fmt.Sprintf("%s-%d", l.spec.Lock, i), l.spec.Topology, provider, cpus, f)
			withHistogram(t, r, f)
			r.Client = &results.Client{CPUUS: l.client * r.Throughput.AcquiredPerS * 10}
			r.Client.SetPerAcquire(r.Contention.Acquired)
			row.Runs = append(row.Runs, r)
			d := fakeRun(t, fmt.Sprintf("%s-fault-%d", l.spec.Lock, i), l.spec.Topology, provider, cpus, l.faulted)
			d.Errors["conn_refused"] = l.errs
			withSeries(d, l.fault)
			row.Faulted = append(row.Faulted, d)
		}
		rows = append(rows, row)
	}
	return rows
}

// withSeries gives a faulted run a 10s window's per-second series and its
// fault: the single server paused at 2.5s acquires in its first 3 seconds
// only (3 of 10 seconds, 1 of the 8 the pause spans); a killed Redlock
// master leaves a quorum acquiring every second.
func withSeries(r *results.Result, fault string) {
	r.DurationS = 10
	r.Faults = []results.FaultEvent{{Spec: fault}}
	paused := strings.Contains(fault, "pause")
	if paused {
		r.Faults[0].AtS, r.Faults[0].EndS = 2.5, 13.5
	}
	for s := 1; s <= 10; s++ {
		p := results.SeriesPoint{ElapsedS: float64(s), Acquired: 100}
		if paused && s > 3 {
			p.Acquired = 0
		}
		r.Series = append(r.Series, p)
	}
}

// withHistogram stores an acquire histogram whose p95 lies between p50 and p99.
func withHistogram(t *testing.T, r *results.Result, f figures) {
	t.Helper()
	h := results.NewHistogram()
	for _, vc := range []struct {
		v float64
		n int64
	}{{f.p50, 900}, {(f.p50 + f.p99) / 2, 60}, {f.p99, 30}, {f.p999, 10}} {
		if err := h.RecordValues(int64(vc.v), vc.n); err != nil {
			t.Fatal(err)
		}
	}
	s, err := results.Summarize(h, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Ops[results.OpAcquire] = s
}

func TestWriteLockCostGolden(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		rows       []CostRuns
		want       []string
	}{
		{"shared cpus", "lock-cost.txt", costFixture(t, "local", 2),
			[]string{"note: redlock:5 (5 servers) shared", "fault redsync@redlock:5: at=0s kill node=0", "8100 ±1% (0.37x)", "21800 ±1%", " 3.02 |", "20.00 (6.62x)"}},
		{"external", "lock-cost-external.txt", costFixture(t, "external", 0), []string{"30.3%", "103.7%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteLockCost(&buf, tc.rows, nil); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.want {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, buf.String())
				}
			}
			golden(t, tc.file, buf.Bytes())
		})
	}
}

// TestLockCostMissingFigures: a lock without server figures (INFO refused)
// or client figures shows "-" for them and their ratios, not a measured 0.
func TestLockCostMissingFigures(t *testing.T) {
	rows := costFixture(t, "external", 0)
	rows[1].Runs[1].Servers = &results.Servers{Unavailable: "INFO refused"}
	rows[1].Runs[2].Client = nil
	rows = rows[:2]
	sums := SummarizeCost(rows)
	for _, key := range []string{"servers.commands_per_acquire", "servers.cpu_us_per_acquire", "client.cpu_us_per_acquire"} {
		if _, ok := sums[1].Figures[key]; ok || sums[1].Ratios[key] != "-" {
			t.Errorf("%s: figure %v ratio %q, want missing", key, sums[1].Figures[key], sums[1].Ratios[key])
		}
		if _, ok := sums[0].Figures[key]; !ok {
			t.Errorf("%s missing from the lock that measured it", key)
		}
	}
	var buf bytes.Buffer
	if err := WriteLockCostJSON(&buf, rows); err != nil {
		t.Fatal(err)
	}
	var back []CostSummary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back) != 2 || back[1].Fault == nil || back[1].Fault.Kept == nil {
		t.Fatalf("json %v:\n%s", err, buf.String())
	}
	if p95 := back[0].Figures["acquire.p95"].Median; p95 <= 690 || p95 >= 1450 {
		t.Errorf("p95 %v, want between p50 and p99", p95)
	}
}
