package results

import (
	"strings"
	"testing"
)

// halves splits a recorded run's values between two generators, alternately,
// so each half has a different distribution from the whole.
func halves(vs []int64) (a, b []int64) {
	for i, v := range vs {
		if i%3 == 0 {
			a = append(a, v)
		} else {
			b = append(b, v)
		}
	}
	return a, b
}

func TestMergeHalvesEqualsWhole(t *testing.T) {
	whole := map[string][]int64{
		OpAcquire: tailValues(9001, 120, 0.7),
		OpRelease: tailValues(5000, 90, 0.3),
		OpHold:    append(tailValues(3000, 1000, 0.05), 3_000_000_000), // one 50-minute outlier
	}
	a := fixture(t, "gen-0", fixtureOpts{generatorID: 0, generators: 2, series: true, servers: true})
	b := fixture(t, "gen-1", fixtureOpts{generatorID: 1, generators: 2, series: true, servers: true, incidents: true})
	b.StartedAt = a.StartedAt.Add(-2e6) // 2 ms earlier
	b.DurationS = 20.5
	a.Hosts = []Host{{Name: "pod-0", CPUs: 4}}
	b.Hosts = []Host{{Name: "pod-1", CPUs: 8}}
	a.Ops, b.Ops = map[string]OpSummary{}, map[string]OpSummary{}
	for op, vs := range whole {
		va, vb := halves(vs)
		a.Ops[op], b.Ops[op] = summaryOf(t, va, 1), summaryOf(t, vb, 2)
	}
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for op, vs := range whole {
		want := summaryOf(t, vs, 3)
		got := m.Ops[op]
		if got.Count != want.Count || got.Errors != want.Errors || got.LatencyUS != want.LatencyUS {
			t.Errorf("%s: merged %+v, whole %+v", op, got, want)
		}
		if got.HDR != want.HDR {
			t.Errorf("%s: merged histogram encodes differently from the whole", op)
		}
	}
	if m.Contention.Attempts != 10000 || m.Contention.Rate != 1800.0/10000 || m.Throughput.AcquiredPerS != 400 {
		t.Errorf("contention/throughput not summed: %+v %+v", m.Contention, m.Throughput)
	}
	if m.Incidents != b.Incidents || m.Errors["timeout"] != 6 {
		t.Errorf("incidents %+v errors %v", m.Incidents, m.Errors)
	}
	if len(m.Series) != 20 || m.Series[0].Acquired != 2*a.Series[0].Acquired || m.Series[7].Faults[0] != "pause:node0:2s" {
		t.Errorf("series not aligned by second: %+v", m.Series[:2])
	}
	if !m.StartedAt.Equal(b.StartedAt) || m.DurationS != 20.5 {
		t.Errorf("window = %v %v", m.StartedAt, m.DurationS)
	}
	// Both generators read the same server's counters: not doubled.
	if m.Servers.CommandsPerAcquire == nil || *m.Servers.CommandsPerAcquire != 1.5 || m.Servers.Nodes[0].Commands != a.Servers.Nodes[0].Commands {
		t.Errorf("servers = %+v", m.Servers)
	}
	if _, ok := m.Config["generator_id"]; ok || m.Config["generators"] != 2 || len(m.MergedFrom) != 2 {
		t.Errorf("merged config %v from %v", m.Config, m.MergedFrom)
	}
	if len(m.Faults) != 1 {
		t.Errorf("faults = %+v, want the shared fault once", m.Faults)
	}
	if len(m.Hosts) != 2 || m.Hosts[0].Name != "pod-0" || m.Hosts[1].CPUs != 8 {
		t.Errorf("hosts = %+v, want each generator's own, in order", m.Hosts)
	}
}

func TestMergeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := fixture(t, "a", fixtureOpts{generatorID: 0, generators: 2, series: true})
	b := fixture(t, "b", fixtureOpts{generatorID: 1, generators: 2, series: true})
	var read []*Result
	for _, r := range []*Result{a, b} {
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
	m, err := Merge(read)
	if err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Ops[OpAcquire].Count != 2*a.Ops[OpAcquire].Count || back.ID != "merged-a" {
		t.Errorf("merged result read back: %s with %d acquires", back.ID, back.Ops[OpAcquire].Count)
	}
}

func TestMergeRefusesMismatch(t *testing.T) {
	a := func() *Result { return fixture(t, "a", fixtureOpts{generatorID: 0, generators: 2}) }
	cases := []struct {
		name string
		b    func() *Result
		want string
	}{
		{"concurrency", func() *Result { return fixture(t, "b", fixtureOpts{generatorID: 1, generators: 2, concurrency: 16}) },
			`merge: runs differ in config field "concurrency" (a: 8, b: 16)`},
		{"generators", func() *Result { return fixture(t, "b", fixtureOpts{generatorID: 1, generators: 3}) },
			`merge: runs differ in config field "generators" (a: 2, b: 3)`},
		{"missing field", func() *Result {
			r := fixture(t, "b", fixtureOpts{generatorID: 1, generators: 2})
			delete(r.Config, "ttl")
			return r
		}, `merge: runs differ in config field "ttl" (a: 10s, b: <unset>)`},
		{"lock", func() *Result {
			r := fixture(t, "b", fixtureOpts{generatorID: 1, generators: 2})
			r.Lock.Name = "redlock"
			return r
		}, `merge: runs differ in config field "lock.name" (a: single, b: redlock)`},
		{"same generator", func() *Result { return fixture(t, "b", fixtureOpts{generatorID: 0, generators: 2}) },
			`merge: runs a and b have the same generator_id 0`},
		{"same run twice", a, `merge: run a given twice`},
		{"corrupt histogram", func() *Result {
			r := fixture(t, "b", fixtureOpts{generatorID: 1, generators: 2})
			s := r.Ops[OpRelease]
			s.HDR = "not-a-histogram"
			r.Ops[OpRelease] = s
			return r
		}, `merge: run b op release: histogram is not base64`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge([]*Result{a(), c.b()})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Merge err = %v\nwant prefix %s", err, c.want)
			}
		})
	}
	if _, err := Merge(nil); err == nil {
		t.Error("Merge(nil) succeeded")
	}
}

// Every plain counter sums across generators: each field gets its own value
// in each input, so a field left out of the merge shows.
func TestMergeSumsEveryCounter(t *testing.T) {
	a := fixture(t, "gen-0", fixtureOpts{generatorID: 0, generators: 2})
	b := fixture(t, "gen-1", fixtureOpts{generatorID: 1, generators: 2})
	a.Counters = Counters{Released: 1, Renewed: 2, Crashed: 3, Paused: 4, Scheduled: 5, Late: 6, Writes: 7, Unreplicated: 8}
	b.Counters = Counters{Released: 10, Renewed: 20, Crashed: 30, Paused: 40, Scheduled: 50, Late: 60, Writes: 70, Unreplicated: 80}
	a.Incidents = Incidents{ExpiredDuringWork: 1, ReleaseLost: 2, RenewLost: 3, WorkAborted: 4, Overlaps: 5, DoubleGrants: 2, Overruns: 3, FencingRejected: 6, StaleWritesAccepted: 7}
	b.Incidents = Incidents{ExpiredDuringWork: 10, ReleaseLost: 20, RenewLost: 30, WorkAborted: 40, Overlaps: 50, DoubleGrants: 20, Overruns: 30, FencingRejected: 60, StaleWritesAccepted: 70}
	a.NodeOutcomes = []NodeOutcome{{Node: "n0", Acquired: 1, Contended: 2, Errors: 3, Timeouts: 4}}
	b.NodeOutcomes = []NodeOutcome{{Node: "n0", Acquired: 10, Contended: 20, Errors: 30, Timeouts: 40}}
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counters{Released: 11, Renewed: 22, Crashed: 33, Paused: 44, Scheduled: 55, Late: 66, Writes: 77, Unreplicated: 88}); m.Counters != want {
		t.Errorf("counters %+v, want %+v", m.Counters, want)
	}
	if want := (Incidents{ExpiredDuringWork: 11, ReleaseLost: 22, RenewLost: 33, WorkAborted: 44, Overlaps: 55, DoubleGrants: 22, Overruns: 33, FencingRejected: 66, StaleWritesAccepted: 77}); m.Incidents != want {
		t.Errorf("incidents %+v, want %+v", m.Incidents, want)
	}
	if want := (NodeOutcome{Node: "n0", Acquired: 11, Contended: 22, Errors: 33, Timeouts: 44}); len(m.NodeOutcomes) != 1 || m.NodeOutcomes[0] != want {
		t.Errorf("node outcomes %+v, want [%+v]", m.NodeOutcomes, want)
	}
}

// TestMergeHostShare: the merged host share is the busiest generator host's,
// and missing when any generator lacked the reading (never smaller).
func TestMergeHostShare(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name   string
		shares []*float64
		want   *float64
	}{
		{"busiest", []*float64{f(0.4), f(0.9), f(0.6)}, f(0.9)},
		{"one", []*float64{f(0.3)}, f(0.3)},
		{"first missing", []*float64{nil, f(0.9)}, nil},
		{"later missing", []*float64{f(0.9), nil}, nil},
	} {
		var runs []*Result
		for _, s := range tc.shares {
			runs = append(runs, &Result{Client: &Client{HostCPUShare: s}})
		}
		got := mergeClient(runs, 10).HostCPUShare
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: merged host share %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMergedIDNamesTheRun: generators of one run (RUNID-g0, RUNID-g1) merge
// into merged-RUNID; runs that share no run id keep the first one's id.
func TestMergedIDNamesTheRun(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"20261205-120534-4e9e0c-g0", "20261205-120534-4e9e0c-g1"}, "20261205-120534-4e9e0c"},
		{[]string{"x-g1", "x-g0", "x-g2"}, "x"},
		{[]string{"a-g0", "b-g1"}, "a-g0"},
		{[]string{"a", "b"}, "a"},
		{[]string{"a-gx", "a-g1"}, "a-gx"},
	} {
		runs := make([]*Result, len(tc.ids))
		for i, id := range tc.ids {
			runs[i] = &Result{ID: id}
		}
		if got := sharedRunID(runs); got != tc.want {
			t.Errorf("%v: merged id from %q, want %q", tc.ids, got, tc.want)
		}
	}
}
