package plan

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/results"
)

// A server at maxmemory with noeviction refuses every SET: no attempt
// succeeds. Then no figure per acquisition may read as measured (the table
// printed "server cost: 0.00 commands and 0µs CPU per acquisition"), the
// acquire_failed row counts its failures as errors (it showed errors 0),
// and one line says no attempt succeeded, naming the error.
func TestEveryAttemptRefusedAtMaxmemory(t *testing.T) {
	srv := composetest.Server(t, compose.ServerOptions{Args: []string{"--maxmemory", "1", "--maxmemory-policy", "noeviction"}})
	r := execute(t, "redis", "redis://"+srv.Addr(), "duration", "1s", "concurrency", "2")

	if r.Contention.Acquired != 0 || r.Contention.Attempts == 0 {
		t.Fatalf("acquired %d of %d attempts: want every attempt refused", r.Contention.Acquired, r.Contention.Attempts)
	}
	failed := r.Ops[results.OpAcquireFailed]
	if failed.Count == 0 || failed.Errors != failed.Count || r.Errors["oom"] != failed.Count {
		t.Errorf("acquire_failed count %d errors %d, errors by kind %v: want every failure an error of kind oom", failed.Count, failed.Errors, r.Errors)
	}
	if !r.Servers.Measured() || r.Servers.CommandsPerAcquire != nil || r.Servers.CPUUSPerAcquire != nil {
		t.Errorf("servers %+v: want measured, with no figure per acquisition", r.Servers)
	}
	if r.Contention.AttemptsPerAcquire != nil || r.Client == nil || r.Client.CPUUSPerAcquire != nil {
		t.Errorf("attempts per acquisition %v, client %+v: want both absent", r.Contention.AttemptsPerAcquire, r.Client)
	}
	// The reading starts as the window opens; an attempt sent just before
	// and answered in it counts as the window's attempt, not as its send.
	if s := r.Client.Sent; s == nil || s.RoundTrips < r.Contention.Attempts*9/10 || s.RoundTripsPerAcquire != nil {
		t.Errorf("sent %+v for %d attempts: want about one round trip per attempt counted, none per acquisition", s, r.Contention.Attempts)
	}

	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"attempts_per_acquire":null`, `"commands_per_acquire":null`, `"cpu_us_per_acquire":null`, `"round_trips_per_acquire":null`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("result JSON lacks %s", want)
		}
	}

	var table strings.Builder
	if err := results.WriteSummary(&table, r); err != nil {
		t.Fatal(err)
	}
	text := table.String()
	if !strings.Contains(text, "server cost: n/a per acquisition") || strings.Contains(text, "0.00 commands") {
		t.Errorf("run table:\n%s\nwant the server cost n/a", text)
	}
	if !regexp.MustCompile(`attempts/acquire\s*\|\s*n/a`).MatchString(text) {
		t.Errorf("run table:\n%s\nwant attempts/acquire n/a", text)
	}

	line := results.NoSuccessLine(r)
	if !strings.Contains(line, "no attempt succeeded") || !strings.Contains(line, "oom") || strings.Contains(line, "\n") {
		t.Errorf("no-success line %q: want one line naming oom", line)
	}

	for _, expr := range []string{"servers.commands_per_acquire<10", "client.round_trips_per_acquire<10", "contention.attempts_per_acquire<10"} {
		a, err := results.ParseAssertion(expr)
		if err != nil {
			t.Fatal(err)
		}
		checks := results.CheckAll([]results.Assertion{a}, []*results.Result{r})
		if len(results.Failed(checks)) != 1 {
			t.Errorf("--assert %s passed on a run without acquisitions: %+v", expr, checks)
		}
	}
}

// Round trips per acquisition are counted at the client, apart from the
// commands the servers ran: a single-instance lock sends one SET per attempt
// and one EVALSHA (release) per acquisition to each master, and each release
// runs two commands (GET, DEL) inside its script. The figures are asserted
// by that definition, not as exact values: the window's edges cut through up
// to one operation per worker and master (a release of an acquisition made
// before the window, an acquisition whose release came after it), and with
// ~40 acquisitions in a second of a loaded machine that edge alone moved
// single's round trips to 2.11.
func TestRoundTripsBesideServerCommands(t *testing.T) {
	for _, tc := range []struct {
		topology string
		masters  int64
	}{
		{"single", 1},
		{"redlock:3", 3},
	} {
		t.Run(tc.topology, func(t *testing.T) {
			const workers = 2
			r := execute(t, "topology", tc.topology, "concurrency", "2", "duration", "1s")
			acquired, attempts := r.Contention.Acquired, r.Contention.Attempts
			if acquired == 0 || r.Client == nil || r.Client.Sent == nil {
				t.Fatalf("acquired %d, client %+v: want acquisitions and the sends counted", acquired, r.Client)
			}
			sent := r.Client.Sent
			// within: got is want give or take the operations the window's
			// edges cut, one per worker and master.
			within := func(got, want int64) bool {
				slack := workers * tc.masters
				return got >= want-slack && got <= want+slack
			}
			sets, releases := sent.ByCommand["set"], sent.ByCommand["evalsha"]+sent.ByCommand["eval"]
			if !within(sets, tc.masters*attempts) {
				t.Errorf("SETs sent %d for %d attempts on %d masters", sets, attempts, tc.masters)
			}
			if !within(releases, tc.masters*acquired) {
				t.Errorf("releases sent %d for %d acquisitions on %d masters", releases, acquired, tc.masters)
			}
			if sent.RoundTrips != sets+releases || sent.Commands != sent.RoundTrips {
				t.Errorf("sent %+v: want one round trip per command, SETs and releases only", sent)
			}

			rt, err := results.Metric(r, "client.round_trips_per_acquire")
			if err != nil || rt != float64(sent.RoundTrips)/float64(acquired) {
				t.Errorf("round trips per acquisition %.3f (%v), want %d/%d", rt, err, sent.RoundTrips, acquired)
			}
			if rt < float64(tc.masters*2)-float64(2*workers*tc.masters)/float64(acquired) {
				t.Errorf("round trips per acquisition %.3f: fewer than a SET and a release per master", rt)
			}
			inside, err := r.ScriptCommands()
			if err != nil || !within(inside/2, releases) {
				t.Errorf("commands inside scripts %d (%v) for %d releases: want two (GET, DEL) per release", inside, err, releases)
			}
			in, err := results.Metric(r, "servers.script_commands_per_acquire")
			if err != nil || in != float64(inside)/float64(acquired) {
				t.Errorf("commands inside scripts per acquisition %.3f (%v), want %d/%d", in, err, inside, acquired)
			}
			cmds, _ := results.Metric(r, "servers.commands_per_acquire")
			if d := (cmds - (rt + in)) * float64(acquired); d < -float64(2*workers*tc.masters) || d > float64(2*workers*tc.masters) {
				t.Errorf("server commands per acquisition %.3f, want round trips %.3f plus those inside scripts %.3f", cmds, rt, in)
			}
			line := results.ServerCostLine(r)
			if !strings.Contains(line, "round trips") || !strings.Contains(line, "inside scripts") {
				t.Errorf("server cost line %q: want round trips and the commands inside scripts named", line)
			}
		})
	}
}
