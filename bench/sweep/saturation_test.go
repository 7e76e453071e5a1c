package sweep

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/results"
)

func share(v float64) *float64 { return &v }

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name string
		use  CPUUse
		want string
		why  string
	}{
		{"server busy", CPUUse{ClientShare: share(0.4), ClientCPUs: 2, ServerShares: []float64{0.97}}, LimitServer, "busiest server 97% of one CPU, generator 40% of 2 CPUs"},
		{"busiest of several servers", CPUUse{ClientShare: share(0.3), ClientCPUs: 4, ServerShares: []float64{0.2, 0.9, 0.4}}, LimitServer, "busiest server 90%"},
		{"server beats generator when both ran out", CPUUse{ClientShare: share(0.95), ClientCPUs: 2, ServerShares: []float64{0.9}}, LimitServer, ""},
		{"generator busy", CPUUse{ClientShare: share(0.92), ClientCPUs: 8, ServerShares: []float64{0.5}}, LimitGenerator, "generator 92% of 8 CPUs"},
		{"generator busy, servers unmeasured", CPUUse{ClientShare: share(0.9), ClientCPUs: 2}, LimitGenerator, "busiest server n/a"},
		{"shared host full", CPUUse{ClientShare: share(0.6), ClientCPUs: 2, ServerShares: []float64{0.6}, SharedHost: true, HostCPUs: 2}, LimitHost, "together 1.80 of the host's 2 CPUs"},
		{"shared host with room", CPUUse{ClientShare: share(0.3), ClientCPUs: 2, ServerShares: []float64{0.5}, SharedHost: true, HostCPUs: 2}, LimitNone, ""},
		{"separate hosts, neither busy", CPUUse{ClientShare: share(0.6), ClientCPUs: 2, ServerShares: []float64{0.6}, HostCPUs: 2}, LimitNone, ""},
		{"exactly at the threshold is not past it", CPUUse{ClientShare: share(results.SaturatedShare), ClientCPUs: 2, ServerShares: []float64{results.SaturatedShare}}, LimitNone, ""},
		{"host busy with other processes", CPUUse{ClientShare: share(0.3), ClientCPUs: 2, ServerShares: []float64{0.4}, HostShare: share(0.97)}, LimitHost, "host 97% busy"},
		{"host busy, server still first", CPUUse{ClientShare: share(0.3), ClientCPUs: 2, ServerShares: []float64{0.95}, HostShare: share(0.97)}, LimitServer, "host 97% busy"},
		{"host with room", CPUUse{ClientShare: share(0.3), ClientCPUs: 2, ServerShares: []float64{0.4}, HostShare: share(0.5), SharedHost: true, HostCPUs: 2}, LimitNone, "host 50% busy"},
		{"client unmeasured", CPUUse{ServerShares: []float64{0.5}}, LimitUnmeasured, "generator n/a"},
		{"nothing measured", CPUUse{}, LimitUnmeasured, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Judge(tc.use)
			if got.Limit != tc.want || !strings.Contains(got.Why, tc.why) {
				t.Fatalf("Judge(%+v) = %+v, want %s with %q", tc.use, got, tc.want, tc.why)
			}
			if text := got.Text(); !strings.HasPrefix(text, "limit: ") || strings.Contains(text, "\n") {
				t.Fatalf("text %q: want one line starting limit:", text)
			}
		})
	}
}

func TestSharesHost(t *testing.T) {
	for _, tc := range []struct {
		topo results.Topology
		want bool
	}{
		{results.Topology{Provider: "local", Nodes: []string{"127.0.0.1:7000"}}, true},
		{results.Topology{Provider: "docker", Nodes: []string{"172.17.0.2:6379"}}, true},
		{results.Topology{Provider: "external", Nodes: []string{"127.0.0.1:6379", "[::1]:6380", "localhost:6381"}}, true},
		{results.Topology{Provider: "external", Nodes: []string{"127.0.0.1:6379", "10.0.0.5:6379"}}, false},
		{results.Topology{Provider: "external"}, false},
		{results.Topology{Provider: "external", Nodes: []string{"not an address"}}, false},
	} {
		if got := sharesHost(tc.topo); got != tc.want {
			t.Errorf("sharesHost(%+v) = %v, want %v", tc.topo, got, tc.want)
		}
	}
}

// TestCapacityPipelinedJudgesItsLimit ramps --pipeline auto over a tiny
// ramp against a real redis-server and checks that every step read the
// generator's and the server's CPU and that the search says what bounded
// it. Which limit it names depends on the machine, so any measured one
// passes.
func TestCapacityPipelinedJudgesItsLimit(t *testing.T) {
	server := composetest.Servers(t, 1)[0]
	given := plan.Values{"redis": {"redis://" + server.Addr()}, "pipeline": {"auto"}, "duration": {"300ms"}, "warmup": {"0"},
		"quiet": {"true"}, "out": {t.TempDir()}}
	ramp, load, err := CapacityRamp(given, DefaultRamp(), false, false)
	if err != nil || load != LoadConcurrency || ramp.Start != PipelinedStart || ramp.Max != PipelinedMax {
		t.Fatalf("ramp %+v load %s err %v: want concurrency from %d to %d", ramp, load, err, PipelinedStart, PipelinedMax)
	}
	ramp.Start, ramp.Max = 4, 8
	run := func(ctx context.Context, v plan.Values, _ string, _ int) (*results.Result, error) {
		plans, err := plan.Expand(v)
		if err != nil {
			return nil, err
		}
		return plan.Execute(ctx, plans[0], plan.Env{})
	}
	caps, _, err := CapacitySearch{Given: given, Ramp: ramp, LoadFlag: load, Run: run}.Search(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 1 || len(caps[0].Steps) != 2 {
		t.Fatalf("capacities %+v: want one search of two steps", caps)
	}
	for _, s := range caps[0].Steps {
		if s.CPU.ClientShare == nil || len(s.CPU.ServerShares) != 1 || !s.CPU.SharedHost || s.CPU.ClientCPUs == 0 {
			t.Errorf("step %v: CPU %+v, want the generator's and the server's shares, on a shared host", s.Load, s.CPU)
		}
		if runtime.GOOS == "linux" && s.CPU.HostShare == nil {
			t.Errorf("step %v: no host CPU share on linux", s.Load)
		}
	}
	switch l := caps[0].Limit; {
	case l == nil:
		t.Fatal("no limit judged")
	case l.Limit == LimitUnmeasured:
		t.Fatalf("limit %+v: the CPU figures were measured", l)
	}
}
