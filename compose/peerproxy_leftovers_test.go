package compose_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// TestPeerProxiesGoneAfterFailedUp: a replicated topology or a cluster
// started with peer proxies (for isolate) that fails to get ready stops
// every proxy it had started, as well as its servers, and so does one whose
// context ends while it comes up (Ctrl-C): this process listens on no more
// TCP ports afterwards than before.
func TestPeerProxiesGoneAfterFailedUp(t *testing.T) {
	for _, spec := range []compose.Spec{
		{Kind: compose.KindReplicated, Masters: 1},
		{Kind: compose.KindCluster, Masters: 3, Replicas: 1},
		{Kind: compose.KindNats, Masters: 3},
	} {
		t.Run(string(spec.Kind), func(t *testing.T) {
			if spec.Kind == compose.KindNats {
				t.Skip("nats:N takes no UpOptions.ReadyTimeout; its cancelled case below covers the error path")
			}
			before := listening(t)
			_, err := compose.Up(context.Background(), spec, compose.UpOptions{PeerProxy: true, ReadyTimeout: time.Nanosecond})
			if err == nil || !strings.Contains(err.Error(), "not ready after") {
				t.Fatalf("Up with no time to get ready: %v", err)
			}
			waitFor(t, 5*time.Second, "the peer proxies to stop listening", func() bool { return listening(t) <= before })
		})
		// Ctrl-C: the run's context ends while Up waits.
		t.Run(string(spec.Kind)+" cancelled", func(t *testing.T) {
			if _, _, err := compose.NatsServerBinary(); spec.Kind == compose.KindNats && err != nil {
				t.Skip(err)
			}
			before := listening(t)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			topo, err := compose.Up(ctx, spec, compose.UpOptions{PeerProxy: true})
			if err == nil {
				_ = topo.Close()
				t.Skip("Up finished within 300ms: nothing was cancelled")
			}
			waitFor(t, 5*time.Second, "the peer proxies to stop listening", func() bool { return listening(t) <= before })
		})
	}
}

// listening counts the TCP sockets this process listens on.
func listening(t *testing.T) int {
	t.Helper()
	mine := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil {
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				mine[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" && mine[fields[9]] {
				n++
			}
		}
		_ = f.Close()
	}
	return n
}
