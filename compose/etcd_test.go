package compose_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

func upEtcd(t *testing.T, n int, opts compose.UpOptions) *compose.Topology {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topo, err := compose.Up(ctx, compose.Spec{Kind: compose.KindEtcd, Masters: n}, opts)
	if err != nil {
		t.Fatalf("up etcd:%d: %v", n, err)
	}
	t.Cleanup(func() { _ = topo.Close() })
	return topo
}

func TestEtcdMembersUpWithLeaderAndStopOnClose(t *testing.T) {
	for _, n := range []int{1, 3} {
		topo := upEtcd(t, n, compose.UpOptions{})
		ps := pids(topo)
		if len(ps) != n {
			t.Fatalf("etcd:%d: %d members, want %d", n, len(ps), n)
		}
		requireRunning(t, ps)
		leader, err := topo.EtcdLeader(context.Background())
		if err != nil || leader.Role != compose.RoleMember {
			t.Fatalf("etcd:%d leader %v, %v", n, leader, err)
		}
		for i := range topo.DataNodes() {
			s, err := topo.ReadEtcdStats(context.Background(), i)
			if err != nil || s.CPUSeconds <= 0 {
				t.Fatalf("member %d /metrics: %+v, %v", i, s, err)
			}
		}
		if err := topo.Close(); err != nil {
			t.Fatal(err)
		}
		requireGone(t, ps, "Close")
	}
}

func TestEtcdStopsOnErrorAndCancel(t *testing.T) {
	before := len(children(t))
	// etcd reads ETCD_* variables as flags: a bad one makes every member exit.
	_, err := compose.Up(context.Background(), compose.Spec{Kind: compose.KindEtcd, Masters: 3},
		compose.UpOptions{ServerEnv: []string{"ETCD_SNAPSHOT_COUNT=not-a-number"}})
	if err == nil {
		t.Fatal("etcd members with a bad setting came up")
	}
	if left := len(children(t)) - before; left > 0 {
		t.Fatalf("%d processes left running after the failed Up", left)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	topo, err := compose.Up(ctx, compose.Spec{Kind: compose.KindEtcd, Masters: 3}, compose.UpOptions{})
	if err == nil {
		// The machine was fast enough: cancelling now must still stop them.
		ps := pids(topo)
		cancel()
		_ = topo.Close()
		requireGone(t, ps, "cancel and Close")
	}
	if left := len(children(t)) - before; left > 0 {
		t.Fatalf("%d processes left running after a cancelled Up", left)
	}
}

func TestEtcdKillLeaderElectsAnother(t *testing.T) {
	topo := upEtcd(t, 3, compose.UpOptions{})
	ctx := context.Background()
	old, err := topo.EtcdLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := compose.ParseFault("at=0s kill leader")
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if _, err := topo.Apply(ctx, f); err != nil {
		t.Fatal(err)
	}
	if old.Server.PID() != 0 {
		t.Fatalf("kill leader left %s running", old.Name)
	}
	var leader *compose.Node
	for (leader == nil || leader == old) && time.Since(killed) < 10*lockimpl.EtcdLocalTiming(3).Election {
		leader, _ = topo.EtcdLeader(ctx)
		time.Sleep(20 * time.Millisecond)
	}
	if leader == nil || leader == old {
		t.Fatalf("no new leader after %v (old %s)", time.Since(killed), old.Name)
	}
	// Logged, not asserted: a loaded machine stretches elections.
	t.Logf("new leader %s %v after the kill (election timeout %v)", leader.Name, time.Since(killed), lockimpl.EtcdLocalTiming(3).Election)
	// Refused where there is no leader.
	if err := topo.CheckFault(compose.FaultSpec{Kind: compose.FaultClockJump, Target: compose.TargetNode, Jump: time.Second}); err == nil {
		t.Error("clock-jump accepted on an etcd member")
	}
	// isolate needs the members started with peer proxies.
	if err := topo.CheckFault(mustFault(t, "at=0s isolate node=0 for=1s")); err == nil || !strings.Contains(err.Error(), "peer links") {
		t.Errorf("isolate without peer proxies: %v, want a refusal naming the peer links", err)
	}
}

func TestEtcdPausedMemberTimesOutAndRestartRejoins(t *testing.T) {
	topo := upEtcd(t, 3, compose.UpOptions{RestartDelay: 100 * time.Millisecond})
	ctx := context.Background()
	c, err := topo.EtcdMemberClient(2)
	if err != nil {
		t.Fatal(err)
	}
	// For far longer than the test needs (undo resumes it): a 1 s pause on
	// a loaded machine had ended before the Get below was sent (CI).
	undo, err := topo.Apply(ctx, compose.FaultSpec{Kind: compose.FaultPause, Target: compose.TargetNode, Node: 2, For: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = c.Get(gctx, "k")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get on a paused member: %v, want a timeout", err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	gctx, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Get(gctx, "k"); err != nil {
		t.Fatalf("Get after resume: %v", err)
	}
	// Restart: the member comes back from its data dir and serves again.
	undo, err = topo.Apply(ctx, compose.FaultSpec{Kind: compose.FaultRestart, Target: compose.TargetNode, Node: 1})
	if err != nil {
		t.Fatal(err)
	}
	if down := topo.Down(); len(down) != 1 {
		t.Fatalf("down after restart's kill: %v", down)
	}
	if err := undo(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if down := topo.Down(); len(down) != 0 {
		t.Fatalf("down after restart: %v", down)
	}
}

func TestEtcdPartitionThroughProxy(t *testing.T) {
	topo := upEtcd(t, 1, compose.UpOptions{Proxy: true})
	c, err := topo.EtcdClient()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	undo, err := topo.Apply(ctx, compose.FaultSpec{Kind: compose.FaultPartition, Target: compose.TargetNode, Node: 0, For: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = c.Put(gctx, "lockbench:test:k", "v")
	cancel()
	if err == nil {
		t.Fatal("Put through a partitioned proxy succeeded")
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	gctx, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Put(gctx, "lockbench:test:k", "v"); err != nil {
		t.Fatalf("Put after the partition healed: %v", err)
	}
}

func TestParseEtcdSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{{"etcd:1", 1}, {"etcd:3", 3}, {"etcd:5", 5}, {"etcd", 0}, {"etcd:2", 0}, {"etcd:7", 0}, {"etcd:x", 0}, {"etcd:", 0}} {
		got, err := compose.ParseSpec(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("ParseSpec(%q) accepted", tc.in)
			}
			continue
		}
		if err != nil || got.Kind != compose.KindEtcd || got.Masters != tc.want || got.String() != tc.in {
			t.Errorf("ParseSpec(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func TestParseEtcdURL(t *testing.T) {
	for _, tc := range []struct {
		in, endpoint, user, pw string
		bad                    bool
	}{
		{in: "http://127.0.0.1:2379", endpoint: "http://127.0.0.1:2379"},
		{in: "https://etcd.example:443/", endpoint: "https://etcd.example:443"},
		{in: "http://root:s3cret@h", endpoint: "http://h:2379", user: "root", pw: "s3cret"},
		{in: "redis://h:1", bad: true},
		{in: "http://:2379", bad: true},
		{in: "http://h:0", bad: true},
		{in: "http://h:2379/v3", bad: true},
		{in: "http://h:2379?x=1", bad: true},
		{in: "http://:s3cret@h:2379", bad: true},
		{in: "h:2379", bad: true},
	} {
		got, err := compose.ParseEtcdURL(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseEtcdURL(%q) accepted", tc.in)
			} else if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseEtcdURL(%q) error %q shows the password or is not one line", tc.in, err)
			}
			continue
		}
		if err != nil || got.Endpoint() != tc.endpoint || got.User != tc.user || got.Password != tc.pw {
			t.Errorf("ParseEtcdURL(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func FuzzParseEtcdURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:2379", "https://u:p@h:1/", "http://h", "http://[::1]:2", "://", "http://u:pw@:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := compose.ParseEtcdURL(s)
		if err != nil {
			if pw := passwordOf(s); len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("error %q shows the password %q", err, pw)
			}
			return
		}
		again, err := compose.ParseEtcdURL(u.Endpoint())
		if err != nil || again.Endpoint() != u.Endpoint() {
			t.Fatalf("%q → %q → %+v, %v", s, u.Endpoint(), again, err)
		}
	})
}

// passwordOf is the text between the first ':' after "//" and the last '@'.
func passwordOf(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

func TestParseEtcdMetrics(t *testing.T) {
	text := `# HELP grpc_server_handled_total Total number of RPCs completed on the server.
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_code="OK",grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 12
grpc_server_handled_total{grpc_code="Unavailable",grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3
grpc_server_handled_total{grpc_code="OK",grpc_method="LeaseGrant",grpc_service="etcdserverpb.Lease",grpc_type="unary"} 5
process_cpu_seconds_total 1.25
process_cpu_seconds_total_bogus x
`
	s := compose.ParseEtcdMetrics(text)
	if s.Calls["Txn"] != 15 || s.Calls["LeaseGrant"] != 5 || s.TotalCalls() != 20 || s.CPUSeconds != 1.25 {
		t.Fatalf("ParseEtcdMetrics = %+v", s)
	}
}
