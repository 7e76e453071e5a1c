package compose_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/longtest"
)

// TestZkIsolateLeader: isolate leader on zookeeper:3 cuts the leader off
// from its followers while its clients still reach it. The followers elect
// a new leader; the old one stops serving (it lost its quorum) but its
// client port still answers; once healed it rejoins as a follower and
// names no other leader than the new one.
func TestZkIsolateLeader(t *testing.T) {
	longtest.Skip(t)
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	ctx := ctxFor(t, 4*time.Minute)
	topo, e, old := upZkLed(t, ctx, 3, time.Minute)
	undo, err := topo.Apply(ctx, mustFault(t, "at=0s isolate leader for=2m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = undo() })
	cut := time.Now()
	var leader *compose.ZkMember
	for ctx.Err() == nil {
		for _, m := range e.Members() {
			if mode, err := m.Mode(ctx); err == nil && mode == "leader" && m != old {
				leader = m
			}
		}
		if leader != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if leader == nil {
		t.Fatalf("no new leader after isolating %d", old.ID)
	}
	t.Logf("member %d leads %v after member %d was cut off", leader.ID, time.Since(cut), old.ID)
	// The old leader lost its quorum: it no longer serves (srvr says so)
	// though its client port answers.
	for ctx.Err() == nil {
		if mode, err := old.Mode(ctx); err != nil || mode != "leader" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if mode, err := old.Mode(ctx); err == nil && mode == "leader" {
		t.Fatalf("isolated member %d still leads", old.ID)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	// Healed: the old leader rejoins, following the new one.
	for ctx.Err() == nil {
		if mode, err := old.Mode(ctx); err == nil && mode == "follower" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if mode, err := old.Mode(ctx); err != nil || mode != "follower" {
		t.Fatalf("member %d after the heal: %q %v, want a follower", old.ID, mode, err)
	}
	if now, err := e.Leader(ctx); err != nil || now != leader {
		t.Fatalf("leader after the heal: %v %v, want member %d", now, err, leader.ID)
	}
}

// upZkLed starts a zookeeper:members ensemble with proxies on its peer
// links, stopped when t ends, and waits for its leader: where every
// isolate test starts.
func upZkLed(t *testing.T, ctx context.Context, members int, wait time.Duration) (*compose.Topology, *compose.ZkEnsemble, *compose.ZkMember) {
	t.Helper()
	topo, err := compose.Up(ctx, compose.Spec{Kind: compose.KindZookeeper, Masters: members}, compose.UpOptions{PeerProxy: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = topo.Close() })
	e := topo.ZkEnsemble()
	leader, err := e.WaitLeader(ctx, wait)
	if err != nil {
		t.Fatal(err)
	}
	return topo, e, leader
}
