package results

import (
	"math"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results/resultstest"
)

// fixtureStart is the fixed start of every fixture run, so golden files do
// not depend on the clock.
func fixtureStart() time.Time { return time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC) }

// tailValues returns n deterministic latencies in µs with a long tail:
// base × (1/(1-u))^tail over evenly spaced u, i.e. a Pareto-like shape.
func tailValues(n int, base, tail float64) []int64 {
	vs := make([]int64, n)
	for i := range vs {
		u := (float64(i) + 0.5) / float64(n)
		vs[i] = int64(math.Max(1, base*math.Pow(1/(1-u), tail)))
	}
	return vs
}

func histOf(t testing.TB, vs []int64) *hdr.Histogram {
	t.Helper()
	h := NewHistogram()
	for _, v := range vs {
		if err := h.RecordValue(v); err != nil {
			t.Fatalf("record %d: %v", v, err)
		}
	}
	return h
}

func summaryOf(t testing.TB, vs []int64, errs int64) OpSummary {
	t.Helper()
	s, err := Summarize(histOf(t, vs), errs)
	if err != nil {
		t.Fatalf("summarize: %v", err)
	}
	return s
}

// fixtureOpts varies the fixture runs along what the tests need.
type fixtureOpts struct {
	slow        float64 // latency multiplier; throughput divides by it
	concurrency int
	incidents   bool
	servers     bool
	series      bool
	group       string
	repeat      int
	generatorID int
	generators  int
}

// fixture builds a complete, deterministic result: every operation's
// histogram, counters, a 20-second series with a fault, server cost.
func fixture(t testing.TB, id string, o fixtureOpts) *Result {
	t.Helper()
	if o.slow == 0 {
		o.slow = 1
	}
	if o.concurrency == 0 {
		o.concurrency = 8
	}
	if o.generators == 0 {
		o.generators = 1
	}
	const n, dur = 4000, 20.0
	r := &Result{
		Schema:    Schema,
		ID:        id,
		StartedAt: fixtureStart().Add(time.Duration(o.repeat) * time.Minute),
		DurationS: dur,
		Config: map[string]any{
			"id": id, "workload": "steady", "concurrency": o.concurrency, "keys": 16, "ttl": "10s", "hold": "1ms",
			"duration": "20s", "generator_id": o.generatorID, "generators": o.generators,
		},
		Lock:     LockInfo{Name: "single", Fencing: false, Nodes: 1},
		Topology: Topology{Kind: "single", Spec: "single", Provider: "local", Nodes: []string{"127.0.0.1:7001"}, ServerVersion: "7.0.15"},
		Ops: map[string]OpSummary{
			OpAcquire:       summaryOf(t, tailValues(n+1000, 180*o.slow, 0.45), 3),
			OpTimeToAcquire: summaryOf(t, tailValues(n, 260*o.slow, 0.6), 0),
			OpRelease:       summaryOf(t, tailValues(n, 150*o.slow, 0.4), 0),
			OpHold:          summaryOf(t, tailValues(n, 1000, 0.08), 0),
		},
		Throughput: Throughput{AcquiredPerS: n / dur / o.slow, AttemptsPerS: (n + 1000) / dur / o.slow},
		Counts: Counts{Contention: Contention{Attempts: n + 1000, Acquired: n, Contended: 900, GaveUp: 100}.WithRatios(),
			Counters: Counters{Released: n, Writes: n}},
		Errors: map[string]int64{"timeout": 3},
	}
	if o.group != "" {
		r.Config["group"] = o.group
		r.Config["repeat"] = o.repeat
	}
	if o.incidents {
		r.Incidents = Incidents{ExpiredDuringWork: 4, ReleaseLost: 2, RenewLost: 0, Overlaps: 1, Overruns: 1, StaleWritesAccepted: 1}
	}
	if o.servers {
		r.Servers = &Servers{Nodes: []ServerNode{{Addr: "127.0.0.1:7001", Commands: 3 * n, CPUUS: 17.5 * o.slow * n, ByCommand: map[string]int64{"set": n, "evalsha": 2 * n}}}}
		r.Servers.SetPerAcquire(n)
	}
	if o.series {
		for s := 1; s <= int(dur); s++ {
			p := SeriesPoint{ElapsedS: float64(s), Acquired: int64(float64(200+10*(s%3)) / o.slow), Attempts: int64(float64(250+10*(s%3)) / o.slow),
				P99US: (500 + float64(20*(s%5))) * o.slow}
			if s == 9 || s == 10 {
				p.P99US *= 40
				p.Acquired /= 4
			}
			if s == 8 {
				p.Faults = []string{"pause:node0:2s"}
			}
			r.Series = append(r.Series, p)
		}
		r.Faults = []FaultEvent{{Spec: "pause:node0:2s", AtS: 7.5, EndS: 9.5}}
	}
	return r
}

// golden compares got with testdata/name (see resultstest.Golden).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	resultstest.Golden(t, name, got)
}
