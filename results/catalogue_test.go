package results

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// fullFixture is a result with every figure of the catalogue measured, each
// count distinct per generator, so a figure merge forgot shows.
func fullFixture(t *testing.T, id string, gen int) *Result {
	t.Helper()
	r := fixture(t, id, fixtureOpts{incidents: true, servers: true, series: true, generatorID: gen, generators: 2})
	k := int64(gen + 1)
	for i, op := range []string{OpAcquireFailed, OpReleaseFailed, OpRenew, OpRenewFailed, OpBlocked, OpOverrun, OpResource} {
		r.Ops[op] = summaryOf(t, tailValues(200+gen*37, float64(50*(i+1)), 0.3), 0)
	}
	r.Ops[OpAcquire] = summaryOf(t, tailValues(5000, 180, 0.45), r.Ops[OpAcquireFailed].Count)
	r.Counters = Counters{Released: 11 * k, Renewed: 12 * k, Crashed: 13 * k, Paused: 14 * k, Scheduled: 15 * k, Served: 16 * k,
		Dropped: 17 * k, Late: 18 * k, Unfinished: 19 * k, Writes: 20 * k, Unreplicated: 21 * k}
	r.Incidents = Incidents{ExpiredDuringWork: 31 * k, ReleaseLost: 32 * k, RenewLost: 33 * k, WorkAborted: 34 * k, Overlaps: 35 * k,
		DoubleGrants: 15 * k, Overruns: 20 * k, FencingRejected: 36 * k, StaleWritesAccepted: 37 * k}
	r.Errors = map[string]int64{"timeout": 3 * k, "conn_refused": 4 * k}
	r.Fairness = NewFairness([]int64{100 * k, 120, 0, 90 * k}, 1500*float64(k))
	n := r.Contention.Acquired
	host := 0.35 * float64(k)
	r.Client = &Client{CPUUS: 5e5 * float64(k), CPUShare: 0.3 * float64(k), CPUs: 2, HostCPUShare: &host,
		Sent: &Sent{RoundTrips: 2 * n, Commands: 2 * n, ByCommand: map[string]int64{"set": n, "evalsha": n}}}
	r.Client.SetPerAcquire(r.Contention.Acquired)
	return r
}

// TestCatalogueWalk checks every figure of the catalogue is readable by
// --assert, appears in compare and in the report, and survives merge by its
// rule.
func TestCatalogueWalk(t *testing.T) {
	a, b := fullFixture(t, "gen-0", 0), fullFixture(t, "gen-1", 1)
	cmp := Compare([]*Result{a, b})
	rows := map[string]bool{}
	for _, row := range cmp.Rows {
		rows[row.Key] = true
	}
	var html bytes.Buffer
	if err := WriteReport(&html, []*Result{a, b}); err != nil {
		t.Fatal(err)
	}
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	figs := append(Catalogue(), errorKindFigure("timeout"))
	for _, f := range figs {
		t.Run(f.Name, func(t *testing.T) {
			if f.Label == "" || f.Unit == "" || f.Group == "" || f.Merge == "" || f.Key == "" {
				t.Fatalf("figure %+v is not fully defined", f)
			}
			if got, err := LookupFigure(f.Name); err != nil || got.Key != f.Key {
				t.Fatalf("LookupFigure(%q) = %q, %v", f.Name, got.Key, err)
			}
			if _, err := ParseAssertion(f.Name + ">=0"); err != nil {
				t.Fatalf("assert cannot read it: %v", err)
			}
			va, err := Metric(a, f.Name)
			if err != nil {
				t.Fatalf("not readable on a full result: %v", err)
			}
			vb, _ := Metric(b, f.Name)
			if !rows[f.Key] {
				t.Errorf("compare has no row %s", f.Key)
			}
			if !strings.Contains(html.String(), f.Key) {
				t.Errorf("the report does not show %s", f.Key)
			}
			vm, err := Metric(m, f.Name)
			if err != nil {
				t.Fatalf("merged result lacks it: %v", err)
			}
			checkMerged(t, f, va, vb, vm)
		})
	}
}

func checkMerged(t *testing.T, f Figure, a, b, m float64) {
	t.Helper()
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	switch f.Merge {
	case MergeSum:
		if !near(m, a+b) {
			t.Errorf("merged %v, want the sum %v + %v", m, a, b)
		}
	case MergeMax:
		if !near(m, max(a, b)) {
			t.Errorf("merged %v, want the larger of %v and %v", m, a, b)
		}
	case MergeHistogram:
		// A count adds up; a percentile or mean of the union lies between
		// the inputs'.
		if strings.HasSuffix(f.Name, ".count") {
			if !near(m, a+b) {
				t.Errorf("merged count %v, want %v + %v", m, a, b)
			}
		} else if m < min(a, b)*0.999 || m > max(a, b)*1.001 {
			t.Errorf("merged %v outside [%v, %v]", m, min(a, b), max(a, b))
		}
	case MergeClient:
		if strings.HasSuffix(f.Name, ".cpu_us") && !near(m, a+b) {
			t.Errorf("merged client cpu %v, want %v + %v", m, a, b)
		}
	case MergeRecompute, MergeWorkers, MergeServers:
		if math.IsNaN(m) || math.IsInf(m, 0) {
			t.Errorf("merged %v", m)
		}
	default:
		t.Errorf("unknown merge rule %q", f.Merge)
	}
}

func TestMergeRecomputesFairnessOverAllWorkers(t *testing.T) {
	a, b := fullFixture(t, "gen-0", 0), fullFixture(t, "gen-1", 1)
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := NewFairness(append(append([]int64(nil), a.Fairness.PerWorker...), b.Fairness.PerWorker...), 3000)
	if got := m.Fairness; got.Workers != 8 || got.Starved != 2 || math.Abs(got.Jain-want.Jain) > 1e-12 || got.WorstTimeToAcquireP99US != 3000 {
		t.Fatalf("merged fairness %+v, want %+v", got, want)
	}
}

func TestNewFairness(t *testing.T) {
	for _, tc := range []struct {
		workers       []int64
		jain          float64
		starved, minA int64
	}{
		{[]int64{10, 10, 10, 10}, 1, 0, 10},
		{[]int64{40, 0, 0, 0}, 0.25, 3, 0},
		{[]int64{0, 0}, 0, 2, 0},
	} {
		f := NewFairness(tc.workers, 0)
		if math.Abs(f.Jain-tc.jain) > 1e-12 || f.Starved != tc.starved || f.MinAcquired != tc.minA {
			t.Errorf("NewFairness(%v) = %+v, want jain %v starved %d min %d", tc.workers, f, tc.jain, tc.starved, tc.minA)
		}
	}
}

// TestViewsNameRealFigures keeps the table views (side by side, sweeps)
// from naming a figure the catalogue does not have.
func TestViewsNameRealFigures(t *testing.T) {
	for _, v := range []View{SideBySideView(), SweepView(), LockCostView(), FaultView()} {
		for _, name := range v.Defaults {
			if _, err := LookupFigure(name); err != nil {
				t.Errorf("view %s names %q: %v", v.Name, name, err)
			}
		}
	}
}

func TestLookupFigureRefusesUnknownNames(t *testing.T) {
	for name, want := range map[string]string{
		"acquire.p98":  "acquire has count errors p50 p90 p95 p99 p999 max mean",
		"fairness.x":   "fairness has min_acquired",
		"p99.x":        "for another operation write OP.p99",
		"colour":       "want one of",
		"counters.foo": "counters has scheduled served dropped late released",
	} {
		if _, err := LookupFigure(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LookupFigure(%q) = %v, want an error containing %q", name, err, want)
		}
	}
	if f, err := LookupFigure("p95"); err != nil || f.Key != "ops.acquire.latency_us.p95" {
		t.Errorf("p95 = %v, %v", f.Key, err)
	}
	_ = fmt.Sprint()
}
