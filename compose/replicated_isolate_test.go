package compose_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// TestReplicatedIsolatePrimary: isolate primary on replicated cuts the
// primary off from its replica and the sentinels (their links run through
// a proxy in front of it) while its clients still reach it. The sentinels
// promote the replica; writes the isolated primary acknowledges meanwhile
// are lost at the heal, when the sentinels make it the new primary's
// replica and it resyncs from it: from first principles, keys written
// through it during the cut are on neither node afterwards, while a key
// written before the cut survives. Once the topology is closed, no peer
// proxy still listens.
func TestReplicatedIsolatePrimary(t *testing.T) {
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindReplicated, Masters: 1}, compose.UpOptions{PeerProxy: true})
	ctx := ctxFor(t, 3*time.Minute)
	old, err := topo.CurrentPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data := topo.DataNodes()
	oldIndex := slices.Index(data, old)
	peers := topo.PeerAddrs()
	if peers[oldIndex] == old.Addr {
		t.Fatalf("peer address of %s is the node itself (%s): no peer proxy", old.Name, old.Addr)
	}
	direct := topo.Clients(compose.ClientOptions{})
	oc := direct[oldIndex]
	if err := oc.Set(ctx, "before", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := oc.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 before the cut: %d replicas, %v", n, err)
	}

	undo, err := topo.Apply(ctx, mustFault(t, "at=0s isolate primary for=1m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = undo() })
	cut := time.Now()
	var promoted *compose.Node
	waitFor(t, 60*time.Second, "the sentinels to promote the replica", func() bool {
		p, err := topo.CurrentPrimary(ctx)
		if err == nil && p != old {
			promoted = p
		}
		return promoted != nil
	})
	t.Logf("%s promoted %v after %s was cut off", promoted.Name, time.Since(cut).Round(time.Millisecond), old.Name)
	// The isolated primary still answers its clients, still as a primary,
	// and acknowledges writes no one else will ever see.
	if role := roleOf(ctx, t, oc); role != "master" {
		t.Fatalf("isolated %s is %q during the cut, want still master", old.Name, role)
	}
	var lost []string
	for i := range 20 {
		k := fmt.Sprintf("during-%d", i)
		if err := oc.Set(ctx, k, "acknowledged", 0).Err(); err != nil {
			t.Fatalf("write %s through the isolated primary: %v", k, err)
		}
		lost = append(lost, k)
	}
	if n, err := oc.Exists(ctx, lost...).Result(); err != nil || n != int64(len(lost)) {
		t.Fatalf("the isolated primary holds %d of the %d keys it acknowledged: %v", n, len(lost), err)
	}

	if err := undo(); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	// 10 s here on an idle host (the sentinels see it a primary again at
	// their next INFO); CI, loaded, waited out 60 s once: the last reply
	// says where it stood.
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the old primary's last INFO replication: %q", last)
		}
	})
	waitFor(t, 100*time.Second, "the old primary to become the new one's replica and sync", func() bool {
		info, err := oc.Info(ctx, "replication").Result()
		last = fmt.Sprintf("%s %v", strings.Join(strings.Fields(info)[:min(len(strings.Fields(info)), 8)], " "), err)
		return err == nil && infoValue(info, "role") == "slave" && infoValue(info, "master_link_status") == "up"
	})
	t.Logf("%s is %s's replica %v after the heal", old.Name, promoted.Name, time.Since(healed).Round(time.Millisecond))
	nc := direct[slices.Index(data, promoted)]
	for _, c := range []*redis.Client{nc, oc} {
		if n, err := c.Exists(ctx, lost...).Result(); err != nil || n != 0 {
			t.Errorf("%s holds %d of the %d keys the isolated primary acknowledged, want 0 (lost at the promotion): %v",
				c.Options().Addr, n, len(lost), err)
		}
		if v, err := c.Get(ctx, "before").Result(); err != nil || v != "kept" {
			t.Errorf("%s: key written before the cut = %q, %v; want kept", c.Options().Addr, v, err)
		}
	}
	if p, err := topo.CurrentPrimary(ctx); err != nil || p != promoted {
		t.Errorf("primary after the heal: %v %v, want %s", p, err, promoted.Name)
	}
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	for _, a := range peers {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("peer proxy %s still listens after Close", a)
		}
	}
}

// roleOf is the replication role a server reports ("" when it does not
// answer).
func roleOf(ctx context.Context, t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return ""
	}
	return infoValue(info, "role")
}

// infoValue is a field of an INFO reply.
func infoValue(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
