package compose

import (
	"net"
	"sync"
	"testing"
)

// TestPeerAddrWhilePartitionsHeal reads a peer proxy's address while its
// partitions are cut and healed: toxiproxy writes Proxy.Listen in its server
// goroutine on every restart, so reading that field here is a race the race
// detector reports (CI's replicated-primary-isolated did). The address must
// also stay the one the peers were told.
func TestPeerAddrWhilePartitionsHeal(t *testing.T) {
	upstream, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer upstream.Close()
	go func() {
		for {
			c, err := upstream.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	peers, err := startReplicatedPeers(1)
	if err != nil {
		t.Fatal(err)
	}
	defer peers.close()
	if err := peers.point(0, upstream.Addr().String()); err != nil {
		t.Fatal(err)
	}
	want := peers.addr(0)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if got := peers.addr(0); got != want {
				t.Errorf("peer address changed while healing: %s, was %s", got, want)
				return
			}
		}
	}()
	for range 20 {
		undo, err := peers.proxies[0].partition()
		if err != nil {
			t.Fatal(err)
		}
		if err := undo(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}
