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
// commands the servers ran: a single-instance lock sends each master one SET
// per attempt and one EVALSHA (release) per acquisition, and each release
// runs two commands (GET, DEL) inside its script; Redlock over three masters
// sends each of them the same. The figures are asserted by that definition,
// not as exact values, for what a loaded machine moves:
//   - the sends are read around the window apart from the workers' counts
//     (the servers' INFO is read in between, and the window's last critical
//     sections drain after it), so a few percent of the sends can fall on
//     the other side of an edge than the acquisitions they belong to: 2.110
//     round trips for single's 2 once, in one second of a loaded machine;
//   - a connection opened in the window (a reconnect, a pool growing) sends
//     its set-up (HELLO), and a script a server has not seen goes as EVAL
//     after EVALSHA's NOSCRIPT: round trips too, counted, never a miscount.
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
			// What the window's edges can cut: the operations in flight at
			// each (one per worker and master), and a share of those sent
			// between a reading and the edge it stands for.
			inFlight := 2 * workers * tc.masters
			within := func(got, want int64) bool {
				slack := inFlight + want/10
				return got >= want-slack && got <= want+slack
			}
			sets, releases := sent.ByCommand["set"], sent.ByCommand["evalsha"]+sent.ByCommand["eval"]
			// Every SET that acquired is released on that master; a
			// contended attempt is a SET alone.
			contended := tc.masters * (attempts - acquired)
			if !within(sets-contended, releases) {
				t.Errorf("SETs sent %d, releases %d, for %d attempts and %d acquisitions: want a release per acquiring SET",
					sets, releases, attempts, acquired)
			}
			if !within(releases, tc.masters*acquired) {
				t.Errorf("releases sent %d for %d acquisitions on %d masters", releases, acquired, tc.masters)
			}
			var total int64
			for name, n := range sent.ByCommand {
				total += n
				switch name {
				case "set", "evalsha", "eval", "hello", "ping", "auth", "select", "client":
				default:
					t.Errorf("sent %d %s: not a command of this lock or of a connection's set-up", n, name)
				}
			}
			// The counters are read while commands are in flight, one
			// after the other: a command counted by name may not have its
			// round trip counted yet (CI: 15197 against 15198).
			near := func(got, want int64) bool { return got >= want-inFlight && got <= want+inFlight }
			if !near(sent.RoundTrips, total) || !near(sent.Commands, total) {
				t.Errorf("sent %+v: want one round trip per command, every command counted by name", sent)
			}

			rt, err := results.Metric(r, "client.round_trips_per_acquire")
			if err != nil || rt != float64(sent.RoundTrips)/float64(acquired) {
				t.Errorf("round trips per acquisition %.3f (%v), want %d/%d", rt, err, sent.RoundTrips, acquired)
			}
			// The servers count a script's GET and DEL, and what the client
			// sent beyond what it counted.
			inside, err := r.ScriptCommands()
			if err != nil || !within(inside, 2*releases) {
				t.Errorf("commands inside scripts %d (%v) for %d releases: want two (GET, DEL) per release", inside, err, releases)
			}
			in, err := results.Metric(r, "servers.script_commands_per_acquire")
			if err != nil || in != float64(inside)/float64(acquired) {
				t.Errorf("commands inside scripts per acquisition %.3f (%v), want %d/%d", in, err, inside, acquired)
			}
			cmds, err := results.Metric(r, "servers.commands_per_acquire")
			if ran := int64(cmds*float64(acquired) + 0.5); err != nil || !within(ran, sent.RoundTrips+inside) {
				t.Errorf("server commands per acquisition %.3f (%v), want round trips %.3f plus those inside scripts %.3f", cmds, err, rt, in)
			}
			line := results.ServerCostLine(r)
			if !strings.Contains(line, "round trips") || !strings.Contains(line, "inside scripts") {
				t.Errorf("server cost line %q: want round trips and the commands inside scripts named", line)
			}
		})
	}
}
