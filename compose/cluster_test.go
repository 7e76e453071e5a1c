package compose_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

func TestParseClusterSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want compose.Spec
		bad  string
	}{
		{in: "cluster", want: compose.Spec{Kind: compose.KindCluster, Replicas: 1}},
		{in: "cluster:3", want: compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1}},
		{in: "cluster:9,0", want: compose.Spec{Kind: compose.KindCluster, Masters: 9}},
		{in: "cluster:4,3", want: compose.Spec{Kind: compose.KindCluster, Masters: 4, Replicas: 3}},
		{in: " cluster:5,2 ", want: compose.Spec{Kind: compose.KindCluster, Masters: 5, Replicas: 2}},
		{in: "cluster:2", bad: "master count"},
		{in: "cluster:10", bad: "master count"},
		{in: "cluster:x", bad: "master count"},
		{in: "cluster:", bad: "master count"},
		{in: "cluster:3,", bad: "replica count"},
		{in: "cluster:3,4", bad: "replica count"},
		{in: "cluster:3,-1", bad: "replica count"},
		{in: "cluster:3,1,1", bad: "replica count"},
		{in: "clusters", bad: "did you mean cluster?"},
		{in: "tree", bad: "unknown kind"},
	} {
		got, err := compose.ParseSpec(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "cluster:M[,R]") && !strings.Contains(err.Error(), "did you mean") {
				t.Errorf("ParseSpec(%q) = %+v, %v; want an error about %s that lists the specs", tc.in, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if again, err := compose.ParseSpec(got.String()); err != nil || again != got {
			t.Errorf("%q → %q → %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

func TestParseClusterFaults(t *testing.T) {
	for _, tc := range []struct {
		in, want, bad string
	}{
		{in: "at=1s kill master=2", want: "at=1s kill master=2"},
		{in: "at=1s failover shard=0", want: "at=1s failover shard=0"},
		{in: "at=0s lag-replica shard=1 for=2s", want: "at=0s lag-replica shard=1 for=2s"},
		{in: "at=0s lag-replica for=2s", want: "at=0s lag-replica for=2s"},
		{in: "at=1s pause master=0 for=1s", want: "at=1s pause master=0 for=1s"},
		{in: "at=1s failover", bad: "needs shard=S"},
		{in: "at=1s failover master=0", bad: "needs shard=S"},
		{in: "at=1s failover shard=0 for=1s", bad: "no for="},
		{in: "at=1s kill shard=0", bad: "master=S or node=N"},
		{in: "at=1s kill master=9", bad: "shard index"},
		{in: "at=1s kill master=x", bad: "shard index"},
		{in: "at=1s kill master=0 node=1", bad: "more than one target"},
		{in: "at=0s lag-replica master=0 for=1s", bad: "acts on a replica"},
	} {
		f, err := compose.ParseFault(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("ParseFault(%q) = %+v, %v; want an error about %q", tc.in, f, err, tc.bad)
			}
			continue
		}
		if err != nil || f.String() != tc.want {
			t.Errorf("ParseFault(%q) = %q, %v; want %q", tc.in, f.String(), err, tc.want)
		}
	}
}

// eventLog collects fault events from Schedule's goroutines.
type eventLog struct {
	mu  sync.Mutex
	evs []compose.FaultEvent
}

func (l *eventLog) add(ev compose.FaultEvent) { l.mu.Lock(); l.evs = append(l.evs, ev); l.mu.Unlock() }

// last is the latest event and whether it is its fault's final report.
func (l *eventLog) last() (compose.FaultEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.evs) == 0 {
		return compose.FaultEvent{}, false
	}
	return l.evs[len(l.evs)-1], l.evs[len(l.evs)-1].Done
}

// clusterStates reads CLUSTER INFO's cluster_state from every data node.
func clusterStates(t *testing.T, topo *compose.Topology) []string {
	t.Helper()
	var out []string
	for _, n := range topo.DataNodes() {
		c := composetest.ClientAt(t, n.Addr)
		v, err := c.ClusterInfo(context.Background()).Result()
		if err != nil {
			t.Fatalf("CLUSTER INFO on %s: %v", n.Name, err)
		}
		for _, line := range strings.Split(v, "\n") {
			if s, ok := strings.CutPrefix(strings.TrimSpace(line), "cluster_state:"); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func TestClusterUpFailoverAndStop(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1}, compose.UpOptions{})
	ctx := context.Background()
	if n := len(topo.DataNodes()); n != 6 {
		t.Fatalf("%d data nodes, want 3 masters and 3 replicas", n)
	}
	for i, s := range clusterStates(t, topo) {
		if s != "ok" {
			t.Fatalf("node %d: cluster_state:%s", i, s)
		}
	}
	cc := topo.ClusterClient(compose.ClientOptions{PoolSize: 4})
	// Keys spread over every master.
	for i := range 60 {
		if err := cc.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for s := range 3 {
		m, err := topo.ShardMaster(ctx, s)
		if err != nil || m != topo.DataNodes()[s] {
			t.Fatalf("shard %d master %v, %v; want master-%d", s, m, err, s)
		}
		if n := composetest.ClientAt(t, m.Addr).DBSize(ctx).Val(); n == 0 {
			t.Errorf("master %s holds no key of 60", m.Name)
		}
	}

	t.Run("graceful failover promotes the replica", func(t *testing.T) {
		replica, err := topo.ShardReplica(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		var log eventLog
		stop := topo.Schedule(ctx, time.Now(), []compose.FaultSpec{mustFault(t, "at=0s failover shard=1")}, log.add)
		waitFor(t, 15*time.Second, "the failover to be reported", func() bool { _, done := log.last(); return done })
		stop()
		last, _ := log.last()
		if last.Err != nil || last.Promoted == nil || !strings.Contains(last.Promoted.Node, replica.Addr) {
			t.Fatalf("failover event %+v (promoted %+v); want %s promoted", last, last.Promoted, replica.Name)
		}
		waitFor(t, 5*time.Second, "the shard to name the replica master", func() bool {
			m, err := topo.ShardMaster(ctx, 1)
			return err == nil && m == replica
		})
	})

	t.Run("killed master's replica is promoted and takes writes", func(t *testing.T) {
		master := topo.DataNodes()[0]
		replica, err := topo.ShardReplica(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		pid := master.Server.PID()
		var log eventLog
		stop := topo.Schedule(ctx, time.Now(), []compose.FaultSpec{mustFault(t, "at=0s kill master=0")}, log.add)
		waitFor(t, 20*time.Second, "the promotion to be reported", func() bool { _, done := log.last(); return done })
		stop()
		if composetest.Alive(pid) {
			t.Fatal("master-0 still running")
		}
		last, _ := log.last()
		if last.Err != nil || last.Promoted == nil || !strings.Contains(last.Promoted.Node, replica.Addr) {
			t.Fatalf("kill event %+v (promoted %+v); want %s promoted", last, last.Promoted, replica.Name)
		}
		t.Logf("replica promoted %v after the kill", last.Promoted.After)
		// The ClusterClient finds the new master of shard 0 by itself.
		var lastErr error
		waitFor(t, 10*time.Second, "writes to every shard", func() bool {
			for i := range 60 {
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				lastErr = cc.Set(wctx, fmt.Sprintf("k%d", i), "w", 0).Err()
				cancel()
				if lastErr != nil {
					return false
				}
			}
			return true
		})
		if got := topo.Down(); len(got) != 1 || got[0] != master.Addr {
			t.Errorf("Down() = %v, want [%s]", got, master.Addr)
		}
		idx, err := topo.MasterIndexes(ctx)
		if err != nil || len(idx) != 3 || topo.DataNodes()[idx[0]] != replica {
			t.Errorf("MasterIndexes = %v, %v; want shard 0 served by %s", idx, err, replica.Name)
		}
	})
}

func TestClusterExternalDiscovers(t *testing.T) {
	local := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 0}, compose.UpOptions{})
	ctx := context.Background()
	// Any one node's URL finds all three masters.
	ext, err := compose.Up(ctx, compose.Spec{Kind: compose.KindCluster, Replicas: 1},
		compose.UpOptions{URLs: []string{"redis://" + local.DataNodes()[2].Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if ext.Provider != compose.ProviderExternal || ext.Spec.String() != "cluster:3,0" || len(ext.DataNodes()) != 3 {
		t.Fatalf("discovered %s %s with %v", ext.Provider, ext.Spec, ext.Addrs())
	}
	for i, n := range ext.DataNodes() {
		if n.Addr != local.DataNodes()[i].Addr || n.Server != nil {
			t.Errorf("node %d: %s (server %v), want %s", i, n.Addr, n.Server, local.DataNodes()[i].Addr)
		}
	}
	if err := ext.ClusterClient(compose.ClientOptions{}).Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A count that does not match, and a server that is no cluster node.
	if _, err := compose.Up(ctx, compose.Spec{Kind: compose.KindCluster, Masters: 4, Replicas: 1},
		compose.UpOptions{URLs: []string{"redis://" + local.DataNodes()[0].Addr}}); err == nil || !strings.Contains(err.Error(), "3 masters") {
		t.Errorf("cluster:4 on a 3-master cluster: %v", err)
	}
	plain := composetest.Server(t, compose.ServerOptions{})
	if _, err := compose.Up(ctx, compose.Spec{Kind: compose.KindCluster, Replicas: 1},
		compose.UpOptions{URLs: []string{"redis://" + plain.Addr()}}); err == nil || !strings.Contains(err.Error(), "cluster") {
		t.Errorf("cluster on a plain server: %v", err)
	}
	if _, err := compose.Up(ctx, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1},
		compose.UpOptions{Provider: compose.ProviderDocker}); err == nil || !strings.Contains(err.Error(), "docker") {
		t.Errorf("cluster on docker: %v", err)
	}
}

func TestClusterStopsOnErrorAndCancel(t *testing.T) {
	before := len(children(t))
	// Cancelled while the nodes start or the cluster forms: nothing stays.
	for _, after := range []time.Duration{0, 150 * time.Millisecond, 400 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(after, cancel)
		topo, err := compose.Up(ctx, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1}, compose.UpOptions{})
		if err == nil {
			_ = topo.Close()
		} else if !errors.Is(err, context.Canceled) {
			t.Logf("cancel after %v: %v", after, err)
		}
		cancel()
		if left := len(children(t)) - before; left > 0 {
			t.Fatalf("cancel after %v: %d processes left running", after, left)
		}
	}
	// A cluster that is not ready in time fails Up and stops every node.
	_, err := compose.Up(context.Background(), compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 1},
		compose.UpOptions{ReadyTimeout: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("cluster with no time to get ready: %v", err)
	}
	if left := len(children(t)) - before; left > 0 {
		t.Fatalf("%d processes left running after the failed Up", left)
	}
}

// A SET NX whose connection breaks after it was sent is handed back as a
// SentError and never sent again: a resent SET NX would find its own key
// and be miscounted as contended.
func TestClusterClientNeverResends(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 0}, compose.UpOptions{Proxy: true})
	ctx := context.Background()
	cc := topo.ClusterClient(compose.ClientOptions{PoolSize: 2})
	const key = "lockbench:test:{resend}"
	if err := cc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	master, err := cc.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	shard := -1
	for _, n := range topo.DataNodes() {
		if n.Addr == master.Options().Addr || n.ProxyAddr == master.Options().Addr {
			shard = topo.Shard(n)
		}
	}
	if shard < 0 {
		t.Fatalf("no node for %s", master.Options().Addr)
	}
	node, _ := topo.ShardMaster(ctx, shard)
	admin := composetest.ClientAt(t, node.Addr)
	// A pooled connection to the key's master before the latency: a new one
	// would still be in its handshake when the link is cut, and the SET
	// never sent.
	if err := cc.Get(ctx, key).Err(); !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	// Replies from the shard's master are held back 400 ms; the SET itself
	// reaches the server at once. The link is cut while the reply waits, and
	// healed 100 ms later, in time for any resend.
	undoLatency, err := topo.Apply(ctx, mustFault(t, fmt.Sprintf("at=0s latency master=%d 400ms for=1h", shard)))
	if err != nil {
		t.Fatal(err)
	}
	defer undoLatency()
	time.AfterFunc(150*time.Millisecond, func() {
		undo, err := topo.Apply(ctx, mustFault(t, fmt.Sprintf("at=0s partition master=%d for=100ms", shard)))
		if err != nil {
			t.Error(err)
			return
		}
		time.AfterFunc(100*time.Millisecond, func() { _ = undo() })
	})
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := cc.SetNX(sctx, key, "token", time.Minute).Result()
	var sent *compose.SentError
	if !errors.As(err, &sent) {
		t.Fatalf("SET NX across a cut link: %v, %v; want a SentError", ok, err)
	}
	stats, err := compose.ReadServerStats(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if n := stats.Calls["set"]; n != 1 {
		t.Fatalf("the server ran SET %d times, want once", n)
	}
	if v := admin.Get(ctx, key).Val(); v != "token" {
		t.Fatalf("key holds %q: the SET did run", v)
	}
}

// pause and partition act on one node each, are logged with their actual
// times, and the shard answers again once they end.
func TestClusterPauseAndPartitionPerNode(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindCluster, Masters: 3, Replicas: 0}, compose.UpOptions{Proxy: true})
	ctx := context.Background()
	cc := topo.ClusterClient(compose.ClientOptions{PoolSize: 4})
	// A key on shard 1.
	key := ""
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("{p%d}", i)
		if m, err := cc.MasterForKey(ctx, k); err == nil && m.Options().Addr == topo.DataNodes()[1].Addr {
			key = k
		}
	}
	for _, spec := range []string{"at=0s partition master=1 for=400ms", "at=0s pause node=1 for=400ms"} {
		var log eventLog
		start := time.Now()
		stop := topo.Schedule(ctx, start, []compose.FaultSpec{mustFault(t, spec)}, log.add)
		waitFor(t, 2*time.Second, spec+" to apply", func() bool { ev, _ := log.last(); return ev.Node != "" })
		time.Sleep(50 * time.Millisecond)
		wctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		err := cc.Set(wctx, key, "v", 0).Err()
		cancel()
		if err == nil {
			t.Errorf("%s: a write to shard 1 succeeded during the fault", spec)
		}
		waitFor(t, 3*time.Second, spec+" to end", func() bool { _, done := log.last(); return done })
		stop()
		ev, _ := log.last()
		if ev.Err != nil || !strings.Contains(ev.Node, "master-1") || ev.End < ev.At+400*time.Millisecond {
			t.Errorf("%s: event %+v", spec, ev)
		}
		waitFor(t, 3*time.Second, "shard 1 to answer after "+spec, func() bool {
			wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			return cc.Set(wctx, key, "v", 0).Err() == nil
		})
	}
}
