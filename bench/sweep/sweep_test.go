package sweep

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

func TestParseList(t *testing.T) {
	for in, want := range map[string][]string{
		"1,8,32":                     {"1", "8", "32"},
		"single,redlock:3,redlock:5": {"single", "redlock:3", "redlock:5"},
		"zipf:1000,1.1,uniform:10":   {"zipf:1000,1.1", "uniform:10"},
		"hot:10,0.5,hot:10,0.9":      {"hot:10,0.5", "hot:10,0.9"},
		"uniform:1ms,5ms,exp:2ms":    {"uniform:1ms,5ms", "exp:2ms"},
		"zipf:10,1.1|zipf:10,2":      {"zipf:10,1.1", "zipf:10,2"},
		"1s, 5s":                     {"1s", "5s"},
		"ttl/3,ttl/5":                {"ttl/3", "ttl/5"},
	} {
		if got := ParseList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGridCells(t *testing.T) {
	g := Grid{Base: plan.Values{"duration": {"1s"}}, Axes: []Axis{
		{Flag: "concurrency", Values: []string{"1", "8"}},
		{Flag: "topology", Values: []string{"single", "redlock:3", "redlock:5"}},
	}}
	cells, err := g.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 6 {
		t.Fatalf("%d cells, want 6", len(cells))
	}
	if got := cells[4].Label(g.Axes); got != "concurrency=8 topology=redlock:3" {
		t.Fatalf("cell 4 = %s", got)
	}
	if cells[4].Values.Get("duration") != "1s" || cells[4].Values.Get("concurrency") != "8" {
		t.Fatalf("cell values %v", cells[4].Values)
	}
	bad := Grid{Axes: []Axis{{Flag: "concurrency", Values: []string{"1", "zero"}}}}
	if _, err := bad.Cells(); err == nil || !strings.Contains(err.Error(), "--concurrency") || !strings.Contains(err.Error(), "concurrency=zero") {
		t.Fatalf("bad cell error %v, want the flag and the cell named", err)
	}
	twice := Grid{Axes: []Axis{{Flag: "ttl", Values: []string{"1s", "2s", "1s"}}}}
	if _, err := twice.Cells(); err == nil || !plan.IsInputError(err) || !strings.Contains(err.Error(), "listed twice") {
		t.Fatalf("a value listed twice: %v, want bad input", err)
	}
	// A flag every cell shares is the user's input, not a cell's: no cell
	// is blamed (tune-ttl, whose cells vary only ttl and renew-every).
	shared := Grid{Base: plan.Values{"topology": {"redlock:3"}, "redis": {"redis://127.0.0.1:1"}}, Axes: []Axis{{Flag: "ttl", Values: []string{"1s", "2s"}}}}
	if _, err := shared.Cells(); err == nil || !plan.IsInputError(err) || strings.Contains(err.Error(), "ttl=1s") || !strings.Contains(err.Error(), "--redis") {
		t.Fatalf("shared bad input error %v, want --redis named and no cell blamed", err)
	}
}

func TestAxesFromValues(t *testing.T) {
	base, axes := AxesFromValues(plan.Values{"concurrency": {"1,8"}, "topology": {"single", "redlock:3"}, "ttl": {"5s"}, "keys": {"zipf:10,1.1"}},
		[]string{"topology", "concurrency", "ttl", "keys"})
	if len(axes) != 2 || axes[0].Flag != "topology" || axes[1].Flag != "concurrency" {
		t.Fatalf("axes %+v", axes)
	}
	if base.Get("ttl") != "5s" || base.Get("keys") != "zipf:10,1.1" {
		t.Fatalf("base %v", base)
	}
}

func TestParseFile(t *testing.T) {
	good := `
base:
  duration: 1s
  keys: unique
axes:
  concurrency: [1, 8]
  topology: [single, "redlock:3"]
count: 2
assert:
  - acquire.p99<50ms
`
	g, err := ParseFile("plan.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 2 || len(g.Axes) != 2 || g.Axes[1].Values[1] != "redlock:3" || g.Base.Get("keys") != "unique" || len(g.Asserts) != 1 {
		t.Fatalf("grid %+v", g)
	}
	for _, tc := range []struct{ doc, want string }{
		{"base:\n  duration: 1s\nbogus: 1\n", "plan.yaml:3: unknown key \"bogus\""},
		{"axes:\n  concurrency: [1]\n  colour: [red]\n", "plan.yaml:3: unknown run flag \"colour\""},
		{"base:\n  nope: 1\n", "plan.yaml:2: unknown run flag \"nope\""},
		{"count: many\n", "plan.yaml:1: count"},
		{"axes:\n  concurrency: []\n", "no values"},
		{"- a\n- b\n", "must be a mapping"},
		{"base: [\n", "plan.yaml"},
		{"base:\n  duration: 1s\n  duration: 2s\n", "plan.yaml:3: \"duration\" is given twice (first on line 2)"},
		{"axes:\n  ttl: [1s]\n  ttl: [2s]\n", "plan.yaml:3: \"ttl\" is given twice"},
		{"count: 1\ncount: 2\n", "plan.yaml:2: \"count\" is given twice"},
		{"base:\n  ttl: 1s\naxes:\n  ttl: [1s, 2s]\n", "both in base and in axes"},
	} {
		_, err := ParseFile("plan.yaml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFile(%q) = %v, want an error containing %q", tc.doc, err, tc.want)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add("base:\n  duration: 1s\naxes:\n  concurrency: [1, 8]\n")
	f.Add("count: 3\nassert: [p99<1ms]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		_, _ = ParseFile("f.yaml", []byte(doc))
	})
}

func FuzzParseList(f *testing.F) {
	f.Add("zipf:10,1.1,uniform:3")
	f.Add("1,,2|3")
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range ParseList(s) {
			if strings.Contains(s, "|") && strings.Contains(v, "|") {
				t.Fatalf("%q kept a separator in %q", s, v)
			}
		}
	})
}

// curve fakes a step runner: throughput rises with load to a ceiling, and
// p99 grows as load approaches it.
func curve(ceiling float64, noise func(load float64) float64) StepRunner {
	n := 0
	return func(_ context.Context, load float64) (*results.Result, error) {
		n++
		tput := ceiling * (1 - math.Exp(-load/8))
		if noise != nil {
			tput *= noise(load)
		}
		p99 := 200 + 100*load
		return &results.Result{ID: fmt.Sprintf("run-%d", n), Throughput: results.Throughput{AcquiredPerS: tput},
			Ops: map[string]results.OpSummary{results.OpTimeToAcquire: {Count: 1, LatencyUS: results.Percentiles{P99: p99}}}}, nil
	}
}

func slo(t *testing.T, exprs ...string) []results.Assertion {
	var out []results.Assertion
	for _, e := range exprs {
		a, err := results.ParseAssertion(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func TestCapacitySLOBreaks(t *testing.T) {
	c, err := Search(context.Background(), "single", DefaultRamp(), slo(t, "p99<2ms"), curve(10000, nil))
	if err != nil {
		t.Fatal(err)
	}
	// p99 = 200 + 100·load µs: load 16 gives 1.8 ms, load 32 breaks the SLO.
	if last := c.Steps[len(c.Steps)-1]; last.MetSLO || last.Load != 32 {
		t.Fatalf("last step %+v, want the SLO broken at 32", last)
	}
	if c.Saturation == nil || c.Saturation.Load != 16 || !strings.Contains(c.Stop, "SLO broken") {
		t.Fatalf("saturation %+v, stop %q", c.Saturation, c.Stop)
	}
	if c.Knee == nil || c.Knee.Load > c.Saturation.Load {
		t.Fatalf("knee %+v beyond saturation", c.Knee)
	}
}

func TestCapacityFlatThroughput(t *testing.T) {
	c, err := Search(context.Background(), "single", DefaultRamp(), slo(t, "p99<1s"), curve(10000, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Stop, "stopped growing") {
		t.Fatalf("stop %q, want throughput stopped growing", c.Stop)
	}
	if c.Saturation == nil || c.Saturation.Throughput < 9000 {
		t.Fatalf("saturation %+v", c.Saturation)
	}
}

func TestCapacityNeverSaturates(t *testing.T) {
	linear := func(_ context.Context, load float64) (*results.Result, error) {
		return &results.Result{ID: "r", Throughput: results.Throughput{AcquiredPerS: 1000 * load},
			Ops: map[string]results.OpSummary{results.OpTimeToAcquire: {Count: 1, LatencyUS: results.Percentiles{P99: 100}}}}, nil
	}
	c, err := Search(context.Background(), "x", Ramp{Start: 1, Max: 16, Factor: 2, MinGain: 0.05, Patience: 2}, nil, linear)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 5 || !strings.Contains(c.Stop, "without saturating") {
		t.Fatalf("%d steps, stop %q", len(c.Steps), c.Stop)
	}
}

func TestCapacityNoisyCurveNeedsPatience(t *testing.T) {
	// One dip at load 4 must not end the search.
	dip := func(load float64) float64 {
		if load == 4 {
			return 0.5
		}
		return 1
	}
	c, err := Search(context.Background(), "x", DefaultRamp(), nil, curve(10000, dip))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) < 5 {
		t.Fatalf("search stopped after %d steps on one noisy dip: %s", len(c.Steps), c.Stop)
	}
}

func TestRecommend(t *testing.T) {
	judged := func(cells ...TuneCell) []TuneCell {
		for i := range cells {
			cells[i] = cells[i].judged(1e-4)
		}
		return cells
	}
	cells := judged(
		TuneCell{TTL: "1s", RenewEvery: "0", Acquired: 100_000, Expired: 60_000},
		TuneCell{TTL: "1s", RenewEvery: "ttl/3", Acquired: 100_000, RenewPerS: 30, BlockedP99US: 1e6, BlockedSamples: 5},
		TuneCell{TTL: "4s", RenewEvery: "0", Acquired: 100_000, BlockedP99US: 4e6, BlockedSamples: 5},
		TuneCell{TTL: "1s", RenewEvery: "ttl/5", Acquired: 100_000, RenewPerS: 50, BlockedP99US: 1e6, BlockedSamples: 5},
	)
	rec := Recommend(cells, 1e-4)
	if rec.Best == nil || rec.Best.RenewEvery != "ttl/3" || !strings.Contains(rec.Why, "TTL 1s") {
		t.Fatalf("recommendation %+v", rec)
	}
	none := Recommend(cells[:1], 1e-4)
	if none.Best != nil || none.Closest == nil || !strings.Contains(none.Why, "No cell is proven") || !strings.Contains(none.Why, "lengthen the TTL") {
		t.Fatalf("no-cell recommendation %+v", none)
	}
	// 0 of 184 is a rate of 0 but proves only ≤ 0.016: never RECOMMENDED
	// against a 1e-4 target, and the verdict says how many more it takes.
	few := judged(TuneCell{TTL: "2s", RenewEvery: "0", Acquired: 184})
	if few[0].Meets {
		t.Fatalf("0 of 184 meets a 1e-4 target: %+v", few[0])
	}
	rec = Recommend(few, 1e-4)
	if rec.Best != nil || !strings.Contains(rec.Why, "29773 more acquisitions") {
		t.Fatalf("recommendation %+v, want none and 29957 (−ln 0.05 / 1e-4) − 184 more acquisitions named", rec)
	}
}

// openLoopCurve fakes an open-loop step: the lock serves at most ceiling
// requests/s, and the rest queue in the generator, so time_to_acquire grows
// while the service time (acquire) stays flat.
func openLoopCurve(ceiling float64) StepRunner {
	n := 0
	return func(_ context.Context, load float64) (*results.Result, error) {
		n++
		served := min(load, ceiling)
		tta := 300.0
		if load > ceiling {
			tta = 500_000
		}
		return &results.Result{ID: fmt.Sprintf("run-%d", n), Throughput: results.Throughput{AcquiredPerS: served},
			Counts: results.Counts{Counters: results.Counters{Scheduled: int64(load), Served: int64(served), Dropped: int64(load - served)}},
			Ops: map[string]results.OpSummary{
				results.OpAcquire:       {Count: 1, LatencyUS: results.Percentiles{P99: 200}},
				results.OpTimeToAcquire: {Count: 1, LatencyUS: results.Percentiles{P99: tta}},
			}}, nil
	}
}

func TestCapacityOpenLoopReadsTimeToAcquireAndSaturates(t *testing.T) {
	ramp := Ramp{Start: 500, Max: 32000, Factor: 2, MinGain: 0.05, Patience: 2, OpenLoop: true}
	c, err := Search(context.Background(), "single", ramp, slo(t, "p99<5ms"), openLoopCurve(1500))
	if err != nil {
		t.Fatal(err)
	}
	last := c.Steps[len(c.Steps)-1]
	if last.Load != 2000 || last.MetSLO || last.LatencyOp != results.OpTimeToAcquire || last.P99US != 500_000 {
		t.Fatalf("last step %+v: want 2000/s saturated, reporting time_to_acquire's p99", last)
	}
	if !strings.Contains(last.Broken[0], "saturated: served 1500 of 2000") || !strings.Contains(strings.Join(last.Broken, " "), "p99<5ms: 500.0ms") {
		t.Fatalf("broken %v: want saturation and the SLO on time_to_acquire", last.Broken)
	}
	if c.Saturation == nil || c.Saturation.Load != 1000 {
		t.Fatalf("saturation %+v, want the 1000/s step", c.Saturation)
	}
	var buf bytes.Buffer
	if err := WriteCapacity(&buf, []Capacity{c}, "rate"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"time_to_acquire", "SLO judged on time_to_acquire", "1500/2000", "rate 2000 broke: saturated", "open loop:"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestOpenLoopStepToleratesOnlyEdgeDrops: a request intended in the window's
// last millisecond and not started when it closed was not late, so it does
// not prove the step saturated; one more drop does.
func TestOpenLoopStepToleratesOnlyEdgeDrops(t *testing.T) {
	ramp := Ramp{OpenLoop: true}
	for _, tc := range []struct {
		name                       string
		scheduled, served, dropped int64
		durationS                  float64
		saturated                  bool
	}{
		{"none dropped", 2000, 2000, 0, 1, false},
		{"one unstarted at the close of 2000/s", 2000, 1999, 1, 1, false},
		{"two at 2000/s: both may be in the last ms", 2000, 1998, 2, 1, false},
		{"three at 2000/s: one was already late", 2000, 1997, 3, 1, true},
		{"one at 200/s over 1 s", 200, 199, 1, 1, false},
		{"two at 200/s over 1 s", 200, 198, 2, 1, true},
		{"served under 95%", 2000, 1800, 0, 1, true},
		{"no duration recorded: every drop counts", 2000, 1999, 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &results.Result{ID: "r", DurationS: tc.durationS,
				Counts: results.Counts{Counters: results.Counters{Scheduled: tc.scheduled, Served: tc.served, Dropped: tc.dropped}},
				Ops:    map[string]results.OpSummary{results.OpTimeToAcquire: {Count: 1, LatencyUS: results.Percentiles{P99: 100}}}}
			s := stepOf(float64(tc.scheduled), r, nil, ramp)
			if s.MetSLO == tc.saturated {
				t.Errorf("met SLO %v, broken %v: want saturated %v", s.MetSLO, s.Broken, tc.saturated)
			}
		})
	}
}

// TestGridRefusesOneHistoryFileForManyRuns: one file would keep only the
// last cell's history; a DIR/ or {id} gives each its own, and off none.
func TestGridRefusesOneHistoryFileForManyRuns(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		history string
		ok      bool
	}{
		{dir + "/h.jsonl.gz", false},
		{dir + "/", true},
		{dir + "/{id}.jsonl.gz", true},
		{"off", true},
	} {
		g := Grid{Base: plan.Values{"history": {tc.history}}, Axes: []Axis{{Flag: "concurrency", Values: []string{"1", "2"}}}, Count: 1}
		_, err := g.Cells()
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--history")) {
			t.Errorf("--history %s: %v", tc.history, err)
		}
	}
}

// TestRecommendIdleRenewalAndTieBreak plants tune-ttl's cells of a 20ms hold
// with renewal every ttl/3: no renewal fires (every hold ends first), so
// each ttl/3 cell is renewal off in effect and never preferred to its off
// cell, and where no cell is proven the closest is chosen among the cells
// whose 95% intervals overlap by the stated tie-break (shorter blocking).
func TestRecommendIdleRenewalAndTieBreak(t *testing.T) {
	cell := func(ttl, renew string, acquired, expired int64, blockedUS float64) TuneCell {
		return TuneCell{TTL: ttl, RenewEvery: renew, Acquired: acquired, Expired: expired, BlockedP99US: blockedUS, BlockedSamples: 5}.judged(1e-4)
	}
	cells := []TuneCell{
		cell("100ms", "0", 984, 14, 243_300), cell("100ms", "ttl/3", 1143, 4, 139_000),
		cell("500ms", "0", 660, 0, 547_800), cell("500ms", "ttl/3", 731, 0, 533_500),
		cell("1s", "0", 551, 0, 1_050_000), cell("1s", "ttl/3", 562, 0, 1_030_000),
	}
	rec := Recommend(cells, 1e-4)
	if rec.Best != nil || rec.Closest == nil || rec.Closest.TTL != "500ms" || renewLabel(rec.Closest.RenewEvery) != "off" {
		t.Fatalf("recommendation %+v: want no cell proven and the closest TTL 500ms off", rec)
	}
	for _, want := range []string{"tie-break", "No renewal fired in TTL 100ms every ttl/3", "29"} {
		if !strings.Contains(rec.Why, want) {
			t.Errorf("why %q lacks %q", rec.Why, want)
		}
	}
	if cells[0].Word != verdict.Fails {
		t.Errorf("14 of 984 outlived their lease against 1e-4: %s, want fails", cells[0].Word)
	}
	if cells[2].Word != verdict.TooThin {
		t.Errorf("0 of 660 against 1e-4: %s, want too thin", cells[2].Word)
	}
}
