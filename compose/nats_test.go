package compose

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockbench/lockbench/lockimpl"
)

func TestNatsVersionAtLeast(t *testing.T) {
	cases := []struct {
		v    string
		want bool
	}{
		{"v2.15.3", true},
		{"v2.11.0", true},
		{"v2.11.0-RC.1", true},
		{"v3.0.0", true},
		{"v2.10.29", false},
		{"v2.9.10", false},
		{"v1.99.99", false},
		{"2.12.1", true},
		{"v2.11", false},
		{"vx.y.z", false},
		{"", false},
	}
	for _, c := range cases {
		if got := natsVersionAtLeast(c.v, natsMinVersion); got != c.want {
			t.Errorf("natsVersionAtLeast(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestNatsSizeRefused(t *testing.T) {
	for _, n := range []int{0, 2, 5} {
		if _, err := StartNatsCluster(context.Background(), NatsOptions{Servers: n}); !IsInputError(err) {
			t.Errorf("nats:%d: %v, want bad input", n, err)
		}
	}
}

func natsInstalled(t *testing.T) {
	t.Helper()
	if _, _, err := NatsServerBinary(); err != nil {
		t.Skip(err)
	}
}

// TestNatsClusterLifecycle starts a JetStream cluster of three, creates a
// replicated KV bucket, kills its stream's leader and sees another elected,
// restarts the killed server, pauses and resumes one, then stops them all
// and checks that no process and no directory is left.
func TestNatsClusterLifecycle(t *testing.T) {
	natsInstalled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := StartNatsCluster(ctx, NatsOptions{Servers: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	pids := c.Processes()
	if len(pids) != 3 {
		t.Fatalf("%d processes for 3 servers", len(pids))
	}
	nc, err := nats.Connect(c.URLs()[0], nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockimpl.CreateNatsBucket(ctx, js, jetstream.KeyValueConfig{Bucket: "lifecycle", Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	const stream = "KV_lifecycle"
	leader, err := c.WaitStreamLeader(ctx, stream, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	// Seconds, on a quiet machine; the bound is for a load of 20.
	next, err := c.WaitStreamLeader(ctx, stream, leader, 2*time.Minute)
	if err != nil {
		t.Fatalf("after the stream leader's kill: %v", err)
	}
	if err := leader.Restart(ctx); err != nil {
		t.Fatalf("restart %s: %v", leader.Name, err)
	}
	pids = append(pids, leader.PID())
	if err := next.Pause(); err != nil {
		t.Fatal(err)
	}
	// SIGSTOP takes effect once the kernel has stopped every thread: on a
	// busy machine a request sent at once could still be answered.
	waitStopped(t, next.PID())
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	err = next.healthy(short)
	cancelShort()
	if err == nil {
		t.Errorf("%s (pid %d, stopped) answered %s/healthz", next.Name, next.PID(), next.MonitorURL())
	}
	if err := next.Resume(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitStreamLeader(ctx, stream, nil, 2*time.Minute); err != nil {
		t.Fatalf("after resume: %v", err)
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d of the cluster still runs after Stop", p)
		}
	}
	for _, s := range c.Servers() {
		if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
			t.Errorf("%s's directory %s left after Stop (stat: %v)", s.Name, s.Dir(), err)
		}
	}
	if left := NatsLeftovers(os.Getpid()); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestNatsSingle starts one server: it leads its streams, and a kill and
// restart keep the bucket it stored.
func TestNatsSingle(t *testing.T) {
	natsInstalled(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := StartNatsCluster(ctx, NatsOptions{Servers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	s := c.Servers()[0]
	if l, err := c.StreamLeader(ctx, "KV_any"); err != nil || l != s {
		t.Fatalf("stream leader of one server: %v, %v", l, err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MetaLeader(ctx); err == nil {
		t.Fatal("a killed server still answers")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := NatsLeftovers(os.Getpid()); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if err := s.Restart(ctx); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("restart after Stop: %v, want an error (its directory is gone)", err)
	}
}

// waitStopped waits until process pid is in the stopped state (T in
// /proc/PID/stat), failing the test after ten seconds.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, readable := ProcessState(pid)
		if !readable {
			t.Fatalf("state of process %d: /proc cannot tell", pid)
		}
		if st == "T" {
			return
		}
	}
	t.Fatalf("process %d not stopped 10 s after SIGSTOP", pid)
}
