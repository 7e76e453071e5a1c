package sweep

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

// golden compares got with testdata/name (see resultstest.Golden).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	resultstest.Golden(t, name, got)
}

// figures are the numbers a run contributes to the sweep renderers; cmds == 0
// stands for a run whose servers refused INFO, so no server figures exist.
type figures struct {
	thr, p50, p99, p999 float64
	contention          float64
	errors, overlaps    int64
	cmds, cpu           float64
}

// fakeRun builds a 10-second result by hand, so the goldens depend only on the
// renderers and not on histogram encoding or a live Redis.
func fakeRun(t *testing.T, id, spec, provider string, cpus int, f figures) *results.Result {
	t.Helper()
	kind, n, _ := strings.Cut(spec, ":")
	nodes := 1
	if n != "" {
		var err error
		if nodes, err = strconv.Atoi(n); err != nil {
			t.Fatalf("topology %q: %v", spec, err)
		}
	}
	addrs := make([]string, nodes)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", 7000+i)
	}
	attempts := int64(f.thr * 10 / (1 - f.contention))
	r := &results.Result{
		Schema:    results.Schema,
		ID:        id,
		DurationS: 10,
		Topology:  results.Topology{Kind: kind, Spec: spec, Provider: provider, Nodes: addrs},
		Ops: map[string]results.OpSummary{results.OpAcquire: {
			Count:     int64(f.thr * 10),
			LatencyUS: results.Percentiles{P50: f.p50, P90: (f.p50 + f.p99) / 2, P99: f.p99, P999: f.p999, Max: 2 * f.p999},
		}},
		Throughput: results.Throughput{AcquiredPerS: f.thr, AttemptsPerS: float64(attempts) / 10},
		Counts: results.Counts{
			Contention: results.Contention{
				Attempts:  attempts,
				Acquired:  int64(f.thr * 10),
				Contended: int64(f.contention * float64(attempts)),
				Rate:      f.contention,
			},
			Incidents: results.Incidents{Overlaps: f.overlaps},
		},
		Errors: map[string]int64{},
	}
	if f.errors > 0 {
		r.Errors["timeout"] = f.errors
	}
	if f.cmds > 0 {
		r.Servers = &results.Servers{CommandsPerAcquire: &f.cmds, CPUUSPerAcquire: &f.cpu}
	}
	if cpus > 0 {
		r.Hosts = []results.Host{{Name: "gen-0", CPUs: cpus, GOMAXPROCS: cpus, OS: "linux", Arch: "amd64"}}
	}
	return r
}

// sweepFixture is a concurrency × topology grid with two repeats per cell, so
// the table shows throughput ranges; the redlock:3 cell at 16 has no server
// figures, to cover the "-" a missing metric renders as.
func sweepFixture(t *testing.T) (Grid, []CellResult) {
	t.Helper()
	g := Grid{
		Axes: []Axis{
			{Flag: "concurrency", Values: []string{"1", "16"}},
			{Flag: "topology", Values: []string{"single", "redlock:3"}},
		},
		Count: 2,
	}
	cells := []struct {
		coords  []string
		repeats [2]figures
	}{
		{[]string{"1", "single"}, [2]figures{
			{thr: 2110, p50: 410, p99: 620, p999: 1150, cmds: 3, cpu: 4.0},
			{thr: 2085, p50: 415, p99: 640, p999: 1210, cmds: 3, cpu: 4.4},
		}},
		{[]string{"1", "redlock:3"}, [2]figures{
			{thr: 1480, p50: 610, p99: 910, p999: 1800, cmds: 9, cpu: 12.6},
			{thr: 1455, p50: 620, p99: 955, p999: 1950, cmds: 9, cpu: 12.9},
		}},
		{[]string{"16", "single"}, [2]figures{
			{thr: 21800, p50: 690, p99: 1450, p999: 3100, contention: 0.412, cmds: 3.02, cpu: 4.0},
			{thr: 22350, p50: 670, p99: 1390, p999: 2900, contention: 0.405, errors: 2, cmds: 3.02, cpu: 4.0},
		}},
		{[]string{"16", "redlock:3"}, [2]figures{
			{thr: 12950, p50: 1150, p99: 2650, p999: 9800, contention: 0.431, errors: 14},
			{thr: 13400, p50: 1120, p99: 2500, p999: 11200, contention: 0.44, errors: 9, overlaps: 1},
		}},
	}
	var crs []CellResult
	for ci, c := range cells {
		cr := CellResult{Cell: Cell{Coords: c.coords}}
		for i, f := range c.repeats {
			id := fmt.Sprintf("sweep-c%d-r%d", ci, i)
			cr.Results = append(cr.Results, fakeRun(t, id, c.coords[1], "external", 0, f))
		}
		crs = append(crs, cr)
	}
	return g, crs
}

// capacityFixture has one search per way a search ends: an SLO breaking after
// saturation, throughput going flat, and no load level meeting the SLO.
func capacityFixture() []Capacity {
	const sloExpr = "acquire.p99<5ms"
	single := Capacity{Label: "single", Stop: "SLO broken at load 64 (acquire.p99<5ms: 5800)", Steps: []Step{
		{Load: 1, RunID: "cap-single-1", Throughput: 2100, P99US: 610, MetSLO: true},
		{Load: 2, RunID: "cap-single-2", Throughput: 4150, P99US: 640, MetSLO: true},
		{Load: 4, RunID: "cap-single-4", Throughput: 8050, P99US: 700, MetSLO: true},
		{Load: 8, RunID: "cap-single-8", Throughput: 15200, P99US: 900, MetSLO: true},
		{Load: 16, RunID: "cap-single-16", Throughput: 21800, P99US: 1450, MetSLO: true},
		{Load: 32, RunID: "cap-single-32", Throughput: 22400, P99US: 2900, MetSLO: true},
		{Load: 64, RunID: "cap-single-64", Throughput: 22600, P99US: 5800, Broken: []string{sloExpr + ": 5800"}},
	}}
	single.Saturation, single.Knee = &single.Steps[5], &single.Steps[3]
	// Each single step measured its CPU; the server ran out at 32.
	clients := []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35}
	servers := []float64{0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.05}
	for i := range single.Steps {
		single.Steps[i].CPU = verdict.CPUUse{ClientShare: &clients[i], ClientCPUs: 2, HostCPUs: 2, SharedHost: true, ServerShares: servers[i : i+1]}
	}
	single.Limit = limitOf(single)

	redlock3 := Capacity{Label: "redlock:3", Stop: "throughput stopped growing (under 5% gain for 2 steps)", Steps: []Step{
		{Load: 1, RunID: "cap-redlock3-1", Throughput: 1470, P99US: 930, MetSLO: true},
		{Load: 2, RunID: "cap-redlock3-2", Throughput: 2880, P99US: 980, MetSLO: true},
		{Load: 4, RunID: "cap-redlock3-4", Throughput: 5400, P99US: 1120, MetSLO: true},
		{Load: 8, RunID: "cap-redlock3-8", Throughput: 9100, P99US: 1650, MetSLO: true},
		{Load: 16, RunID: "cap-redlock3-16", Throughput: 9350, P99US: 3100, MetSLO: true},
		{Load: 32, RunID: "cap-redlock3-32", Throughput: 9420, P99US: 4700, MetSLO: true},
	}}
	redlock3.Saturation, redlock3.Knee = &redlock3.Steps[5], &redlock3.Steps[3]
	redlock3.Limit = limitOf(redlock3)

	wan := Capacity{Label: "redlock:5", Stop: "SLO broken at load 1 (acquire.p99<5ms: 1.24e+04)", Steps: []Step{
		{Load: 1, RunID: "cap-redlock5-1", Throughput: 310, P99US: 12400, Broken: []string{sloExpr + ": 1.24e+04"}},
	}}
	return []Capacity{single, redlock3, wan}
}

// tuneFixture is a TTL × renewal grid where a short TTL only meets the target
// with renewal, so exactly one cell wins on blocked time.
func tuneFixture() []TuneCell {
	cells := []TuneCell{
		{TTL: "1s", RenewEvery: "off", RunIDs: []string{"tune-1"}, Acquired: 12000, Expired: 240, Overlaps: 3, AttemptsPerAcquire: perAcq(41.5), OverrunP99US: 212_000},
		{TTL: "1s", RenewEvery: "300ms", RunIDs: []string{"tune-2"}, Acquired: 11800, Expired: 2,
			RenewPerS: 38.2, BlockedP99US: 998_000, BlockedSamples: 40, AttemptsPerAcquire: perAcq(1.3)},
		{TTL: "5s", RenewEvery: "off", RunIDs: []string{"tune-3"}, Acquired: 11950, BlockedP99US: 4_990_000, BlockedSamples: 41, AttemptsPerAcquire: perAcq(1.9)},
		{TTL: "5s", RenewEvery: "1.5s", RunIDs: []string{"tune-4"}, Acquired: 11900, RenewPerS: 7.9, AttemptsPerAcquire: perAcq(1.1)},
	}
	for i := range cells {
		cells[i] = cells[i].judged(0.001)
	}
	return cells
}

func TestWriteGolden(t *testing.T) {
	g, crs := sweepFixture(t)
	caps := capacityFixture()
	cells := tuneFixture()
	for _, tc := range []struct {
		name    string
		file    string
		write   func(io.Writer) error
		want    []string
		notWant []string
	}{
		{"table", "sweep-table.txt", func(w io.Writer) error { return WriteTable(w, g, crs, nil) },
			// One repeat's overlap must not round away in a median of 0.5.
			[]string{"2098 ±1%", "concurrency", "topology", "0 [0–1]"}, nil},
		{"csv", "sweep.csv", func(w io.Writer) error { return WriteCSV(w, g, crs) },
			// Server figures no run had are empty, not a measured zero.
			[]string{"concurrency,topology,runs,duration_s,duration_s_min,duration_s_max,throughput.acquired_per_s", ",,,,,\n"}, nil},
		{"json", "sweep.json", func(w io.Writer) error { return WriteJSON(w, g, crs) },
			[]string{`"coords"`, `"sweep-c0-r1"`}, nil},
		{"capacity", "capacity.txt", func(w io.Writer) error { return WriteCapacity(w, caps, "concurrency") },
			[]string{"8 (knee)", "saturation: 22400 acquisitions/s at concurrency 32", "no load level met the SLO",
				"limit: the server (busiest server 90% of one CPU, generator 30% of 2 CPUs)", "30/90", "limit: unknown, CPU not measured"}, nil},
		{"capacity-columns", "capacity-columns.txt", func(w io.Writer) error {
			// One step's run is at hand, the others are not: theirs are n/a.
			r := &results.Result{ID: "cap-single-32", Ops: map[string]results.OpSummary{results.OpAcquire: {Count: 100, LatencyUS: results.Percentiles{P50: 123}}}}
			r.Contention.Acquired = 4321
			return WriteCapacityColumns(w, caps, "concurrency", []string{"acquire.p50,contention.acquired"}, map[string]*results.Result{r.ID: r})
		}, []string{"123µs", "4321", "n/a", "8 (knee)", "cap-single-32"}, []string{"cpu %"}},
		{"capacity-csv", "capacity.csv", func(w io.Writer) error { return WriteCapacityCSV(w, caps, "concurrency") },
			[]string{"search,concurrency,acquired_per_s", "single,32,22400,", ",cap-single-32,true,false,0.3,0.9,server\n", ",cap-single-8,false,true,0.2,0.6,\n",
				",cap-redlock3-32,true,false,,,unmeasured\n"}, nil},
		{"tune-csv", "tune.csv", func(w io.Writer) error { return WriteTuneCSV(w, cells, Recommend(cells, 0.001)) },
			[]string{"ttl,renew_every,runs,acquired", "1s,300ms,1,11800,2,", ",true,true\n"}, nil},
		{"tune", "tune.txt", func(w io.Writer) error { return WriteTune(w, cells, Recommend(cells, 0.001)) },
			[]string{"RECOMMENDED", "≤ 5.00s |", "TTL 1s with renewal every 300ms"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.notWant {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
			golden(t, tc.file, buf.Bytes())
		})
	}
}

// TestWriteTuneRecommendsOnce guards the golden against a tie marking two
// cells: the reader must see one recommendation.
func TestWriteTuneRecommendsOnce(t *testing.T) {
	cells := tuneFixture()
	var buf bytes.Buffer
	if err := WriteTune(&buf, cells, Recommend(cells, 0.001)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "RECOMMENDED"); n != 1 {
		t.Fatalf("%d cells marked RECOMMENDED, want 1:\n%s", n, buf.String())
	}
}
