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

// TestContentionLimit: contention is read from what the run measured. A
// hot key among 1,000 keys that 80% of tries found held is contention
// though keys outnumber workers ten to one; split votes count as held; a
// run whose tries rarely found a key held, on keys held 10% of the time, is
// left to the CPU rule.
func TestContentionLimit(t *testing.T) {
	run := func(keys string, workers int, attempts, contended int64, errs map[string]int64, perS, holdUS float64) *results.Result {
		r := &results.Result{Config: map[string]any{"keys": keys, "concurrency": workers}, AcquireErrors: errs,
			Ops: map[string]results.OpSummary{results.OpHold: {LatencyUS: results.Percentiles{Mean: holdUS}}}}
		r.Contention.Attempts, r.Contention.Contended = attempts, contended
		r.Throughput.AcquiredPerS = perS
		return r
	}
	for _, tc := range []struct {
		name string
		r    *results.Result
		want bool
		why  string
	}{
		{"hot key among 1,000: most tries found it held", run("zipf:1000:1.2", 32, 10000, 8000, nil, 1500, 20000), true, "8,000 of 10,000 tries found the key held"},
		{"split votes on one key", run("uniform:1", 16, 5953, 1200, map[string]int64{"split_vote": 2514}, 800, 5000), true, "2,514 more lost a split vote"},
		{"keys held 90% of the time, some tries found them held", run("uniform:8", 8, 1000, 300, nil, 720, 10000), true, "kept 90% of 8 keys held"},
		{"rarely held, many keys", run("uniform:1000", 32, 100000, 500, nil, 10000, 10000), false, ""},
		{"never held", run("uniform:1", 1, 1000, 0, nil, 100, 1000), false, ""},
		{"no_quorum without contention is not contention", run("uniform:100", 16, 1000, 0, map[string]int64{"no_quorum": 900}, 10, 1000), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := contentionLimit(tc.r)
			if ok != tc.want || !strings.Contains(l.Why, tc.why) {
				t.Fatalf("contentionLimit = %+v, %v; want %v with %q", l, ok, tc.want, tc.why)
			}
		})
	}
}
