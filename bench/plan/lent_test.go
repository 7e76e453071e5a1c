package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// TestLentTopology: runs on a topology lent through Env run on it, leave it
// up for the next, and leave no key of theirs; a run for another kind of
// topology is refused.
func TestLentTopology(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindSingle, Masters: 1}, compose.UpOptions{})
	v := Values{"duration": {"500ms"}, "warmup": {"0"}, "concurrency": {"4"}, "quiet": {"true"}}
	plans, err := Expand(v)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 {
		r, err := Execute(ctx, plans[0], Env{Topology: topo})
		if err != nil {
			t.Fatalf("run %d on the lent topology: %v", i+1, err)
		}
		if r.Contention.Acquired == 0 || r.Topology.Nodes[0] != topo.Addrs()[0] {
			t.Fatalf("run %d: %d acquired on %v, want some on %s", i+1, r.Contention.Acquired, r.Topology.Nodes, topo.Addrs()[0])
		}
		c := topo.Client(0, compose.ClientOptions{})
		keys, err := c.Keys(ctx, KeyPrefix(r.ID)+"*").Result()
		if err != nil || len(keys) > 0 {
			t.Fatalf("run %d left %v (%v) on the lent topology", i+1, keys, err)
		}
	}
	v.Set("topology", "redlock:3")
	plans, err = Expand(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(ctx, plans[0], Env{Topology: topo}); err == nil || !strings.Contains(err.Error(), "lent to it is single") {
		t.Errorf("a redlock:3 run on a lent single: %v", err)
	}
}
