package cli

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

// tableRuns makes deterministic results the way the runner would store
// them, with ids and group ids as long as real ones, so that the tables'
// widths are the widths users see.
type tableRuns struct{ n int }

// result is one run of v: its figures scale with the topology's masters and
// the concurrency, so ratios between rows are not all 1.
func (tr *tableRuns) result(v plan.Values, group string, repeat int) *results.Result {
	tr.n++
	topo := orDefault(v.Get("topology"), "single")
	lock := orDefault(v.Get("lock"), "single")
	conc, _ := strconv.Atoi(orDefault(v.Get("concurrency"), "16"))
	masters := 1.0
	if _, n, ok := strings.Cut(topo, ":"); ok {
		m, _ := strconv.Atoi(n)
		masters = float64(m)
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(lock))
	jitter := 1 + 0.03*float64(repeat) + float64(h.Sum32()%7)/100
	slow := (1 + 0.6*(masters-1)) * jitter * (1 + float64(conc)/64)
	start := time.Date(2026, 3, 14, 9, 26, 0, 0, time.UTC).Add(time.Duration(tr.n) * time.Minute)
	id := fmt.Sprintf("%s-%06x", start.Format("20060102-150405"), 0xa1b2c3+tr.n)
	acquired := int64(20000 / slow * 10)
	attempts := acquired * 5 / 4
	pct := func(base float64) results.Percentiles {
		b := base * slow
		return results.Percentiles{P50: b, P90: 2 * b, P95: 2.8 * b, P99: 5.8 * b, P999: 15.7 * b, Max: 46 * b, Mean: 1.3 * b}
	}
	cfg := map[string]any{"id": id, "workload": "steady", "concurrency": conc, "keys": 16, "ttl": orDefault(v.Get("ttl"), "10s"), "hold": "1ms", "duration": "10s"}
	if group != "" {
		cfg["group"], cfg["repeat"] = group, repeat
	}
	r := &results.Result{
		Schema: results.Schema, ID: id, StartedAt: start, DurationS: 10, Config: cfg,
		Lock:     results.LockInfo{Name: lock, Nodes: int(masters)},
		Topology: results.Topology{Kind: strings.SplitN(topo, ":", 2)[0], Spec: topo, Provider: "local", Nodes: make([]string, int(masters)), ServerVersion: "7.0.15"},
		Ops: map[string]results.OpSummary{
			results.OpAcquire:       {Count: attempts, Errors: 3, LatencyUS: pct(245)},
			results.OpTimeToAcquire: {Count: acquired, LatencyUS: pct(394)},
			results.OpRelease:       {Count: acquired, LatencyUS: pct(197)},
			results.OpHold:          {Count: acquired, LatencyUS: pct(1060)},
		},
		Throughput: results.Throughput{AcquiredPerS: float64(acquired) / 10, AttemptsPerS: float64(attempts) / 10},
		Counts: results.Counts{
			Contention: results.Contention{Attempts: attempts, Acquired: acquired, Contended: attempts - acquired - 3, Rate: float64(attempts-acquired-3) / float64(attempts),
				AttemptsPerAcquire: results.PerAcquire(float64(attempts), acquired)},
			Counters: results.Counters{Released: acquired, Writes: acquired},
		},
		Errors:   map[string]int64{"timeout": 3},
		Servers:  &results.Servers{CommandsPerAcquire: ptr(3 * masters), CPUUSPerAcquire: ptr(17.5 * slow)},
		Client:   &results.Client{CPUUS: 32 * slow * float64(acquired), CPUUSPerAcquire: ptr(32 * slow), CPUShare: 0.4},
		Fairness: &results.Fairness{Workers: conc, MinAcquired: acquired / int64(conc) / 2, MaxAcquired: 2 * acquired / int64(conc), Jain: 0.93, WorstTimeToAcquireP99US: 9000 * slow},
		Hosts:    []results.Host{{Name: "gen-0", CPUs: 8, GOMAXPROCS: 8, OS: "linux", Arch: "amd64"}},
	}
	if v.Get("fault") != "" {
		r.Throughput.AcquiredPerS *= 0.6
		r.Ops[results.OpAcquire] = results.OpSummary{Count: attempts, Errors: attempts / 50, LatencyUS: pct(2 * 245)}
		r.Faults = []results.FaultEvent{{Spec: v.Get("fault"), AtS: 2.5}}
		r.Errors["conn_refused"] = attempts / 50
	}
	if d, err := time.ParseDuration(v.Get("ttl")); err == nil {
		r.Ops[results.OpBlocked] = results.OpSummary{Count: 12, LatencyUS: results.Percentiles{P99: float64(d.Microseconds()) * 0.99}}
		r.Ops[results.OpRenew] = results.OpSummary{Count: 80, LatencyUS: pct(200)}
		r.Incidents.ExpiredDuringWork = int64(20 / d.Seconds())
	}
	return r
}

func (tr *tableRuns) runner() sweep.Runner {
	return func(_ context.Context, v plan.Values, group string, repeat int) (*results.Result, error) {
		return tr.result(v, group, repeat), nil
	}
}

// tableWidth is the widest line of a table in out: boxed rows, or every
// line of a plain listing.
func tableWidth(out string, plain bool) (int, string) {
	widest, line := 0, ""
	for _, l := range strings.Split(out, "\n") {
		// Every line counts, the prose around a table too (a headline, a
		// legend): only one unbreakable word (an id, a path) may be wider.
		if !strings.Contains(strings.TrimSpace(l), " ") {
			continue
		}
		if n := utf8.RuneCountInString(l); n > widest {
			widest, line = n, l
		}
	}
	return widest, line
}

// TestEveryTableFitsTerminal renders every table lockbench prints, at its
// default columns, from fixture results, checks it against its golden file
// and that it fits results.MaxTableWidth columns.
func TestEveryTableFitsTerminal(t *testing.T) {
	tr := &tableRuns{}
	ctx := context.Background()
	out := t.TempDir()
	store := func(r *results.Result) string {
		if _, err := results.Write(out, r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	var ids, groups []string
	for _, topo := range []string{"single", "redlock:3", "redlock:5"} {
		v := plan.Values{}
		v.Set("topology", topo)
		if topo != "single" {
			v.Set("lock", "redlock")
		}
		ids = append(ids, store(tr.result(v, "", 0)))
	}
	for i, topo := range []string{"single", "redlock:3", "redlock:5"} {
		v := plan.Values{}
		v.Set("topology", topo)
		g := fmt.Sprintf("g-20260314-0930%02d-d4e5f%d", i, i)
		for rep := range 3 {
			store(tr.result(v, g, rep))
		}
		groups = append(groups, g)
	}
	cli := func(plain bool, args ...string) func() (string, bool) {
		return func() (string, bool) {
			code, stdout, stderr := lockbench(t, args...)
			if code != 0 {
				t.Fatalf("lockbench %v: exit %d %s", args, code, stderr)
			}
			return stdout, plain
		}
	}
	render := func(f func(*bytes.Buffer) error) func() (string, bool) {
		return func() (string, bool) {
			var buf bytes.Buffer
			if err := f(&buf); err != nil {
				t.Fatal(err)
			}
			return buf.String(), false
		}
	}
	grid := func(axes ...sweep.Axis) (sweep.Grid, []sweep.CellResult) {
		g := sweep.Grid{Base: plan.Values{}, Count: 2, Axes: axes}
		cells, err := g.Cells()
		if err != nil {
			t.Fatal(err)
		}
		crs, err := sweep.Run(ctx, g, cells, tr.runner(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return g, crs
	}
	cost := func(locks []sweep.LockSpec) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			rows, err := sweep.RunCost(ctx, sweep.CostPlan{Locks: locks, Base: plan.Values{}, Count: 3, WithFault: true}, tr.runner(), nil)
			if err != nil {
				return err
			}
			return sweep.WriteLockCost(b, rows, nil)
		}
	}
	tables := []struct {
		name   string
		output func() (string, bool)
	}{
		{"results-ls", cli(true, "results", "ls", "--out", out)},
		{"results-show", cli(false, "results", "show", "--out", out, ids[2])},
		{"results-show-group", cli(false, "results", "show", "--out", out, groups[2])},
		{"results-compare-3-runs", cli(false, "results", "compare", "--out", out, ids[0], ids[1], ids[2])},
		{"results-compare-3-groups", cli(false, "results", "compare", "--out", out, groups[0], groups[1], groups[2])},
		{"run-side-by-side", render(func(b *bytes.Buffer) error {
			var rs []*results.Result
			for _, id := range ids {
				r, err := results.Find(out, id)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			return printResults(b, "table", rs, nil)
		})},
		{"sweep", render(func(b *bytes.Buffer) error {
			g, crs := grid(sweep.Axis{Flag: "concurrency", Values: []string{"1", "16", "64"}}, sweep.Axis{Flag: "topology", Values: []string{"single", "redlock:3"}})
			return sweep.WriteTable(b, g, crs, nil)
		})},
		{"lock-cost", render(cost(sweep.DefaultLockSpecs()))},
		{"redlock-cost", render(cost([]sweep.LockSpec{{Lock: "single", Topology: "single"}, {Lock: "redlock", Topology: "redlock:3"},
			{Lock: "redlock", Topology: "redlock:5"}, {Lock: "redlock", Topology: "redlock:7"}}))},
		{"tune-ttl", render(func(b *bytes.Buffer) error {
			g, crs := grid(sweep.Axis{Flag: "ttl", Values: []string{"1s", "2s", "4s"}}, sweep.Axis{Flag: "renew-every", Values: []string{"0", "ttl/2", "ttl/3"}})
			cells := sweep.TuneCells(g, crs, 1e-4)
			return sweep.WriteTune(b, cells, sweep.Recommend(cells, 1e-4))
		})},
		{"capacity", render(func(b *bytes.Buffer) error {
			slo, err := results.ParseAssertion("acquire.p99<5ms")
			if err != nil {
				return err
			}
			var caps []sweep.Capacity
			for _, topo := range []string{"single", "redlock:5"} {
				c, err := sweep.Search(ctx, topo, sweep.DefaultRamp(), []results.Assertion{slo}, func(_ context.Context, load float64) (*results.Result, error) {
					v := plan.Values{}
					v.Set("topology", topo)
					v.Set("concurrency", strconv.FormatFloat(load, 'f', -1, 64))
					return tr.result(v, "", 0), nil
				})
				if err != nil {
					return err
				}
				caps = append(caps, c)
			}
			return sweep.WriteCapacity(b, caps, "concurrency")
		})},
		{"capacity-open-loop", render(func(b *bytes.Buffer) error {
			slo, err := results.ParseAssertion("p99<50ms")
			if err != nil {
				return err
			}
			ramp := sweep.Ramp{Start: 1000, Max: 64000, Factor: 2, MinGain: 0.05, Patience: 2, OpenLoop: true}
			c, err := sweep.Search(ctx, "redlock:5", ramp, []results.Assertion{slo}, func(_ context.Context, load float64) (*results.Result, error) {
				v := plan.Values{}
				v.Set("topology", "redlock:5")
				r := tr.result(v, "", 0)
				offered := int64(load * r.DurationS)
				served := min(offered, int64(r.Throughput.AcquiredPerS*r.DurationS))
				r.Counters.Scheduled, r.Counters.Served, r.Counters.Dropped = offered, served, offered-served
				r.Throughput.AcquiredPerS = float64(served) / r.DurationS
				return r, nil
			})
			if err != nil {
				return err
			}
			return sweep.WriteCapacity(b, []sweep.Capacity{c}, "rate")
		})},
		{"workloads", cli(true, "workloads")},
		{"scenario-list", cli(true, "scenario", "list")},
	}
	for _, s := range scenario.All() {
		tables = append(tables, struct {
			name   string
			output func() (string, bool)
		}{"scenario-" + s.Name, render(func(b *bytes.Buffer) error {
			v, err := scenario.Run(ctx, s, scenario.Options{Trials: 2}, func(_ context.Context, v plan.Values) (*results.Result, error) { return tr.result(v, "", 0), nil })
			if err != nil {
				return err
			}
			return scenario.WriteVerdict(b, v)
		})})
	}
	for _, tc := range tables {
		t.Run(tc.name, func(t *testing.T) {
			got, plain := tc.output()
			// Result ids depend on the temporary directory's runs only, but
			// the directory itself must not reach the golden file.
			got = strings.ReplaceAll(got, out, "RUNS")
			if n, line := tableWidth(got, plain); n > results.MaxTableWidth {
				t.Errorf("%s is %d columns wide, over %d:\n%s", tc.name, n, results.MaxTableWidth, line)
			}
			resultstest.Golden(t, "table-"+tc.name+".txt", []byte(got))
		})
	}
}

// TestColumnsFlag: --columns takes catalogue names, refuses an unknown one
// with the accepted list, and is refused where the format carries every
// figure anyway.
func TestColumnsFlag(t *testing.T) {
	tr := &tableRuns{}
	out := t.TempDir()
	var ids []string
	for _, topo := range []string{"single", "redlock:3"} {
		v := plan.Values{}
		v.Set("topology", topo)
		r := tr.result(v, "", 0)
		if _, err := results.Write(out, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	code, stdout, stderr := lockbench(t, "results", "compare", "--out", out, "--columns", "acquire.p95,client.cpu_us_per_acquire", ids[0], ids[1])
	if code != 0 || !strings.Contains(stdout, "acquire p95") || !strings.Contains(stdout, "client cpu/acquire") || strings.Contains(stdout, "acquire p50") {
		t.Fatalf("compare --columns: exit %d %s\n%s", code, stderr, stdout)
	}
	for _, args := range [][]string{
		{"results", "compare", "--out", out, "--columns", "acquire.p98", ids[0], ids[1]},
		{"sweep", "--concurrency", "1,2", "--columns", "nonesuch"},
		{"lock-cost", "--columns", "p99,bogus.figure"},
		{"run", "--columns", "nope"},
	} {
		code, _, stderr := lockbench(t, args...)
		if code != exitBadInput || !strings.Contains(stderr, "--columns") || !strings.Contains(stderr, "accepted: duration_s, throughput.acquired_per_s") {
			t.Errorf("%v: exit %d, want %d naming the accepted figures; %s", args, code, exitBadInput, stderr)
		}
	}
	code, _, stderr = lockbench(t, "results", "compare", "--out", out, "--format", "json", "--columns", "p99", ids[0], ids[1])
	if code != exitBadInput || !strings.Contains(stderr, "carries every figure") {
		t.Errorf("--columns with json: exit %d %s", code, stderr)
	}
	for _, format := range []string{"json", "csv"} {
		code, stdout, stderr := lockbench(t, "results", "show", "--out", out, "--format", format, ids[0])
		if code != 0 || !strings.Contains(stdout, "acquire") {
			t.Errorf("show --format %s: exit %d %s\n%s", format, code, stderr, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(out, results.FileName(ids[0]))); err != nil {
		t.Fatal(err)
	}
}

func ptr(v float64) *float64 { return &v }
