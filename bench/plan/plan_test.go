package plan

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/results"
)

// execute runs the given flags (on top of defaults and presets) end to end
// against local redis-server processes.
func execute(t *testing.T, flags ...string) *results.Result {
	t.Helper()
	v := Values{"duration": {"2s"}, "warmup": {"0"}}
	for i := 0; i+1 < len(flags); i += 2 {
		v.Set(flags[i], flags[i+1])
	}
	plans, err := Expand(v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Execute(context.Background(), plans[0], Env{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGCPauseSingleVersusFenced(t *testing.T) {
	single := execute(t, "workload", "gc-pause", "lock", "single")
	if in := single.Incidents; in.Overlaps == 0 || in.StaleWritesAccepted == 0 {
		t.Errorf("gc-pause on single: %+v, want overlaps and stale writes accepted", in)
	}
	if got := single.Ops[results.OpOverrun].Count; got != single.Incidents.ExpiredDuringWork || got == 0 {
		t.Errorf("overrun has %d values, want one per expired write (%d)", got, single.Incidents.ExpiredDuringWork)
	}
	fenced := execute(t, "workload", "gc-pause", "lock", "fenced")
	if in := fenced.Incidents; in.FencingRejected == 0 || in.StaleWritesAccepted != 0 {
		t.Errorf("gc-pause on fenced: %+v, want fencing rejections and no stale writes accepted", in)
	}
	if !fenced.Lock.Fencing || single.Lock.Fencing {
		t.Errorf("lock info: single %+v, fenced %+v", single.Lock, fenced.Lock)
	}
}

func TestNoPausesNoIncidents(t *testing.T) {
	// The TTL is raised from the preset's 100 ms so that scheduler stalls of a
	// loaded CI machine running -race cannot pass for pauses.
	for _, lock := range []string{"single", "fenced"} {
		r := execute(t, "workload", "gc-pause", "lock", lock, "pause-prob", "0", "ttl", "1s")
		if in := r.Incidents; in.Overlaps != 0 || in.StaleWritesAccepted != 0 || in.FencingRejected != 0 {
			t.Errorf("%s without pauses: %+v, want no incidents", lock, in)
		}
	}
}

func TestNaiveReleaseRace(t *testing.T) {
	naive := execute(t, "workload", "naive-release-race")
	if naive.Incidents.DoubleGrants == 0 || !naive.Lock.Unsafe {
		t.Errorf("naive: double grants %d unsafe %v, want double grants and the unsafe mark", naive.Incidents.DoubleGrants, naive.Lock.Unsafe)
	}
	// The atomic release never grants a key twice. A holder starved of CPU
	// past its 100 ms lease on a loaded machine is an overrun, not the
	// lock's fault, so overlaps are not asserted.
	single := execute(t, "workload", "naive-release-race", "lock", "single")
	if single.Incidents.DoubleGrants != 0 {
		t.Errorf("single on the same settings: %d double grants, want 0", single.Incidents.DoubleGrants)
	}
}

func TestOpenLoopRate(t *testing.T) {
	r := execute(t, "rate", "500", "duration", "3s", "concurrency", "16")
	if s := r.Counters.Scheduled; s < 1470 || s > 1530 {
		t.Fatalf("scheduled %d at 500/s for 3s, want 1500 ± 2%%", s)
	}
}

func TestRedlockCostAndNodeOutcomes(t *testing.T) {
	r := execute(t, "topology", "redlock:3", "concurrency", "2", "duration", "1s")
	if r.Lock.Name != "redlock" || r.Lock.Nodes != 3 || len(r.NodeOutcomes) != 3 {
		t.Fatalf("lock %+v, %d node outcomes", r.Lock, len(r.NodeOutcomes))
	}
	if r.Servers == nil || len(r.Servers.Nodes) != 3 || deref(r.Servers.CommandsPerAcquire) < 6 {
		t.Fatalf("servers %+v: want 3 nodes and at least 2 commands per node per acquisition", r.Servers)
	}
	for _, n := range r.NodeOutcomes {
		if n.Acquired == 0 {
			t.Fatalf("node %s acquired nothing", n.Node)
		}
	}
}

// Redlock over N masters runs every command of a lock cycle on each master,
// so its server commands per acquisition are N times single's: the figure the
// side-by-side table puts in "cmds ×". Each worker has a key of its own: a
// contended try costs a different number of commands on each lock (one SET
// on single; a SET and a release on every master on Redlock), and how often
// tries contend depends on how loaded the host is (CI saw single at 4.24).
func TestRedlockCommandsScaleWithMasters(t *testing.T) {
	single := execute(t, "topology", "single", "concurrency", "2", "duration", "1s", "keys", "unique")
	redlock := execute(t, "topology", "redlock:5", "concurrency", "2", "duration", "1s", "keys", "unique")
	if single.Servers == nil || redlock.Servers == nil || deref(single.Servers.CommandsPerAcquire) == 0 {
		t.Fatalf("server figures missing: single %+v, redlock %+v", single.Servers, redlock.Servers)
	}
	// An attempt that failed (a master too slow for the validity on a
	// stalled host: CI's -race run saw 23.1 commands an acquisition on
	// redlock:5) still sent its SETs and its release to every master, and
	// is counted in no acquisition: the N× holds for attempts that all
	// took the lock.
	for _, r := range []*results.Result{single, redlock} {
		if c := r.Contention; c.Attempts != c.Acquired {
			t.Skipf("%s: %d of %d attempts failed on this host; the ratio holds for runs whose every attempt took the lock",
				r.Lock.Name, c.Attempts-c.Acquired, c.Attempts)
		}
	}
	if ratio := deref(redlock.Servers.CommandsPerAcquire) / deref(single.Servers.CommandsPerAcquire); ratio < 4.75 || ratio > 5.25 {
		t.Fatalf("redlock:5 runs %.2f commands per acquisition (%d acquisitions), single %.2f (%d): ratio %.2f, want about 5",
			deref(redlock.Servers.CommandsPerAcquire), redlock.Contention.Acquired, deref(single.Servers.CommandsPerAcquire), single.Contention.Acquired, ratio)
	}
}

func TestExpandAndParse(t *testing.T) {
	plans, err := Expand(Values{"topology": {"single", "redlock:3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 || plans[0].Lock != "single" || plans[1].Lock != "redlock" || plans[1].Topology.Masters != 3 {
		t.Fatalf("plans %+v", plans)
	}
	p, err := Expand(Values{"topology": {"single"}, "lock": {"redlock"}})
	if err != nil || p[0].Lock != "redlock" {
		t.Fatalf("redlock on single: %v %v", p, err)
	}
	cfg := plans[0].Values.Config()
	for _, k := range []string{"concurrency", "duration", "ttl", "keys", "lock", "workload", "retry"} {
		if _, ok := cfg[k]; !ok {
			t.Errorf("config lacks %s", k)
		}
	}
	preset, err := Expand(Values{"workload": {"gc-pause"}, "ttl": {"1s"}})
	if err != nil {
		t.Fatal(err)
	}
	if preset[0].Workload.TTL.String() != "1s" || preset[0].Workload.PauseProb != 0.2 {
		t.Fatalf("preset with override: ttl %v pause-prob %v", preset[0].Workload.TTL, preset[0].Workload.PauseProb)
	}
}

func TestParseErrorsNameTheFlag(t *testing.T) {
	for flag, value := range map[string]string{
		"concurrency": "-3", "duration": "1", "ttl": "0", "keys": "hot:10,2", "hold": "exp:-1s",
		"retry": "exp:5ms,1ms", "renew-every": "ttl/1", "crash-prob": "x", "rate": "fast", "seed": "-1",
		"drift-factor": "0.9", "format": "yaml", "topology": "redlock:0", "persistence": "rdb",
		"history": "/no/such/dir/h.jsonl.gz",
	} {
		_, err := Expand(Values{flag: {value}})
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("--%s %s: %v, want an input error naming the flag", flag, value, err)
		}
	}
}

func TestParseRedlockTimings(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Values
		bad  string // the flag the error must name; "" for none
	}{
		{name: "defaults", v: Values{"topology": {"redlock:3"}}},
		{name: "node timeout under the ttl", v: Values{"topology": {"redlock:3"}, "ttl": {"1s"}, "node-timeout": {"900ms"}}},
		{name: "node timeout equal to the ttl", v: Values{"topology": {"redlock:3"}, "ttl": {"1s"}, "node-timeout": {"1s"}}, bad: "node-timeout"},
		{name: "node timeout above the ttl", v: Values{"ttl": {"500ms"}, "node-timeout": {"2s"}}, bad: "node-timeout"},
		{name: "drift factor 0 would silently become 0.01", v: Values{"drift-factor": {"0"}}, bad: "drift-factor"},
		{name: "small drift factor", v: Values{"topology": {"redlock:3"}, "drift-factor": {"0.0001"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, err := Expand(tc.v)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.bad != "" && (err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--"+tc.bad)):
				t.Fatalf("got %v, want an input error naming --%s", err, tc.bad)
			case tc.bad == "" && plans[0].LockOptions.Redlock.DriftFactor <= 0:
				t.Fatalf("drift factor %v", plans[0].LockOptions.Redlock.DriftFactor)
			}
		})
	}
}

func FuzzResolve(f *testing.F) {
	f.Add("keys", "zipf:10,1.5")
	f.Add("hold", "lognormal:1ms,0.5")
	f.Add("renew-every", "ttl/3")
	f.Fuzz(func(t *testing.T, flag, value string) {
		_, err := Expand(Values{flag: {value}})
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error for --%s %q: %v", flag, value, err)
		}
	})
}

// A managed Redis may refuse INFO: the run still succeeds and says so.
func TestInfoRefusedIsReportedNotFatal(t *testing.T) {
	srv := composetest.Server(t, compose.ServerOptions{Args: []string{"--rename-command", "INFO", ""}})
	r := execute(t, "redis", "redis://"+srv.Addr(), "duration", "500ms", "concurrency", "2")
	if r.Contention.Acquired == 0 {
		t.Fatal("nothing acquired")
	}
	if r.Servers == nil || !strings.Contains(r.Servers.Unavailable, "INFO") {
		t.Fatalf("servers %+v: want INFO named as unavailable", r.Servers)
	}
	if !strings.HasPrefix(r.Topology.ServerVersion, "unknown") || r.Topology.Provider != "external" {
		t.Fatalf("topology %+v", r.Topology)
	}
}

// A master killed mid-run: the survivors' cost is reported with the dead node
// named, failed attempts stay out of the acquire histogram, and cleanup does
// not complain about the node it killed itself.
func TestKillFaultKeepsFiguresHonest(t *testing.T) {
	var log strings.Builder
	v := Values{"duration": {"1500ms"}, "warmup": {"0"}, "topology": {"redlock:3"}, "concurrency": {"4"},
		"fault": {"at=500ms kill node=0"}, "node-timeout": {"100ms"}}
	plans, err := Expand(v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Execute(context.Background(), plans[0], Env{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Servers
	if !s.Measured() || len(s.Unmeasured) != 1 || !strings.Contains(s.Unmeasured[0], r.Topology.Nodes[0]) || deref(s.CommandsPerAcquire) <= 0 {
		t.Fatalf("servers %+v: want the survivors measured and node 0 named as missing", s)
	}
	if strings.Contains(log.String(), "cleanup of") || strings.Contains(log.String(), "refused") {
		t.Fatalf("cleanup complained about the node the run killed:\n%s", log.String())
	}
	c := r.Contention
	if got := r.Ops[results.OpAcquire].Count; got != c.Acquired+c.Contended {
		t.Fatalf("acquire histogram %d, want answered attempts %d", got, c.Acquired+c.Contended)
	}
	if len(r.Faults) != 1 || !strings.Contains(r.Faults[0].Node, "master-0") {
		t.Fatalf("faults %+v: want the kill logged against master-0", r.Faults)
	}

	// Two and a half seconds after the kill: on a loaded CI host the kill
	// was seen to land late in a 1 s window, and an attempt's dial
	// retries to the dead server can outlast what is left of it.
	single := execute(t, "fault", "at=500ms kill node=0", "concurrency", "2", "duration", "3s")
	if len(single.Faults) != 1 || single.Faults[0].Error != "" {
		t.Fatalf("single: faults %+v, want the kill applied", single.Faults)
	}
	failed := single.Ops[results.OpAcquireFailed]
	if failed.Count == 0 || single.Ops[results.OpAcquire].Count != single.Contention.Acquired+single.Contention.Contended {
		t.Fatalf("single after a kill at %.2fs of %.2fs: acquire %d, acquire_failed %d, acquired %d: want refusals only in acquire_failed",
			single.Faults[0].AtS, single.DurationS, single.Ops[results.OpAcquire].Count, failed.Count, single.Contention.Acquired)
	}
}

// A restart is logged when the node was killed and when it came back.
func TestRestartFaultLogsBothTimes(t *testing.T) {
	r := execute(t, "topology", "redlock:3", "fault", "at=300ms restart node=1", "restart-delay", "500ms", "duration", "1500ms", "concurrency", "2")
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v", r.Faults)
	}
	f := r.Faults[0]
	if f.Error != "" || f.AtS < 0.25 || f.AtS > 0.9 || f.EndS-f.AtS < 0.5 {
		t.Fatalf("restart logged %+v: want killed at ~0.3s and back at least 0.5s later", f)
	}
}

func TestParseTags(t *testing.T) {
	good, err := ParseTags([]string{"team=locks", "env = ci", "empty="})
	if err != nil || good["team"] != "locks" || good["env"] != "ci" || good["empty"] != "" {
		t.Fatalf("ParseTags = %v, %v", good, err)
	}
	for _, bad := range [][]string{{"team"}, {"=x"}, {"a b=c"}, {"k=1", "k=2"}} {
		if _, err := ParseTags(bad); err == nil {
			t.Errorf("ParseTags(%q) accepted", bad)
		}
	}
}

func FuzzParseTags(f *testing.F) {
	for _, s := range []string{"team=locks", "k=v=w", "=", "a,b=c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := ParseTags([]string{s})
		if err == nil && len(tags) != 1 {
			t.Fatalf("ParseTags(%q) = %v without an error", s, tags)
		}
	})
}

func FuzzParseRedisURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "redis://:pw@h:1", "ftp://x", "redis://h:99999", "rediss://u:p@h:6380/-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := compose.ParseRedisURL(s)
		if err == nil && (o.Addr == "" || o.DB < 0) {
			t.Fatalf("ParseRedisURL(%q) accepted %+v", s, o)
		}
		if err != nil {
			if pw := urlPasswordOf(s); len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("error repeats the password: %v", err)
			}
		}
	})
}

// urlPasswordOf is the password part of scheme://user:password@host.
func urlPasswordOf(s string) string {
	_, rest, _ := strings.Cut(s, "://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

func TestPipelineAuto(t *testing.T) {
	for _, lock := range []string{"single", "fenced"} {
		r := execute(t, "pipeline", "auto", "lock", lock, "concurrency", "32", "duration", "500ms")
		if r.Contention.Acquired == 0 || r.TotalErrors() != 0 || r.Config["pipeline"] != "auto" {
			t.Errorf("%s with --pipeline auto: acquired %d, errors %v, config pipeline %v", lock, r.Contention.Acquired, r.Errors, r.Config["pipeline"])
		}
		if got := r.Ops[results.OpRelease].Count; got != r.Counters.Released {
			t.Errorf("%s: %d releases timed, %d released", lock, got, r.Counters.Released)
		}
		// The pipe counts what it writes: every command, and a batch as one
		// round trip, so 32 workers' commands share round trips. (Not
		// exactly two a pair: the workers' commands in flight as the window
		// opens and closes fall on either side of its readings.)
		if s := r.Client.Sent; s == nil || s.Commands <= r.Contention.Acquired || s.RoundTrips == 0 || s.RoundTrips >= s.Commands {
			t.Errorf("%s: sent %+v for %d acquisitions, want more commands than acquisitions, in fewer round trips", lock, s, r.Contention.Acquired)
		}
	}
	for _, bad := range []Values{
		{"pipeline": {"auto"}, "topology": {"redlock:3"}},
		{"pipeline": {"auto"}, "topology": {"replicated"}, "wait-replicas": {"1"}},
		{"pipeline": {"auto"}, "fault": {"at=1s kill node=0"}},
		{"pipeline": {"sometimes"}},
	} {
		if _, err := Expand(bad); !IsInputError(err) || !strings.Contains(err.Error(), "--pipeline") {
			t.Errorf("Expand(%v) = %v, want a --pipeline input error", bad, err)
		}
	}
}

// deref reads a figure per acquisition, 0 when absent.
func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func TestStagedRateIsTheWindow(t *testing.T) {
	p, err := Expand(Values{"rate": {"100,2000:30s,2000:1m"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := p[0].Bench.Duration; d != 90*time.Second || p[0].Values.Get("duration") != "1m30s" {
		t.Fatalf("duration %v (config %q), want the stages' 1m30s", d, p[0].Values.Get("duration"))
	}
	if r := p[0].Workload.Rate; !r.Staged() || r.Start != 100 || len(r.Stages) != 2 {
		t.Fatalf("rate %+v, want 100 then two stages", r)
	}
	if _, err := Expand(Values{"rate": {"100,2000:30s,2000:1m"}, "duration": {"1m30s"}}); err != nil {
		t.Fatalf("-d equal to the stages' sum: %v", err)
	}
	_, err = Expand(Values{"rate": {"100,2000:30s,2000:1m"}, "duration": {"10s"}})
	if err == nil || !IsInputError(err) || !strings.HasPrefix(err.Error(), "--duration: 10s, ") || !strings.Contains(err.Error(), "1m30s") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("-d 10s with stages of 1m30s: %v, want one line of bad input naming --duration and the stages' 1m30s", err)
	}
	// A fault must fall inside the stages' window, as inside -d's.
	if _, err := Expand(Values{"rate": {"10,10:1s"}, "fault": {"pause:node=0,at=2s,for=1s"}}); err == nil || !strings.Contains(err.Error(), "--fault") {
		t.Fatalf("a fault after the stages: %v, want refused", err)
	}
}

func TestStagedRate(t *testing.T) {
	for v, want := range map[string]bool{"": false, "500": false, "50/100ms": false, "100,2000:5s": true, "100,2000": false} {
		if got := StagedRate(Values{"rate": {v}}); got != want {
			t.Errorf("StagedRate(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestHistoryPath(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		given, want string
		perRun      bool
	}{
		{"", "", true},
		{"off", "", true},
		{dir + "/h.jsonl.gz", dir + "/h.jsonl.gz", false},
		{dir + "/h-{id}.jsonl.gz", dir + "/h-r1.jsonl.gz", true},
		{dir, dir + "/r1.history.jsonl.gz", true},
		{dir + "/sub/", dir + "/sub/r1.history.jsonl.gz", true},
	} {
		if got := HistoryPath(tc.given, "r1"); got != tc.want {
			t.Errorf("HistoryPath(%q) = %q, want %q", tc.given, got, tc.want)
		}
		if got := HistoryPerRun(tc.given); got != tc.perRun {
			t.Errorf("HistoryPerRun(%q) = %v, want %v", tc.given, got, tc.perRun)
		}
	}
}

// TestCPUs: --cpus auto holds a pipelined run to one CPU and leaves others
// Go's default; the run records what it had, and restores GOMAXPROCS after.
func TestCPUs(t *testing.T) {
	for _, c := range []struct {
		v    Values
		want int
	}{
		{Values{"pipeline": {"auto"}}, 1},
		{Values{}, 0},
		{Values{"pipeline": {"auto"}, "cpus": {"0"}}, 0},
		{Values{"cpus": {"3"}}, 3},
	} {
		plans, err := Expand(c.v)
		if err != nil || plans[0].CPUs != c.want {
			t.Errorf("Expand(%v): CPUs %v, %v; want %d", c.v, plans, err, c.want)
		}
	}
	for _, bad := range []string{"-1", "two", "1.5", "100000"} {
		if _, err := Expand(Values{"cpus": {bad}}); !IsInputError(err) || !strings.Contains(err.Error(), "--cpus") || !strings.Contains(err.Error(), "want auto, 0") {
			t.Errorf("--cpus %s: %v; want an input error naming what --cpus accepts", bad, err)
		}
	}
	before := runtime.GOMAXPROCS(0)
	r := execute(t, "pipeline", "auto", "concurrency", "8", "duration", "300ms")
	if r.Client.CPUs != 1 || r.Config["cpus"] != "1" {
		t.Errorf("--pipeline auto: client.cpus %d, config.cpus %v; want 1 and \"1\"", r.Client.CPUs, r.Config["cpus"])
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after the run, %d before", after, before)
	}
}
