package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

func TestClusterBadInput(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		flag  string
		want  string
	}{
		{[]string{"topology", "cluster:2"}, "topology", "from 3 to 9"},
		{[]string{"topology", "cluster:3,9"}, "topology", "replica count"},
		{[]string{"topology", "cluster:3", "lock", "redlock"}, "lock", "not N independent masters"},
		{[]string{"topology", "cluster:3", "lock", "redsync"}, "lock", "not N independent masters"},
		{[]string{"topology", "cluster:3", "lock", "redislock"}, "lock", "not been measured"},
		{[]string{"topology", "cluster:3,0", "wait-replicas", "1"}, "wait-replicas", "0 replica(s)"},
		{[]string{"topology", "cluster:3", "pipeline", "auto"}, "pipeline", "cluster"},
		{[]string{"topology", "cluster:3", "fault", "at=1s kill primary"}, "fault", "master=S"},
		{[]string{"topology", "cluster:3", "fault", "at=1s kill master=3"}, "fault", "shards 0 to 2"},
		{[]string{"topology", "cluster:3", "fault", "at=1s kill node=6"}, "fault", "data nodes 0 to 5"},
		{[]string{"topology", "cluster:3,0", "fault", "at=1s failover shard=0"}, "fault", "no replicas"},
		{[]string{"topology", "single", "fault", "at=1s failover shard=0"}, "fault", "is on cluster:M"},
		{[]string{"topology", "redlock:3", "fault", "at=1s kill master=0"}, "fault", "is on cluster:M"},
		{[]string{"topology", "single", "wait-replicas", "1"}, "wait-replicas", "replicated, cluster:M"},
	} {
		v := Values{}
		for i := 0; i+1 < len(tc.flags); i += 2 {
			v[tc.flags[i]] = append(v[tc.flags[i]], tc.flags[i+1])
		}
		_, err := Expand(v)
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--"+tc.flag) || !strings.Contains(err.Error(), tc.want) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v; want one line naming --%s and %q", tc.flags, err, tc.flag, tc.want)
		}
	}
	for _, ok := range [][]string{
		{"topology", "cluster:3", "lock", "fenced", "wait-replicas", "0"},
		{"topology", "cluster:3", "wait-replicas", "1"},
		{"topology", "cluster:4,2", "fault", "at=1s kill master=3", "fault", "at=1s lag-replica shard=1 for=1s", "fault", "at=1s pause node=11 for=1s"},
	} {
		v := Values{}
		for i := 0; i+1 < len(ok); i += 2 {
			v[ok[i]] = append(v[ok[i]], ok[i+1])
		}
		if _, err := Expand(v); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}

// Runs against a cluster brought up by the test and reached by one node's
// URL: keys land on every master, one key under contention is never held
// twice, and cleanup leaves nothing on any master.
func TestClusterRuns(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1}, compose.UpOptions{})
	url := "redis://" + topo.DataNodes()[1].Addr
	ctx := context.Background()

	r := execute(t, "topology", "cluster", "redis", url, "lock", "fenced", "keys", "uniform:300", "concurrency", "8", "duration", "1s")
	if r.Topology.Spec != "cluster:3" || r.Topology.Provider != compose.ProviderExternal || len(r.Topology.Nodes) != 6 {
		t.Fatalf("topology %+v", r.Topology)
	}
	if r.Contention.Acquired == 0 || r.TotalErrors() != 0 || r.Incidents.Overlaps != 0 {
		t.Fatalf("fenced on a cluster: acquired %d, errors %d, overlaps %d", r.Contention.Acquired, r.TotalErrors(), r.Incidents.Overlaps)
	}
	if s := r.Servers; len(s.Nodes) != 3 {
		t.Fatalf("servers.nodes %+v: want the 3 masters", s.Nodes)
	}
	for _, n := range r.Servers.Nodes {
		if n.ByCommand["evalsha"] == 0 {
			t.Errorf("master %s ran no lock script: %+v", n.Addr, n.ByCommand)
		}
	}

	one := execute(t, "topology", "cluster:3", "redis", url, "lock", "single", "keys", "uniform:1", "concurrency", "16",
		"hold", "const:200us", "duration", "1s")
	if one.Incidents.Overlaps != 0 || one.Contention.Acquired == 0 || one.Contention.Contended == 0 {
		t.Fatalf("one key under contention: overlaps %d, acquired %d, contended %d", one.Incidents.Overlaps, one.Contention.Acquired, one.Contention.Contended)
	}

	for _, i := range []int{0, 1, 2} {
		c := composetest.ClientAt(t, topo.DataNodes()[i].Addr)
		keys, _, err := c.Scan(ctx, 0, "lockbench:*", 1000).Result()
		if err != nil || len(keys) != 0 {
			t.Errorf("master %d keeps %d run keys after cleanup (%v): %v", i, len(keys), err, keys[:min(3, len(keys))])
		}
	}
}

// A killed master's replica is promoted, the promotion time is recorded,
// and the lock keeps acquiring on every shard afterwards.
func TestClusterKillMasterRecordsPromotion(t *testing.T) {
	var log strings.Builder
	plans, err := Expand(Values{"topology": {"cluster:3"}, "duration": {"6s"}, "warmup": {"0"}, "concurrency": {"6"},
		"keys": {"uniform:60"}, "fault": {"at=300ms kill master=0"}, "acquire-timeout": {"200ms"}, "retry": {"none"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Execute(context.Background(), plans[0], Env{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Faults) != 1 || r.Faults[0].Error != "" || !strings.Contains(r.Faults[0].Node, "master-0") ||
		!strings.Contains(r.Faults[0].Promoted, "replica-0") || r.Faults[0].PromotedAfterS <= 0 {
		t.Fatalf("faults %+v: want master-0 killed and replica-0's promotion timed\n%s", r.Faults, log.String())
	}
	if !strings.Contains(log.String(), "promoted") {
		t.Errorf("log does not say when the replica was promoted:\n%s", log.String())
	}
	// After the promotion (and the client's slot-map reload) every key, those
	// of shard 0 included, is acquired again: the last second has no errors.
	last := r.Series[len(r.Series)-1]
	if last.Acquired == 0 || last.Errors != 0 {
		t.Errorf("last second %+v: want acquisitions and no errors once shard 0 failed over (promoted after %.2fs)", last, r.Faults[0].PromotedAfterS)
	}
	if r.Servers.Unmeasured == nil || !strings.Contains(strings.Join(r.Servers.Unmeasured, ";"), "master-0") {
		t.Errorf("servers %+v: want master-0 named as down", r.Servers)
	}
}

// The command line splits a repeatable flag at commas; cluster:M,R comes
// back whole, and a bare number elsewhere is still refused.
func TestClusterSpecSurvivesCommaSplit(t *testing.T) {
	plans, err := Expand(Values{"topology": {"single", "cluster:3", "0", "cluster:4", "2", "cluster:5"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range plans {
		got = append(got, p.Topology.String())
	}
	if strings.Join(got, " ") != "single cluster:3,0 cluster:4,2 cluster:5" {
		t.Fatalf("topologies %v", got)
	}
	for _, bad := range [][]string{{"single", "0"}, {"cluster:3,1", "2"}, {"redlock:3", "1"}} {
		if _, err := Expand(Values{"topology": bad}); err == nil || !IsInputError(err) {
			t.Errorf("%v: %v, want refused", bad, err)
		}
	}
}
