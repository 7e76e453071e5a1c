package compose_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// proxyFaultLatency is the latency fault's delay in these tests: every
// reply through the proxy comes at least this late, however idle or busy
// the machine is, and it leaves the locks' 1 s request timeout room.
const proxyFaultLatency = 200 * time.Millisecond

// TestZkProxyFaults routes the zk lock's session through the members'
// proxies on a real zookeeper:3: latency on the member the session uses
// delays its acquisitions by at least the latency, and a partition of that
// member moves the session to another member's proxy, where it keeps its
// lease (the session outlives the move) and acquires again.
func TestZkProxyFaults(t *testing.T) {
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topo := upProxied(t, ctx, "zookeeper:3")
	lock, err := lockimpl.NewZk(ctx, lockimpl.ZkOptions{Servers: topo.ClientAddrs(), SessionTimeout: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	used := proxiedNode(t, topo, lock.ConnectedServers()[0])
	const ttl = 8 * time.Second

	checkLatencyAdds(t, ctx, topo, used, lock, ttl)

	held, out, err := lock.Acquire(ctx, "lockbench:test:proxy-held", ttl)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire before the partition: %v, %v", out, err)
	}
	heal := applyFault(t, ctx, topo, fmt.Sprintf("at=0s partition node=%d for=1m", used))
	if c, err := net.Dial("tcp", topo.ClientAddrs()[used]); err == nil {
		c.Close()
		t.Fatalf("the cut member's proxy %s still accepts connections", topo.ClientAddrs()[used])
	}
	// The client notices the closed connection and tries the next member
	// in its list; retried until it has, bounded by the test's context.
	var moved string
	for ctx.Err() == nil {
		if _, out, _ := lock.Acquire(ctx, "lockbench:test:proxy-after", ttl); out == lockimpl.OK {
			moved = lock.ConnectedServers()[0]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if i := slices.Index(topo.ClientAddrs(), moved); i < 0 || i == used {
		t.Fatalf("after the partition of member %d the session is on %q; want another member's proxy of %v", used, moved, topo.ClientAddrs())
	}
	// The session moved, it did not expire: the lease taken before the
	// partition is still the holder's.
	if out, err := lock.Release(ctx, held); out != lockimpl.OK || err != nil {
		t.Fatalf("release of the lease taken before the partition: %v, %v; want ok (same session)", out, err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
}

// TestNatsProxyFaults routes the nats-kv lock's connection through the
// servers' proxies on a real nats:3: the client keeps to the proxies (it
// ignores the servers the cluster tells it of), latency on the server it
// uses delays its acquisitions by at least the latency, and a partition of
// that server makes it reconnect through another server's proxy.
func TestNatsProxyFaults(t *testing.T) {
	if _, _, err := compose.NatsServerBinary(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topo := upProxied(t, ctx, "nats:3")
	js, closeConn, err := lockimpl.NatsJetStream(topo.NatsURLs())
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn()
	lock, err := lockimpl.NewNatsKV(ctx, js, lockimpl.NatsKVOptions{Replicas: 3, Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	nc := js.Conn()
	for _, s := range append(nc.Servers(), nc.DiscoveredServers()...) {
		u, err := url.Parse(s)
		if err != nil || !slices.Contains(topo.ClientAddrs(), u.Host) {
			t.Fatalf("the client knows server %s, not a proxy of %v: it would bypass the proxies", s, topo.ClientAddrs())
		}
	}
	used := proxiedNode(t, topo, nc.ConnectedAddr())
	const ttl = 5 * time.Second

	checkLatencyAdds(t, ctx, topo, used, lock, ttl)

	before := nc.Stats().Reconnects
	heal := applyFault(t, ctx, topo, fmt.Sprintf("at=0s partition node=%d for=1m", used))
	// Retried until the client has reconnected through another proxy and
	// the bucket's stream answers again, bounded by the test's context.
	for ctx.Err() == nil {
		if _, out, _ := lock.Acquire(ctx, "lockbench:test:proxy-after", ttl); out == lockimpl.OK {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	now := nc.ConnectedAddr()
	if i := slices.Index(topo.ClientAddrs(), now); i < 0 || i == used || nc.Stats().Reconnects == before {
		t.Fatalf("after the partition of server %d: connected to %q after %d reconnects; want another server's proxy of %v after one",
			used, now, nc.Stats().Reconnects-before, topo.ClientAddrs())
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
}

// upProxied brings spec up locally with a proxy in front of every server,
// and at the end stops it and checks nothing is left behind.
func upProxied(t *testing.T, ctx context.Context, topology string) *compose.Topology {
	t.Helper()
	spec, err := compose.ParseSpec(topology)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := compose.Up(ctx, spec, compose.UpOptions{Proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := topo.Close(); err != nil {
			t.Error(err)
		}
		if left := append(compose.ZkLeftovers(os.Getpid()), compose.NatsLeftovers(os.Getpid())...); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	for i, a := range topo.ClientAddrs() {
		if a == topo.Addrs()[i] {
			t.Fatalf("node %d is dialled at its own address %s: no proxy", i, a)
		}
	}
	return topo
}

// proxiedNode is the index of the node whose proxy the client is connected
// to at addr; not being on a proxy fails the test.
func proxiedNode(t *testing.T, topo *compose.Topology, addr string) int {
	t.Helper()
	i := slices.Index(topo.ClientAddrs(), addr)
	if i < 0 {
		t.Fatalf("the lock's client is connected to %q, none of the proxies %v", addr, topo.ClientAddrs())
	}
	return i
}

// applyFault applies the fault spec now and returns its undo.
func applyFault(t *testing.T, ctx context.Context, topo *compose.Topology, spec string) func() error {
	t.Helper()
	f, err := compose.ParseFault(spec)
	if err != nil {
		t.Fatal(err)
	}
	undo, err := topo.Apply(ctx, f)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return undo
}

// checkLatencyAdds puts proxyFaultLatency on node used, which the lock's
// client talks to, and checks an acquisition then takes at least that long:
// it needs at least one reply from the node, and each reply is held back
// by the proxy. A lower bound, so a busy machine cannot break it.
func checkLatencyAdds(t *testing.T, ctx context.Context, topo *compose.Topology, used int, lock lockimpl.Locker, ttl time.Duration) {
	t.Helper()
	undo := applyFault(t, ctx, topo, fmt.Sprintf("at=0s latency node=%d %v for=1m", used, proxyFaultLatency))
	start := time.Now()
	lease, out, err := lock.Acquire(ctx, "lockbench:test:proxy-latency", ttl)
	took := time.Since(start)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire under %v latency: %v, %v", proxyFaultLatency, out, err)
	}
	if took < proxyFaultLatency {
		t.Fatalf("acquire under %v latency took %v: the reply did not come through the proxy", proxyFaultLatency, took)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if out, err := lock.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
}
