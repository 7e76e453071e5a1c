package verdict

import (
	"strings"
	"testing"

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
		{"generator held to one CPU by --cpus", CPUUse{ClientShare: share(0.95), ClientCPUs: 1, HeldBack: true, ServerShares: []float64{0.7}, SharedHost: true, HostCPUs: 2}, LimitGenerator, "generator 95% of 1 CPU (held back to 1 CPU by --cpus)"},
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
			got := JudgeCPU(tc.use)
			if got.Limit != tc.want || !strings.Contains(got.Why, tc.why) {
				t.Fatalf("JudgeCPU(%+v) = %+v, want %s with %q", tc.use, got, tc.want, tc.why)
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
