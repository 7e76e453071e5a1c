package compose_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/longtest"
)

// TestZkIsolateMinority: isolate minority on zookeeper:5 cuts the leader
// and one more member off from the other three, whose majority elects a
// leader of its own; the cut side serves no more. Healed, the ensemble has
// one leader, from the majority's side.
func TestZkIsolateMinority(t *testing.T) {
	longtest.Skip(t)
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	ctx := ctxFor(t, 5*time.Minute)
	topo, e, old := upZkLed(t, ctx, 5, 2*time.Minute)
	members := e.Members()
	lead := slices.Index(members, old)
	minority := []*compose.ZkMember{old, members[(lead+1)%5]}
	undo, err := topo.Apply(ctx, mustFault(t, "at=0s isolate minority for=3m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = undo() })
	var leader *compose.ZkMember
	for ctx.Err() == nil && leader == nil {
		for _, m := range members {
			if mode, err := m.Mode(ctx); err == nil && mode == "leader" && !slices.Contains(minority, m) {
				leader = m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if leader == nil {
		t.Fatalf("the majority elected no leader after the minority (members %d, %d) was cut off", minority[0].ID, minority[1].ID)
	}
	for _, m := range minority {
		for ctx.Err() == nil {
			if mode, err := m.Mode(ctx); err != nil || mode != "leader" && mode != "follower" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if mode, err := m.Mode(ctx); err == nil && (mode == "leader" || mode == "follower") {
			t.Errorf("member %d of the cut minority still serves as %s", m.ID, mode)
		}
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		if mode, err := old.Mode(ctx); err == nil && mode == "follower" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if now, err := e.Leader(ctx); err != nil || slices.Contains(minority, now) {
		t.Fatalf("leader after the heal: %v %v, want one of the majority's", now, err)
	}
}

// TestZkIsolateRing: isolate ring on zookeeper:5 leaves each member two
// neighbours, a majority of its own that no other member shares; what the
// ensemble does meanwhile is logged (whether a leader keeps a quorum of
// followers that each see it). Healed, all five serve again under one
// leader.
func TestZkIsolateRing(t *testing.T) {
	longtest.Skip(t)
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	ctx := ctxFor(t, 5*time.Minute)
	topo, e, _ := upZkLed(t, ctx, 5, 2*time.Minute)
	undo, err := topo.Apply(ctx, mustFault(t, "at=0s isolate ring for=3m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = undo() })
	time.Sleep(15 * time.Second)
	var modes []string
	for _, m := range e.Members() {
		mode, err := m.Mode(ctx)
		if err != nil {
			mode = "no answer"
		}
		modes = append(modes, mode)
	}
	t.Logf("15 s into the ring: %v", modes)
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		leaders, serving := 0, 0
		for _, m := range e.Members() {
			if mode, err := m.Mode(ctx); err == nil && (mode == "leader" || mode == "follower") {
				serving++
				if mode == "leader" {
					leaders++
				}
			}
		}
		if leaders == 1 && serving == 5 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("after the heal the five members did not all serve under one leader")
}
