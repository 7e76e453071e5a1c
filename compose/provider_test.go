package compose_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

func pids(t *compose.Topology) []int {
	var out []int
	for _, n := range t.Nodes {
		if n.Server != nil {
			out = append(out, n.Server.PID())
		}
	}
	return out
}

// requireRunning fails t unless every process in ps runs.
func requireRunning(t *testing.T, ps []int) {
	t.Helper()
	for _, p := range ps {
		if !composetest.Alive(p) {
			t.Fatalf("pid %d not running after Up", p)
		}
	}
}

// requireGone reports every process in ps that still runs after when.
func requireGone(t *testing.T, ps []int, when string) {
	t.Helper()
	for _, p := range ps {
		if composetest.Alive(p) {
			t.Errorf("pid %d still running after %s", p, when)
		}
	}
}

func TestLocalProviderStopsOnSuccess(t *testing.T) {
	topo, err := compose.Up(context.Background(), compose.Spec{Kind: compose.KindRedlock, Masters: 3}, compose.UpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps := pids(topo)
	if len(ps) != 3 {
		t.Fatalf("%d servers, want 3", len(ps))
	}
	requireRunning(t, ps)
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, ps, "Close")
}

func TestLocalProviderStopsOnError(t *testing.T) {
	// A server that refuses its configuration must not stay behind.
	before := len(children(t))
	srv, err := compose.StartServer(context.Background(), compose.ServerOptions{Args: []string{"--no-such-directive", "1"}})
	if err == nil {
		_ = srv.Stop()
		t.Fatal("redis-server with a bad directive started")
	}
	if left := len(children(t)) - before; left > 0 {
		t.Fatalf("%d processes left running after the failed start", left)
	}
}

func TestLocalProviderStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	topo, err := compose.Up(ctx, compose.Spec{Kind: compose.KindSingle, Masters: 1}, compose.UpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps := pids(topo)
	cancel()
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, ps, "cancel and Close")
	// A cancelled context makes Up fail fast and leave nothing running.
	before := len(children(t))
	if _, err := compose.Up(ctx, compose.Spec{Kind: compose.KindSingle, Masters: 1}, compose.UpOptions{}); err == nil {
		t.Fatal("Up with a cancelled context succeeded")
	}
	if left := len(children(t)) - before; left > 0 {
		t.Fatalf("%d processes left running after Up with a cancelled context", left)
	}
}

func TestServerKillRestartSamePort(t *testing.T) {
	srv, err := compose.StartServer(context.Background(), compose.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	port, pid := srv.Port(), srv.PID()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if composetest.Alive(pid) {
		t.Fatal("killed server still alive")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if srv.Port() != port || srv.PID() == pid || srv.PID() == 0 {
		t.Fatalf("restart: port %d (was %d), pid %d (was %d)", srv.Port(), port, srv.PID(), pid)
	}
}

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want compose.Spec
		bad  bool
	}{
		{in: "single", want: compose.Spec{Kind: compose.KindSingle, Masters: 1}},
		{in: "redlock:5", want: compose.Spec{Kind: compose.KindRedlock, Masters: 5}},
		{in: "redlock", want: compose.Spec{Kind: compose.KindRedlock}},
		{in: "redlock:0", bad: true},
		{in: "redlock:10", bad: true},
		{in: "redlock:x", bad: true},
		{in: "single:2", bad: true},
		{in: "cluster:2", bad: true},
		{in: "", bad: true},
	} {
		got, err := compose.ParseSpec(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseSpec(%q) accepted", tc.in)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"single", "redlock:3", "redlock", "redlock:", ":", "cluster", "cluster:3", "cluster:9,3", "cluster:3,", "cluster:3,1,1", "etcd:3", "etcd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := compose.ParseSpec(s)
		if err != nil {
			return
		}
		if spec.Masters == 0 {
			return
		}
		again, err := compose.ParseSpec(spec.String())
		if err != nil || again != spec {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, spec, spec.String(), again, err)
		}
	})
}

func TestRedactURL(t *testing.T) {
	if got := compose.RedactURL("redis://u:pw@h:1/0"); got != "redis://u:xxxxx@h:1/0" {
		t.Errorf("RedactURL = %q", got)
	}
	_, err := compose.ParseRedisURL("redis://u:s3cret@h:notaport/0")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("ParseRedisURL error %v shows the password or is missing", err)
	}
}

func TestParseInfo(t *testing.T) {
	raw := "# Commandstats\r\ncmdstat_set:calls=10,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=3,usec=1\r\ncmdstat_evalsha:calls=7,usec=9\r\n# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n"
	s := compose.ParseInfo(raw)
	if s.TotalCalls() != 17 || s.Calls["info"] != 0 || s.CPUSeconds != 3.75 {
		t.Fatalf("ParseInfo = %+v", s)
	}
}

func TestMissingRedisServerSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := compose.StartServer(context.Background(), compose.ServerOptions{})
	if !errors.Is(err, compose.ErrNoRedisServer) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("err %v, want ErrNoRedisServer with the install hint", err)
	}
}
