package results

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPerAcquire(t *testing.T) {
	for _, tc := range []struct {
		total    float64
		acquired int64
		want     *float64
	}{
		{10, 4, ptr(2.5)},
		{0, 4, ptr(0)},
		{10, 0, nil},
		{0, 0, nil},
		{10, -1, nil},
	} {
		got := PerAcquire(tc.total, tc.acquired)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("PerAcquire(%v, %d) = %v, want %v", tc.total, tc.acquired, got, tc.want)
		}
	}
}

func ptr(v float64) *float64 { return &v }

// noAcquisitions is a run whose every attempt failed, as a server at
// maxmemory with noeviction makes it.
func noAcquisitions(t *testing.T) *Result {
	r := fixture(t, "r", fixtureOpts{servers: true})
	r.Contention = Contention{Attempts: 500}.WithRatios()
	r.Ops = map[string]OpSummary{OpAcquireFailed: summaryOf(t, tailValues(500, 90, 0.3), 0)}
	r.Errors = map[string]int64{"oom": 480, "timeout": 20}
	r.Servers.SetPerAcquire(0)
	r.Client = &Client{CPUUS: 1000, Sent: &Sent{RoundTrips: 500, Commands: 500, ByCommand: map[string]int64{"set": 500}}}
	r.Client.SetPerAcquire(0)
	return r
}

// Every figure per acquisition of a run that made none is absent: an error
// wrapping ErrNoAcquisitions, n/a in the run table, null in the JSON.
func TestFiguresPerAcquisitionOverNoneAreAbsent(t *testing.T) {
	r := noAcquisitions(t)
	for _, name := range []string{"contention.attempts_per_acquire", "servers.commands_per_acquire", "servers.cpu_us_per_acquire",
		"servers.script_commands_per_acquire", "client.cpu_us_per_acquire", "client.round_trips_per_acquire", "client.commands_per_acquire"} {
		if v, err := Metric(r, name); !errors.Is(err, ErrNoAcquisitions) {
			t.Errorf("%s = %v, %v; want ErrNoAcquisitions", name, v, err)
		}
	}
	// A file written before per-acquisition figures could be null says 0.
	old := noAcquisitions(t)
	zero := 0.0
	old.Contention.AttemptsPerAcquire, old.Servers.CommandsPerAcquire = &zero, &zero
	for _, name := range []string{"contention.attempts_per_acquire", "servers.commands_per_acquire"} {
		if _, err := Metric(old, name); !errors.Is(err, ErrNoAcquisitions) {
			t.Errorf("an older file's %s: %v, want ErrNoAcquisitions", name, err)
		}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"attempts_per_acquire":null`, `"commands_per_acquire":null`, `"cpu_us_per_acquire":null`, `"round_trips_per_acquire":null`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil || back.Servers.CommandsPerAcquire != nil {
		t.Errorf("read back: %v, commands per acquisition %v; want still absent", err, back.Servers.CommandsPerAcquire)
	}
	var table strings.Builder
	if err := WriteSummary(&table, r); err != nil {
		t.Fatal(err)
	}
	if s := table.String(); !strings.Contains(s, "server cost: n/a per acquisition") || strings.Contains(s, "0.00 commands") {
		t.Errorf("run table:\n%s\nwant the server cost n/a", s)
	}
}

func TestFailureRowCountsItsFailuresAsErrors(t *testing.T) {
	r := noAcquisitions(t)
	// As an older writer stored it: errors 0 on the failure row.
	if s := r.Ops[OpAcquireFailed]; s.Errors != 0 || s.Count != 500 {
		t.Fatalf("fixture %+v", s)
	}
	for name, want := range map[string]float64{"acquire_failed.errors": 500, "acquire_failed.count": 500, "acquire.errors": 0} {
		if v, err := Metric(r, name); err != nil || v != want {
			t.Errorf("%s = %v, %v; want %v", name, v, err, want)
		}
	}
}

func TestNoSuccessLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      Contention
		errors map[string]int64
		want   string
	}{
		{"some acquired", Contention{Attempts: 10, Acquired: 1}, map[string]int64{"oom": 9}, ""},
		{"no attempt at all", Contention{}, nil, ""},
		{"all failed", Contention{Attempts: 500}, map[string]int64{"oom": 480, "timeout": 20},
			"no attempt succeeded: 500 attempts, 500 failed; commonest error oom (480 of them)"},
		{"a tie names the first kind by name", Contention{Attempts: 4}, map[string]int64{"timeout": 2, "eof": 2},
			"no attempt succeeded: 4 attempts, 4 failed; commonest error eof (2 of them)"},
		{"all contended", Contention{Attempts: 7, Contended: 7}, nil,
			"no attempt succeeded: all 7 attempts found the key held by another owner (7 contended)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Counts: Counts{Contention: tc.c}, Errors: tc.errors}
			if got := NoSuccessLine(r); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestServerCostLine(t *testing.T) {
	withSent := func(r *Result) *Result {
		n := r.Contention.Acquired
		r.Client = &Client{Sent: &Sent{RoundTrips: 2 * n, Commands: 2 * n, ByCommand: map[string]int64{"set": n, "evalsha": n}}}
		r.Servers.Nodes[0].ByCommand = map[string]int64{"set": n, "evalsha": n, "get": n, "del": n, "ping": 40, "replconf": 90}
		r.Servers.Nodes[0].Commands = 4*n + 130
		r.Servers.SetPerAcquire(n)
		r.Client.SetPerAcquire(n)
		return r
	}
	for _, tc := range []struct {
		name string
		r    *Result
		want string
	}{
		{"no server figures", fixture(t, "r", fixtureOpts{}), ""},
		{"without a count of what was sent", fixture(t, "r", fixtureOpts{servers: true}),
			"server cost: 3.00 commands and 18µs CPU per acquisition (all nodes)"},
		{"round trips beside commands", withSent(fixture(t, "r", fixtureOpts{servers: true})),
			"server cost: 2.00 round trips, 4.03 server commands (2.00 inside scripts) and 18µs CPU per acquisition (all nodes)"},
		{"a replica's effects are replication, not script calls", func() *Result {
			r := withSent(fixture(t, "r", fixtureOpts{servers: true}))
			n := r.Contention.Acquired
			r.Servers.Nodes = append(r.Servers.Nodes, ServerNode{Addr: "127.0.0.1:7002", Commands: 2 * n,
				ByCommand: map[string]int64{"set": n, "del": n}})
			r.Servers.SetPerAcquire(n)
			return r
		}(), "server cost: 2.00 round trips, 6.03 server commands (2.00 inside scripts) and 18µs CPU per acquisition (all nodes)"},
		{"no script run", func() *Result {
			r := withSent(fixture(t, "r", fixtureOpts{servers: true}))
			n := r.Contention.Acquired
			r.Client.Sent.ByCommand = map[string]int64{"set": n, "get": n, "del": n}
			r.Servers.Nodes[0].ByCommand = map[string]int64{"set": n, "get": n, "del": n}
			return r
		}(), "server cost: 2.00 round trips, 4.03 server commands (0.00 inside scripts) and 18µs CPU per acquisition (all nodes)"},
		{"INFO refused", func() *Result {
			r := fixture(t, "r", fixtureOpts{servers: true})
			r.Servers.Unavailable = "INFO not available on 127.0.0.1:7001: ERR unknown command"
			return r
		}(), "server cost: unavailable (INFO not available on 127.0.0.1:7001: ERR unknown command)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServerCostLine(tc.r); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMergeSumsWhatWasSent(t *testing.T) {
	gen := func(id string, i int, s *Sent) *Result {
		r := fixture(t, id, fixtureOpts{generatorID: i, generators: 2})
		r.Client = &Client{CPUUS: 1000, Sent: s}
		return r
	}
	a := gen("gen-0", 0, &Sent{RoundTrips: 10, Commands: 12, ByCommand: map[string]int64{"set": 12}})
	b := gen("gen-1", 1, &Sent{RoundTrips: 30, Commands: 30, ByCommand: map[string]int64{"set": 20, "evalsha": 10}})
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Client.Sent
	if s == nil || s.RoundTrips != 40 || s.Commands != 42 || s.ByCommand["set"] != 32 || s.ByCommand["evalsha"] != 10 {
		t.Fatalf("merged sent %+v", s)
	}
	if s.RoundTripsPerAcquire == nil || *s.RoundTripsPerAcquire != 40/float64(m.Contention.Acquired) {
		t.Errorf("merged round trips per acquisition %v over %d acquisitions", s.RoundTripsPerAcquire, m.Contention.Acquired)
	}
	b.Client.Sent = nil
	if m, err := Merge([]*Result{a, b}); err != nil || m.Client.Sent != nil {
		t.Errorf("one generator without a count: merged %+v, %v; want none", m.Client.Sent, err)
	}
}
