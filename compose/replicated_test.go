package compose_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// syncBuffer is a bytes.Buffer safe for Up's progress writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReplicated brings up the replicated topology and walks it through the
// failover scenario: the replica lags, a write lands on the primary only, the
// primary is killed, the sentinels promote the replica, the write is lost, and
// the failover client carries on against the new primary.
func TestReplicated(t *testing.T) {
	var log syncBuffer
	topo := composetest.Topology(t, compose.Spec{Kind: compose.KindReplicated, Masters: 1}, compose.UpOptions{Log: &log, Proxy: true})
	t.Logf("Up progress:\n%s", log.String())
	if !strings.Contains(log.String(), "sentinels agree") {
		t.Errorf("no progress reported: %q", log.String())
	}

	// Shape: two data nodes first, then three sentinels.
	var roles []string
	for _, n := range topo.Nodes {
		roles = append(roles, n.Name+"/"+n.Role)
	}
	if got := strings.Join(roles, " "); got != "node-0/primary node-1/replica sentinel-0/sentinel sentinel-1/sentinel sentinel-2/sentinel" {
		t.Fatalf("nodes: %s", got)
	}
	data := topo.DataNodes()
	if len(data) != 2 || len(topo.Clients(compose.ClientOptions{})) != 2 || len(topo.Addrs()) != 2 || len(topo.SentinelAddrs()) != 3 {
		t.Fatalf("data nodes %d, addrs %v, sentinels %v", len(data), topo.Addrs(), topo.SentinelAddrs())
	}
	if topo.Primary() != data[0] || topo.Replica() != data[1] {
		t.Fatalf("primary %v, replica %v", topo.Primary(), topo.Replica())
	}
	for _, addr := range topo.SentinelAddrs() {
		s := redis.NewSentinelClient(&redis.Options{Addr: addr})
		got, err := s.GetMasterAddrByName(ctxFor(t, 2*time.Second), compose.MasterName).Result()
		_ = s.Close()
		if err != nil || strings.Join(got, ":") != data[0].Addr {
			t.Errorf("sentinel %s names %v, %v; want %s", addr, got, err, data[0].Addr)
		}
	}

	fc := topo.FailoverClient(compose.ClientOptions{PoolSize: 4})
	ctx := ctxFor(t, 40*time.Second)
	primary, replica := direct(t, data[0].Addr), direct(t, data[1].Addr)

	t.Run("failover client goes through the proxy", func(t *testing.T) {
		undo := apply(t, topo, "at=0s latency primary 100ms for=5s")
		if d := pingTime(t, fc); d < 100*time.Millisecond {
			t.Errorf("failover-client PING took %s with 100ms latency on the primary's proxy", d)
		}
		if err := undo(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("lag-replica holds the stream", func(t *testing.T) {
		undo := apply(t, topo, "at=0s lag-replica for=5s")
		if err := fc.Set(ctx, "lagged", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if err := replica.Get(ctx, "lagged").Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("replica has the write during the lag: %v", err)
		}
		if err := undo(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Second, "the replica to catch up", func() bool {
			v, err := replica.Get(ctx, "lagged").Result()
			return err == nil && v == "v"
		})
	})

	t.Run("kill primary fails over and loses the lagged write", func(t *testing.T) {
		pid := data[0].Server.PID()
		start := time.Now()
		// The lag ends shortly after the kill: the replica then drops the
		// stream it held (its primary is gone) and is healthy for the
		// sentinels, which would not promote it while the pause blocks their
		// hello messages.
		stop := topo.Schedule(ctx, start, []compose.FaultSpec{
			mustFault(t, "at=0s lag-replica for=1200ms"),
			mustFault(t, "at=600ms kill primary"),
		}, nil)
		defer stop()
		time.Sleep(100 * time.Millisecond)
		if err := primary.Set(ctx, "lost", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Second, "the primary to be killed", func() bool { return !composetest.Alive(pid) })

		// The failover client writes to the new primary within ~10 s.
		var lastErr error
		waitFor(t, 12*time.Second, "a failover-client write to succeed", func() bool {
			wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			lastErr = fc.Set(wctx, "after", "v", 0).Err()
			return lastErr == nil
		})
		t.Logf("failover client wrote again %s after the kill", (time.Since(start) - 600*time.Millisecond).Round(time.Millisecond))
		waitFor(t, 2*time.Second, "the sentinels to name node-1 primary", func() bool { return topo.Primary() == data[1] })
		if v, err := replica.Get(ctx, "after").Result(); err != nil || v != "v" {
			t.Fatalf("failover write not on node-1: %q, %v", v, err)
		}
		if err := replica.Get(ctx, "lost").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("the write made during the lag survived the failover: %v", err)
		}
		if topo.Replica() != data[0] {
			t.Errorf("replica is %v, want the old primary node-0", topo.Replica())
		}
	})
}

func TestReplicatedRefusesURLs(t *testing.T) {
	_, err := compose.Up(context.Background(), compose.Spec{Kind: compose.KindReplicated, Masters: 1}, compose.UpOptions{URLs: []string{"redis://127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), "replicated") {
		t.Fatalf("Up replicated with URLs: %v", err)
	}
}

// children lists the live child processes of this test binary.
func children(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) && fields[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

func TestReplicatedNotReadyStopsEverything(t *testing.T) {
	before := len(children(t))
	_, err := compose.Up(context.Background(), compose.Spec{Kind: compose.KindReplicated, Masters: 1},
		compose.UpOptions{ReadyTimeout: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "not ready after") || !strings.Contains(err.Error(), "see the replica") {
		t.Fatalf("Up with no time to get ready: %v", err)
	}
	t.Log(err)
	waitFor(t, 2*time.Second, "every process Up started to be gone", func() bool { return len(children(t)) == before })
}
