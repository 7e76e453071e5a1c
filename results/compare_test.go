package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func rowByKey(t *testing.T, c Comparison, key string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Key == key {
			return r
		}
	}
	t.Fatalf("no row %q", key)
	return Row{}
}

func TestCompareRatiosAndRows(t *testing.T) {
	a := fixture(t, "fast", fixtureOpts{servers: true})
	b := fixture(t, "slow", fixtureOpts{slow: 2, incidents: true})
	c := Compare([]*Result{a, b})
	if len(c.Columns) != 2 || c.Columns[0].Key != "fast" || c.Columns[1].Runs[0] != "slow" {
		t.Fatalf("columns = %+v", c.Columns)
	}
	thr := rowByKey(t, c, "throughput.acquired_per_s")
	if thr.Cells[0].Value != 200 || thr.Cells[1].Value != 100 || *thr.Cells[1].Ratio != 0.5 {
		t.Errorf("throughput row = %+v", thr.Cells)
	}
	if thr.Cells[1].WithinNoise {
		t.Error("single runs must not be called within noise")
	}
	// Every percentile of every operation present has a row.
	for _, op := range []string{OpAcquire, OpTimeToAcquire, OpRelease, OpHold} {
		for _, p := range []string{"p50", "p90", "p99", "p999", "max", "mean"} {
			rowByKey(t, c, "ops."+op+".latency_us."+p)
		}
	}
	for _, k := range []string{"ops.renew.count", "ops.blocked.count"} {
		for _, r := range c.Rows {
			if r.Key == k {
				t.Errorf("row %s present though no run recorded it", k)
			}
		}
	}
	// Incidents: baseline 0, so no ratio; server cost: the second run has none.
	inc := rowByKey(t, c, "incidents.overlaps")
	if inc.Cells[1].Ratio != nil || inc.Cells[1].Value != 1 {
		t.Errorf("overlaps row = %+v", inc.Cells[1])
	}
	srv := rowByKey(t, c, "servers.cpu_us_per_acquire")
	if srv.Cells[0].N != 1 || srv.Cells[1].N != 0 || srv.Cells[1].Ratio != nil {
		t.Errorf("server row = %+v", srv.Cells)
	}
}

func TestCompareAfterRoundTrip(t *testing.T) {
	dir := t.TempDir()
	runs := []*Result{fixture(t, "a", fixtureOpts{servers: true}), fixture(t, "b", fixtureOpts{slow: 1.5, servers: true})}
	var read []*Result
	for _, r := range runs {
		path, err := Write(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, back)
	}
	if jsonOf(t, Compare(read)) != jsonOf(t, Compare(runs)) {
		t.Error("comparison of the files read back differs from the in-memory one")
	}
}

// groupsFixture builds two groups of three repeats: the second is 5% slower
// in latency, well inside the first's run-to-run spread, and 3x slower in
// release latency, well outside it.
func groupsFixture(t *testing.T) []Group {
	var runs []*Result
	for i, slow := range []float64{1.0, 1.1, 0.92} {
		runs = append(runs, fixture(t, "a"+string(rune('1'+i)), fixtureOpts{slow: slow, group: "g-a", repeat: i, series: true}))
	}
	for i, slow := range []float64{1.05, 0.97, 1.12} {
		r := fixture(t, "b"+string(rune('1'+i)), fixtureOpts{slow: slow, group: "g-b", repeat: i, concurrency: 16})
		r.Ops[OpRelease] = summaryOf(t, tailValues(4000, 450*slow, 0.4), 0)
		runs = append(runs, r)
	}
	groups := GroupRuns(runs)
	if len(groups) != 2 || len(groups[0].Runs) != 3 || groups[1].Key != "g-b" {
		t.Fatalf("GroupRuns = %d groups", len(groups))
	}
	return groups
}

func TestCompareGroupsNoise(t *testing.T) {
	c := CompareGroups(groupsFixture(t))
	acq := rowByKey(t, c, "ops.acquire.latency_us.p99")
	if !acq.Cells[1].WithinNoise || acq.Cells[0].N != 3 {
		t.Errorf("acquire p99: overlapping ranges not marked within noise: %+v", acq.Cells)
	}
	if a := acq.Cells[0]; !(a.Min < a.Value && a.Value < a.Max) {
		t.Errorf("acquire p99 cell is not min < median < max: %+v", a)
	}
	rel := rowByKey(t, c, "ops.release.latency_us.p99")
	if rel.Cells[1].WithinNoise || *rel.Cells[1].Ratio < 2.5 {
		t.Errorf("release p99: a 3x difference marked as noise: %+v", rel.Cells[1])
	}
	var buf bytes.Buffer
	if err := c.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "(~)") {
		t.Error("table does not mark the noise")
	}
	golden(t, "compare-groups.txt", buf.Bytes())
}

func TestGroupKey(t *testing.T) {
	a := fixture(t, "x1", fixtureOpts{repeat: 0})
	b := fixture(t, "x2", fixtureOpts{repeat: 1, generatorID: 3})
	b.Config["seed"] = 99
	if GroupKey(a) != GroupKey(b) {
		t.Errorf("repeats differing only in id/repeat/generator/seed got keys %s and %s", GroupKey(a), GroupKey(b))
	}
	c := fixture(t, "x3", fixtureOpts{concurrency: 32})
	if GroupKey(a) == GroupKey(c) {
		t.Error("different concurrency grouped together")
	}
	d := fixture(t, "x4", fixtureOpts{group: "g-1"})
	if GroupKey(d) != "g-1" {
		t.Errorf("GroupKey with config group = %s", GroupKey(d))
	}
}

func TestCompareGolden(t *testing.T) {
	runs := []*Result{
		fixture(t, "fast", fixtureOpts{servers: true, series: true}),
		fixture(t, "slow", fixtureOpts{slow: 2, incidents: true, servers: true, concurrency: 32}),
	}
	c := Compare(runs)
	for _, f := range []struct{ format, file string }{{"table", "compare.txt"}, {"csv", "compare.csv"}, {"json", "compare.json"}} {
		var buf bytes.Buffer
		if err := c.Write(&buf, f.format); err != nil {
			t.Fatal(err)
		}
		golden(t, f.file, buf.Bytes())
	}
	if err := Compare(nil).WriteTable(&bytes.Buffer{}); err == nil {
		t.Error("table of an empty comparison succeeded")
	}
	if err := c.Write(&bytes.Buffer{}, "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("unknown format error = %v", err)
	}
}

func TestSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, fixture(t, "run-a", fixtureOpts{incidents: true, servers: true})); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.txt", buf.Bytes())

	buf.Reset()
	open := fixture(t, "run-open", fixtureOpts{servers: true})
	open.Counters.Scheduled, open.Counters.Served, open.Counters.Late, open.Counters.Dropped = 6000, 1900, 1850, 4100
	open.Servers.Unmeasured = []string{"master-0 (127.0.0.1:6390): down after fault \"at=1s kill node=0\" at 1.00s"}
	if err := WriteSummary(&buf, open); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary-open-loop.txt", buf.Bytes())
	for _, want := range []string{"6000 requests scheduled", "1900 served (1850 late", "4100 dropped", "survivors only; not measured: master-0"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("open-loop summary lacks %q:\n%s", want, buf.String())
		}
	}

	buf.Reset()
	if err := WriteGroupSummary(&buf, groupsFixture(t)[0]); err != nil {
		t.Fatal(err)
	}
	golden(t, "group-summary.txt", buf.Bytes())

	buf.Reset()
	if err := WriteList(&buf, groupsFixture(t)[0].Runs); err != nil {
		t.Fatal(err)
	}
	golden(t, "list.txt", buf.Bytes())
}

func TestSaturationNote(t *testing.T) {
	r := fixture(t, "busy", fixtureOpts{})
	r.Hosts = []Host{{GOMAXPROCS: 2}}
	r.Client = &Client{CPUUS: 1.8e7, CPUShare: 0.9}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	// The note is prose, wrapped to the terminal: read it as words.
	words := strings.Join(strings.Fields(buf.String()), " ")
	if !strings.Contains(words, "the generator used 90% of its 2 CPUs") || !strings.Contains(words, "--pipeline auto") {
		t.Errorf("no saturation note:\n%s", buf.String())
	}
	r.Client.CPUShare = 0.4
	if SaturationNote(r) != "" {
		t.Error("a note at 40% of the CPUs")
	}
}

// TestUnservedNote: a closed-loop run with a key per worker that left
// workers without an acquisition says so; one that served them all, one
// whose keys are shared (contention starves) and an open-loop one (a worker
// may get no request) do not.
func TestUnservedNote(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keys      any
		starved   int64
		scheduled int64
		want      bool
	}{
		{"unique keys, workers unserved", "unique", 2500, 0, true},
		{"keys 0, workers unserved", "0", 1, 0, true},
		{"every worker served", "unique", 0, 0, false},
		{"shared keys", "uniform:10", 2500, 0, false},
		{"open loop", "unique", 2500, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixture(t, "unserved", fixtureOpts{})
			r.Config["keys"] = tc.keys
			r.Counters.Scheduled = tc.scheduled
			r.Fairness = &Fairness{Workers: 100000, Starved: tc.starved}
			var buf bytes.Buffer
			if err := WriteSummary(&buf, r); err != nil {
				t.Fatal(err)
			}
			words := strings.Join(strings.Fields(buf.String()), " ")
			has := strings.Contains(words, fmt.Sprintf("%d of the 100000 workers acquired nothing in the window", tc.starved))
			if has != tc.want {
				t.Errorf("note shown %v, want %v:\n%s", has, tc.want, buf.String())
			}
		})
	}
}

// TestCompareRatiosOfShownValues: a ratio divides the values as the table
// shows them, so two latencies that both print as 1µs are "same", not
// 0.89x, and a figure that prints alike in both runs claims no difference.
func TestCompareRatiosOfShownValues(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base, v float64
		cell    string
		same    bool
	}{
		{name: "both print 1µs", base: 0.9, v: 0.8, cell: "1µs (same)", same: true},
		{name: "both print 1.42ms", base: 1421, v: 1418, cell: "1.42ms (same)", same: true},
		{name: "shown 2µs over shown 1µs", base: 1.4, v: 1.6, cell: "2µs (2.00x)"},
		{name: "shown 1.50ms over shown 1.00ms", base: 1004, v: 1496, cell: "1.50ms (1.50x)"},
		{name: "0 and 0 are the same, with no ratio", base: 0, v: 0, cell: "0µs (same)", same: true},
		{name: "against a shown 0 there is no ratio", base: 0.2, v: 5, cell: "5µs (-)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := fixture(t, "a", fixtureOpts{})
			b := fixture(t, "b", fixtureOpts{})
			sa, sb := a.Ops[OpRelease], b.Ops[OpRelease]
			sa.LatencyUS.P50, sb.LatencyUS.P50 = tc.base, tc.v
			a.Ops[OpRelease], b.Ops[OpRelease] = sa, sb
			row := rowByKey(t, Compare([]*Result{a, b}), "ops.release.latency_us.p50")
			c := row.Cells[1]
			if got := cellWithRatio(row.Figure(), c, 1, true); got != tc.cell {
				t.Errorf("cell %q, want %q", got, tc.cell)
			}
			if c.Same != tc.same {
				t.Errorf("same = %v, want %v", c.Same, tc.same)
			}
		})
	}
}

// TestFigureSomeRunsLackIsAbsent: one rule for every view; a figure that
// some of a group's runs lack (server cost where INFO was refused on one
// repeat) is absent from the group's cell: n/a in tables, null in JSON,
// never a median of the others nor a 0.
func TestFigureSomeRunsLackIsAbsent(t *testing.T) {
	var runs []*Result
	for i := range 3 {
		runs = append(runs, fixture(t, fmt.Sprintf("r%d", i), fixtureOpts{servers: true, group: "g", repeat: i}))
	}
	runs[1].Servers = &Servers{Unavailable: "INFO refused"}
	c := CompareGroups([]Group{{Key: "g", Runs: runs}})
	cell := rowByKey(t, c, "servers.cpu_us_per_acquire").Cells[0]
	if cell.Present || cell.N != 2 {
		t.Fatalf("cell %+v: want absent, measured in 2 of 3 runs", cell)
	}
	if got := cellText(rowByKey(t, c, "servers.cpu_us_per_acquire").Figure(), cell, 3); got != "n/a" {
		t.Errorf("table cell %q, want n/a", got)
	}
	b, err := json.Marshal(cell)
	if err != nil || string(b) != `{"n":2,"value":null,"min":null,"max":null}` {
		t.Errorf("json %s %v, want nulls", b, err)
	}
	var buf bytes.Buffer
	if err := WriteGroupSummary(&buf, Group{Key: "g", Runs: runs}); err != nil || !strings.Contains(buf.String(), "n/a") {
		t.Errorf("group summary %v lacks n/a:\n%s", err, buf.String())
	}
}

// TestLateWindowNote: a window measured more than a tenth past the
// --duration asked is said, with both; one within that, a run cut short,
// or one without the asked duration says nothing.
func TestLateWindowNote(t *testing.T) {
	for _, tc := range []struct {
		name     string
		asked    any
		measured float64
		partial  bool
		want     string
	}{
		{"a third late", "1s", 1.3, false, "the window ran 1.3s of the 1s asked"},
		{"on time, with the closer's milliseconds", "20s", 20.05, false, ""},
		{"just within a tenth", "10000ms", 10.9, false, ""},
		{"cut short by Ctrl-C", "1s", 1.3, true, ""},
		{"no asked duration", nil, 1.3, false, ""},
		{"an asked duration not a duration", "soon", 1.3, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixture(t, "late", fixtureOpts{})
			r.Config["duration"] = tc.asked
			r.DurationS, r.Partial = tc.measured, tc.partial
			got := LateWindowNote(r)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("note %q, want none", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("note %q, want it to say %q", got, tc.want)
			}
		})
	}
}
