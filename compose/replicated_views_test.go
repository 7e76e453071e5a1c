package compose

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSentinelViews: the views a refused restore names are the sentinels'
// own. On a fresh replicated topology each of the three lists the replica
// as a slave under the primary, and none lists an address that is no data
// node's.
func TestSentinelViews(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := Up(ctx, Spec{Kind: KindReplicated, Masters: 1}, UpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	p, err := topo.CurrentPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := topo.CurrentReplica(ctx)
	if err != nil {
		t.Fatal(err)
	}
	views := topo.sentinelViews(ctx, topo.peerAddr(r))
	under := " under master " + topo.peerAddr(p)
	if n := strings.Count(views, "flags slave"+under); n != sentinelCount || strings.Contains(views, "not listed") {
		t.Errorf("views of the replica %s: %q: want each of %d sentinels to list it, a slave under %s", r.Addr, views, sentinelCount, p.Addr)
	}
	if views := topo.sentinelViews(ctx, "127.0.0.1:1"); strings.Count(views, "not listed"+under) != sentinelCount {
		t.Errorf("views of 127.0.0.1:1: %q: want not listed by each of %d sentinels", views, sentinelCount)
	}
}
