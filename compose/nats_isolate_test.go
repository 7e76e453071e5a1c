package compose

import (
	"context"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestNatsIsolateMetaLeader: isolate on nats:3 cuts the meta group's
// leader off from the other two servers (every route to and from it runs
// through a proxy of its own) while its clients still reach it. The two
// elect one of themselves; the cut server stops naming itself leader; once
// healed it names the new leader too. When the topology is closed no route
// proxy still listens and no server is left behind.
func TestNatsIsolateMetaLeader(t *testing.T) {
	natsInstalled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topo, err := Up(ctx, Spec{Kind: KindNats, Masters: 3}, UpOptions{PeerProxy: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = topo.Close() })
	c := topo.natsState()
	old, err := c.WaitMetaLeader(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	idx := slices.Index(c.Servers(), old)
	f, err := ParseFault("at=0s isolate node=" + strconv.Itoa(idx) + " for=1m")
	if err != nil {
		t.Fatal(err)
	}
	undo, err := topo.Apply(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = undo() })
	cut := time.Now()
	// seen is the meta leader server s names, "" when none or no answer.
	seen := func(s *NatsServer) string {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		j, err := s.jsz(qctx)
		if err != nil || j.Meta == nil {
			return ""
		}
		return j.Meta.Leader
	}
	agree := func(servers []*NatsServer, not string) string {
		var names []string
		for _, s := range servers {
			names = append(names, seen(s))
		}
		if names[0] == "" || names[0] == not || slices.ContainsFunc(names, func(n string) bool { return n != names[0] }) {
			return ""
		}
		return names[0]
	}
	others := slices.DeleteFunc(c.Servers(), func(s *NatsServer) bool { return s == old })
	var leader string
	for leader == "" && ctx.Err() == nil {
		leader = agree(others, old.Name)
		time.Sleep(100 * time.Millisecond)
	}
	if leader == "" {
		t.Fatalf("no new meta leader after cutting %s off", old.Name)
	}
	t.Logf("%s leads %v after %s was cut off", leader, time.Since(cut).Round(time.Millisecond), old.Name)
	for seen(old) == old.Name && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s stopped naming itself leader %v after the cut", old.Name, time.Since(cut).Round(time.Millisecond))
	// Its clients still reach it.
	nc, err := nats.Connect(old.URL(), nats.Timeout(2*time.Second), nats.NoReconnect())
	if err != nil {
		t.Fatalf("client of the isolated %s: %v", old.Name, err)
	}
	nc.Close()

	if err := undo(); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	for agree(c.Servers(), "") != leader && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	if got := agree(c.Servers(), ""); got != leader {
		t.Fatalf("after the heal the servers name %q, want all %s", got, leader)
	}
	t.Logf("all three name %s %v after the heal", leader, time.Since(healed).Round(time.Millisecond))

	var proxies []string
	for _, l := range c.links.links {
		proxies = append(proxies, l.proxy.p.Listen)
	}
	if len(proxies) != 6 {
		t.Errorf("%d route proxies, want 6 (each direction of each pair of 3)", len(proxies))
	}
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	for _, a := range proxies {
		if conn, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = conn.Close()
			t.Errorf("route proxy %s still listens after Close", a)
		}
	}
	if left := NatsLeftovers(os.Getpid()); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
