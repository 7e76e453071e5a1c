package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

func TestCapacityRamp(t *testing.T) {
	for _, tc := range []struct {
		name             string
		given            plan.Values
		start, max       float64
		startSet, maxSet bool
		want             Ramp
		load             string
		err              string
	}{
		{name: "concurrency", given: plan.Values{}, start: 1, max: 128, want: Ramp{Start: 1, Max: 128}, load: LoadConcurrency},
		{name: "rate starts the ramp", given: plan.Values{"rate": {"500"}}, start: 1, max: 128, want: Ramp{Start: 500, Max: 32000, OpenLoop: true}, load: LoadRate},
		{name: "N/DURATION", given: plan.Values{"rate": {"50/100ms"}}, start: 1, max: 128, want: Ramp{Start: 500, Max: 32000, OpenLoop: true}, load: LoadRate},
		{name: "start and max given", given: plan.Values{"rate": {"500"}}, start: 100, max: 400, startSet: true, maxSet: true, want: Ramp{Start: 100, Max: 400, OpenLoop: true}, load: LoadRate},
		{name: "staged rate", given: plan.Values{"rate": {"100,2000:30s"}}, start: 1, max: 128, err: "capacity ramps the rate itself"},
		{name: "zero rate", given: plan.Values{"rate": {"0"}}, start: 1, max: 128, err: "want a positive number"},
		{name: "bad rate", given: plan.Values{"rate": {"fast"}}, start: 1, max: 128, err: `--rate "fast": not a number`},
		{name: "pipelined", given: plan.Values{"pipeline": {"auto"}}, start: 1, max: 128, want: Ramp{Start: PipelinedStart, Max: PipelinedMax}, load: LoadConcurrency},
		{name: "pipelined, start and max given", given: plan.Values{"pipeline": {"auto"}}, start: 64, max: 256, startSet: true, maxSet: true, want: Ramp{Start: 64, Max: 256}, load: LoadConcurrency},
		{name: "pipelined open loop ramps the rate", given: plan.Values{"pipeline": {"auto"}, "rate": {"500"}}, start: 1, max: 128, want: Ramp{Start: 500, Max: 32000, OpenLoop: true}, load: LoadRate},
		{name: "max below start", given: plan.Values{}, start: 8, max: 4, startSet: true, maxSet: true, err: "capacity: ramp from 8 to 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ramp := DefaultRamp()
			ramp.Start, ramp.Max = tc.start, tc.max
			got, load, err := CapacityRamp(tc.given, ramp, tc.startSet, tc.maxSet)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line with %q", err, tc.err)
				}
				return
			}
			if err != nil || load != tc.load || got.Start != tc.want.Start || got.Max != tc.want.Max || got.OpenLoop != tc.want.OpenLoop {
				t.Fatalf("ramp %+v load %q err %v; want %+v %q", got, load, err, tc.want, tc.load)
			}
		})
	}
}

func TestCapacitySearchEveryTopology(t *testing.T) {
	var ran []string
	run := func(_ context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		ran = append(ran, v.Get("topology")+"@"+v.Get("concurrency"))
		return &results.Result{ID: "r", Throughput: results.Throughput{AcquiredPerS: 100},
			Ops: map[string]results.OpSummary{results.OpAcquire: {Count: 1, LatencyUS: results.Percentiles{P99: 100}}}}, nil
	}
	ramp := Ramp{Start: 1, Max: 2, Factor: 2, MinGain: 0.05, Patience: 5}
	var told []string
	s := CapacitySearch{Given: plan.Values{"topology": {"single", "redlock:3"}}, Ramp: ramp, LoadFlag: LoadConcurrency, Run: run,
		OnStep: func(topo, load string) { told = append(told, topo+"@"+load) }}
	caps, all, err := s.Search(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "single@1 single@2 redlock:3@1 redlock:3@2"
	if strings.Join(ran, " ") != want || strings.Join(told, " ") != want {
		t.Fatalf("ran %v, told %v; want %s", ran, told, want)
	}
	if len(caps) != 2 || caps[1].Label != "redlock:3" || len(all) != 4 {
		t.Fatalf("%d capacities (%+v), %d results; want 2 and 4", len(caps), caps, len(all))
	}

	bad := CapacitySearch{Given: plan.Values{"topology": {"single", "nonsense"}}, Ramp: ramp, LoadFlag: LoadConcurrency, Run: run}
	ran = nil
	if _, _, err := bad.Search(context.Background()); err == nil || !plan.IsInputError(err) || len(ran) != 0 {
		t.Fatalf("bad topology: %v after runs %v, want bad input before any run", err, ran)
	}
	twice := CapacitySearch{Given: plan.Values{"topology": {"redlock:3", "single", "redlock:3"}}, Ramp: ramp, LoadFlag: LoadConcurrency, Run: run}
	if _, _, err := twice.Search(context.Background()); err == nil || !plan.IsInputError(err) || !strings.Contains(err.Error(), "given twice") || len(ran) != 0 {
		t.Fatalf("a topology twice: %v after runs %v, want bad input before any run", err, ran)
	}

	failing := CapacitySearch{Ramp: ramp, LoadFlag: LoadConcurrency, Run: func(context.Context, plan.Values, string, int) (*results.Result, error) {
		return nil, errors.New("server down")
	}}
	if _, _, err := failing.Search(context.Background()); err == nil || !strings.Contains(err.Error(), "server down") {
		t.Fatalf("failing run: %v, want its error", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	interrupted := CapacitySearch{Ramp: ramp, LoadFlag: LoadConcurrency, Run: func(c context.Context, v plan.Values, g string, i int) (*results.Result, error) {
		r, err := run(c, v, g, i)
		cancel()
		return r, err
	}}
	caps, _, err = interrupted.Search(ctx)
	if err != nil || len(caps) != 1 || caps[0].Stop != "interrupted" || len(caps[0].Steps) == 0 {
		t.Fatalf("interrupted: %+v, %v; want one search stopped as interrupted with its steps", caps, err)
	}
}

func TestAxesFromValuesKeepsStagedRateWhole(t *testing.T) {
	base, axes := AxesFromValues(plan.Values{"rate": {"100,2000:30s,2000:1m"}}, []string{"rate"})
	if len(axes) != 0 || base.Get("rate") != "100,2000:30s,2000:1m" {
		t.Fatalf("staged rate: axes %+v base %v; want one base value", axes, base)
	}
	_, axes = AxesFromValues(plan.Values{"rate": {"100,2000:30s|50,500:10s"}}, []string{"rate"})
	if len(axes) != 1 || len(axes[0].Values) != 2 || axes[0].Values[1] != "50,500:10s" {
		t.Fatalf("two staged rates: axes %+v", axes)
	}
	_, axes = AxesFromValues(plan.Values{"rate": {"100,200"}}, []string{"rate"})
	if len(axes) != 1 || len(axes[0].Values) != 2 {
		t.Fatalf("two constant rates: axes %+v, want an axis of two", axes)
	}
}

// TestCapacityStepsAreLabelled: every step is named by its topology and load,
// after the search's own label, so a report of a search tells them apart.
func TestCapacityStepsAreLabelled(t *testing.T) {
	var labels []string
	run := func(_ context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		labels = append(labels, v.Get("label"))
		return &results.Result{ID: "r", Throughput: results.Throughput{AcquiredPerS: 100},
			Ops: map[string]results.OpSummary{results.OpAcquire: {Count: 1, LatencyUS: results.Percentiles{P99: 100}}}}, nil
	}
	ramp := Ramp{Start: 1, Max: 2, Factor: 2, MinGain: 0.05, Patience: 5}
	for given, want := range map[string]string{
		"":     "single concurrency=1|single concurrency=2",
		"prod": "prod single concurrency=1|prod single concurrency=2",
	} {
		labels = nil
		v := plan.Values{}
		if given != "" {
			v.Set("label", given)
		}
		s := CapacitySearch{Given: v, Ramp: ramp, LoadFlag: LoadConcurrency, Run: run}
		if _, _, err := s.Search(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(labels, "|"); got != want {
			t.Errorf("--label %q: steps labelled %q, want %q", given, got, want)
		}
	}
}
