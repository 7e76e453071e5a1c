package composetest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// ZkEnsemble starts a local ZooKeeper ensemble of n members for t and
// stops it at cleanup, then fails t if a member's process or directory is
// left. Without java or Debian's jars it skips t, saying what to install.
func ZkEnsemble(t testing.TB, n int) *compose.ZkEnsemble {
	t.Helper()
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := compose.StartZkEnsemble(ctx, compose.ZkOptions{Members: n})
	if err != nil {
		t.Fatalf("start zookeeper:%d: %v", n, err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop zookeeper:%d: %v", n, err)
		}
		if left := compose.ZkLeftovers(os.Getpid()); len(left) > 0 {
			t.Errorf("zookeeper:%d left behind:\n  %s", n, strings.Join(left, "\n  "))
		}
	})
	return e
}

// NatsCluster starts a local NATS JetStream deployment of n servers for t
// and stops it at cleanup, then fails t if a server's process or directory
// is left. Without a nats-server of 2.11 or later it skips t, saying how to
// build one (make nats).
func NatsCluster(t testing.TB, n int) *compose.NatsCluster {
	t.Helper()
	if _, _, err := compose.NatsServerBinary(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := compose.StartNatsCluster(ctx, compose.NatsOptions{Servers: n})
	if err != nil {
		t.Fatalf("start nats:%d: %v", n, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop nats:%d: %v", n, err)
		}
		if left := compose.NatsLeftovers(os.Getpid()); len(left) > 0 {
			t.Errorf("nats:%d left behind:\n  %s", n, strings.Join(left, "\n  "))
		}
	})
	return c
}
