package sweep

import (
	"context"
	"runtime"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/results"
)

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
	case l.Limit == verdict.LimitUnmeasured:
		t.Fatalf("limit %+v: the CPU figures were measured", l)
	}
}
