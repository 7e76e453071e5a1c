package plan

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// TestZkNatsPlans: zookeeper:N and nats:N default to their own locks, take
// process faults on a node and on the leader, and refuse in one line what
// their locks cannot do; external servers are named by --zookeeper and
// --nats, whose passwords no refusal shows.
func TestZkNatsPlans(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Values
		lock string // the plan's lock when accepted
		bad  string // the flag the error must name; "" for none
	}{
		{name: "zookeeper:3 defaults to zk", v: Values{"topology": {"zookeeper:3"}}, lock: lockimpl.LockZk},
		{name: "nats:3 defaults to nats-kv", v: Values{"topology": {"nats:3"}}, lock: lockimpl.LockNatsKV},
		{name: "zk ttl at the bounds", v: Values{"topology": {"zookeeper:1"}, "ttl": {"1s"}}, lock: lockimpl.LockZk},
		{name: "kill zk leader", v: Values{"topology": {"zookeeper:3"}, "fault": {"at=1s kill leader"}, "duration": {"3s"}}, lock: lockimpl.LockZk},
		{name: "pause nats node", v: Values{"topology": {"nats:3"}, "fault": {"at=1s pause node=2 for=1s"}, "duration": {"3s"}}, lock: lockimpl.LockNatsKV},
		{name: "restart nats leader", v: Values{"topology": {"nats:3"}, "fault": {"at=1s restart leader"}, "duration": {"3s"}}, lock: lockimpl.LockNatsKV},
		{name: "nats-kv renews", v: Values{"topology": {"nats:1"}, "ttl": {"3s"}, "renew-every": {"ttl/3"}}, lock: lockimpl.LockNatsKV},
		{name: "a Redis lock on zookeeper", v: Values{"topology": {"zookeeper:3"}, "lock": {"single"}}, bad: "lock"},
		{name: "zk on nats", v: Values{"topology": {"nats:1"}, "lock": {"zk"}}, bad: "lock"},
		{name: "nats-kv on Redis", v: Values{"topology": {"single"}, "lock": {"nats-kv"}}, bad: "lock"},
		{name: "zookeeper:2", v: Values{"topology": {"zookeeper:2"}}, bad: "topology"},
		{name: "nats:5", v: Values{"topology": {"nats:5"}}, bad: "topology"},
		{name: "zk ttl under the bounds", v: Values{"topology": {"zookeeper:1"}, "ttl": {"500ms"}}, bad: "ttl"},
		{name: "zk ttl over the bounds", v: Values{"topology": {"zookeeper:1"}, "ttl": {"30s"}}, bad: "ttl"},
		{name: "zk renewal", v: Values{"topology": {"zookeeper:1"}, "renew-every": {"ttl/3"}}, bad: "renew-every"},
		{name: "nats-kv ttl not whole seconds", v: Values{"topology": {"nats:1"}, "ttl": {"1500ms"}}, bad: "ttl"},
		{name: "nats-kv ttl under a second", v: Values{"topology": {"nats:1"}, "ttl": {"500ms"}}, bad: "ttl"},
		{name: "clock on nats", v: Values{"topology": {"nats:3"}, "fault": {"at=1s clock-jump node=0 +5s"}, "duration": {"3s"}}, bad: "fault"},
		{name: "latency on zookeeper", v: Values{"topology": {"zookeeper:3"}, "fault": {"at=1s latency node=0 300ms for=1s"}, "duration": {"3s"}}, lock: lockimpl.LockZk},
		{name: "partition of a nats server", v: Values{"topology": {"nats:3"}, "fault": {"at=1s partition node=1 for=1s"}, "duration": {"3s"}}, lock: lockimpl.LockNatsKV},
		{name: "latency on an external ensemble", v: Values{"topology": {"zookeeper:1"}, "zookeeper": {"a"}, "fault": {"at=1s latency node=0 50ms for=1s"}, "duration": {"3s"}}, lock: lockimpl.LockZk},
		{name: "partition of an external nats server", v: Values{"topology": {"nats:1"}, "nats": {"nats://a"}, "fault": {"at=1s partition node=0 for=1s"}, "duration": {"3s"}}, lock: lockimpl.LockNatsKV},
		{name: "clock on zookeeper", v: Values{"topology": {"zookeeper:3"}, "fault": {"at=1s clock-speed node=0 2 for=1s"}, "duration": {"3s"}}, bad: "fault"},
		{name: "node past the members", v: Values{"topology": {"zookeeper:3"}, "fault": {"at=1s kill node=3"}, "duration": {"3s"}}, bad: "fault"},
		{name: "Redis persistence on nats", v: Values{"topology": {"nats:1"}, "persistence": {"aof-always"}}, bad: "persistence"},
		{name: "external ensemble", v: Values{"topology": {"zookeeper:3"}, "zookeeper": {"a:2181,b,c:1"}}, lock: lockimpl.LockZk},
		{name: "external ensemble's own ttl bounds", v: Values{"topology": {"zookeeper:1"}, "zookeeper": {"a"}, "ttl": {"30s"}}, lock: lockimpl.LockZk},
		{name: "external NATS servers", v: Values{"topology": {"nats:3"}, "nats": {"nats://a", "tls://u:pw@b:4222", "nats://c:1"}}, lock: lockimpl.LockNatsKV},
		{name: "bad --zookeeper", v: Values{"topology": {"zookeeper:1"}, "zookeeper": {"a:99999"}}, bad: "zookeeper"},
		{name: "bad --nats", v: Values{"topology": {"nats:1"}, "nats": {"http://u:pw@a:4222"}}, bad: "nats"},
		{name: "--nats on Redis", v: Values{"nats": {"nats://a"}}, bad: "nats"},
		{name: "--zookeeper on nats", v: Values{"topology": {"nats:1"}, "zookeeper": {"a"}}, bad: "zookeeper"},
		{name: "kill an external member", v: Values{"topology": {"zookeeper:1"}, "zookeeper": {"a"}, "fault": {"at=1s kill node=0"}, "duration": {"3s"}}, bad: "fault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, err := Expand(tc.v)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.bad != "" && (err == nil || !IsInputError(err) || !strings.HasPrefix(err.Error(), "--"+tc.bad+":")):
				t.Fatalf("got %v, want an input error naming --%s", err, tc.bad)
			case tc.bad != "" && (strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "\n")):
				t.Fatalf("error %q shows a password or is not one line", err)
			case tc.bad == "" && plans[0].Lock != tc.lock:
				t.Fatalf("plan %s on %s, want %s", plans[0].Lock, plans[0].Topology, tc.lock)
			}
		})
	}
}

// skipWithoutServers skips a run on a topology whose servers this machine
// cannot start.
func skipWithoutServers(t *testing.T, topology string) {
	t.Helper()
	if strings.HasPrefix(topology, "zookeeper") && !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	if strings.HasPrefix(topology, "nats") {
		if _, _, err := compose.NatsServerBinary(); err != nil {
			t.Skip(err)
		}
	}
}

// TestZkNatsRuns runs each lock on its topology for a second: it acquires,
// releases, and leaves no server process or directory behind.
func TestZkNatsRuns(t *testing.T) {
	for _, topology := range []string{"zookeeper:1", "zookeeper:3", "nats:1", "nats:3"} {
		t.Run(topology, func(t *testing.T) {
			skipWithoutServers(t, topology)
			r := execute(t, "topology", topology, "duration", "1s", "concurrency", "4", "ttl", "3s")
			if r.Contention.Acquired == 0 || r.Counters.Released == 0 {
				t.Errorf("acquired %d, released %d: want both above 0", r.Contention.Acquired, r.Counters.Released)
			}
			if r.Incidents.Overlaps != 0 || r.Incidents.DoubleGrants != 0 {
				t.Errorf("incidents %+v on unique keys", r.Incidents)
			}
			checkServerCost(t, r)
			if left := append(compose.ZkLeftovers(os.Getpid()), compose.NatsLeftovers(os.Getpid())...); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// checkServerCost: every local server's counters (mntr, /varz) and CPU
// (/proc) were read, and the sums are positive figures per acquisition: an
// acquisition cannot happen without a request reaching some server.
func checkServerCost(t *testing.T, r *results.Result) {
	t.Helper()
	s := r.Servers
	switch {
	case s == nil:
		t.Fatal("no server cost")
	case s.Unavailable != "" || len(s.Nodes) != len(r.Topology.Nodes):
		t.Fatalf("server cost of %d node(s), unavailable %q; want every one of %d", len(s.Nodes), s.Unavailable, len(r.Topology.Nodes))
	case s.CommandsPerAcquire == nil || *s.CommandsPerAcquire <= 0 || s.CPUUSPerAcquire == nil || *s.CPUUSPerAcquire <= 0:
		t.Fatalf("server commands %v and CPU %v per acquisition: want both positive", s.CommandsPerAcquire, s.CPUUSPerAcquire)
	}
}

// TestZkNatsLeaderFaults kills the leader (the ensemble's, the lock
// stream's) inside the window: the fault resolves to a member and applies
// without error, and nothing is left behind.
func TestZkNatsLeaderFaults(t *testing.T) {
	for _, topology := range []string{"zookeeper:3", "nats:3"} {
		t.Run(topology, func(t *testing.T) {
			skipWithoutServers(t, topology)
			plans, err := Expand(Values{"topology": {topology}, "duration": {"2s"}, "warmup": {"0"}, "concurrency": {"2"},
				"ttl": {"3s"}, "fault": {"at=500ms kill leader"}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Execute(context.Background(), plans[0], Env{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Faults) != 1 || r.Faults[0].Error != "" || r.Faults[0].Node == "" {
				t.Fatalf("faults %+v: want the leader killed", r.Faults)
			}
			if left := append(compose.ZkLeftovers(os.Getpid()), compose.NatsLeftovers(os.Getpid())...); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestZkNatsExternal runs each lock on servers it did not start, named by
// --zookeeper and --nats: the run reaches them, acquires, records them as
// external, and leaves them running.
func TestZkNatsExternal(t *testing.T) {
	ctx := context.Background()
	t.Run("zookeeper:1", func(t *testing.T) {
		skipWithoutServers(t, "zookeeper")
		e, err := compose.StartZkEnsemble(ctx, compose.ZkOptions{Members: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Stop() })
		r := execute(t, "topology", "zookeeper:1", "zookeeper", e.Addrs()[0], "duration", "1s", "concurrency", "2", "ttl", "3s")
		checkExternalRun(t, r, len(e.Processes()))
	})
	t.Run("nats:1", func(t *testing.T) {
		skipWithoutServers(t, "nats")
		c, err := compose.StartNatsCluster(ctx, compose.NatsOptions{Servers: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Stop() })
		r := execute(t, "topology", "nats:1", "nats", c.URLs()[0], "duration", "1s", "concurrency", "2", "ttl", "3s")
		checkExternalRun(t, r, len(c.Processes()))
	})
}

// checkExternalRun: the run was on external servers, acquired, and left
// the server running.
// An external server's CPU cannot be read from here: the cost is absent,
// and the result says why.
func checkExternalRun(t *testing.T, r *results.Result, running int) {
	t.Helper()
	if r.Topology.Provider != compose.ProviderExternal || r.Contention.Acquired == 0 || running != 1 {
		t.Errorf("provider %s, acquired %d, servers still running %d: want external, above 0, 1", r.Topology.Provider, r.Contention.Acquired, running)
	}
	f, err := results.LookupFigure("servers.cpu_us_per_acquire")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := f.Value(r); err == nil || !strings.Contains(err.Error(), "external") {
		t.Errorf("server CPU per acquisition of an external server: %v, %v; want not measured, saying it is external", v, err)
	}
}
