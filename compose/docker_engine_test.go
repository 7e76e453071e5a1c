package compose

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lockbench/lockbench/compose/longtest"
)

// The tests in this file need a Docker engine; each skips, saying so, where
// none answers. They run on lockbench's own image, built once per test
// binary from this machine's redis-server, so no registry is needed.

var testImage struct {
	once sync.Once
	tag  string
	err  error
}

// dockerTestImage returns the local image, building it on first use, or
// skips the test when no engine answers or redis-server is missing.
func dockerTestImage(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs a Docker engine and an image build")
	}
	// Containers, networks and an image build: minutes on a 2-core machine.
	longtest.Skip(t)
	if err := checkDockerEngine(context.Background()); err != nil {
		t.Skipf("needs a Docker engine: %v", err)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server on PATH to build the local image")
	}
	testImage.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		info, err := BuildLocalImage(ctx, ImageOptions{})
		testImage.tag, testImage.err = info.Tag, err
	})
	if testImage.err != nil {
		t.Fatalf("build %s: %v", LocalImage, testImage.err)
	}
	return testImage.tag
}

// labelled counts the containers (running or not) and networks that carry
// the label filter (KEY=VALUE).
func labelled(t *testing.T, label string) (containers, networks int) {
	t.Helper()
	c, n, err := CountLabelled(context.Background(), label)
	if err != nil {
		t.Fatal(err)
	}
	return c, n
}

func ours() string { return LabelPID + "=" + strconv.Itoa(os.Getpid()) }

func TestParseLdd(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []string
		bad       string
	}{
		{name: "debian", out: "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n",
			want: []string{"/lib/x86_64-linux-gnu/libm.so.6", "/lib64/ld-linux-x86-64.so.2"}},
		{name: "missing", out: "\tlibfoo.so.1 => not found\n", bad: "libfoo.so.1 not found"},
		{name: "static", out: "\tstatically linked\n", bad: "no libraries"},
		{name: "empty", out: "", bad: "no libraries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLdd(tc.out)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("parseLdd = %v, %v; want an error with %q", got, err, tc.bad)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("parseLdd = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestLocalEngine(t *testing.T) {
	for host, want := range map[string]bool{
		"unix:///var/run/docker.sock": true, "": true, "tcp://127.0.0.1:2375": true, "tcp://localhost:2375": true,
		"tcp://10.0.0.5:2376": false, "ssh://user@build": false,
	} {
		if got := localEngine(host); got != want {
			t.Errorf("localEngine(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestDockerTopologies brings each topology up as containers of the local
// image, checks it serves, and that Close leaves no container or network.
func TestDockerTopologies(t *testing.T) {
	image := dockerTestImage(t)
	for _, spec := range []Spec{{Kind: KindSingle, Masters: 1}, {Kind: KindRedlock, Masters: 3}, {Kind: KindReplicated, Masters: 1}} {
		t.Run(spec.String(), func(t *testing.T) {
			c0, n0 := labelled(t, ours())
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topo, err := Up(ctx, spec, UpOptions{Provider: ProviderDocker, Image: image})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					_ = topo.Close()
				}
			}()
			wantNodes := spec.Masters
			if spec.Kind == KindReplicated {
				wantNodes = 2 + sentinelCount
			}
			if topo.Provider != ProviderDocker || len(topo.Nodes) != wantNodes {
				t.Fatalf("provider %q with %d nodes, want docker with %d", topo.Provider, len(topo.Nodes), wantNodes)
			}
			if c, n := labelled(t, LabelRun+"="+topo.DockerRun()); c != wantNodes || n != 1 {
				t.Fatalf("%d containers and %d networks labelled with the run, want %d and 1", c, n, wantNodes)
			}
			for i, n := range topo.DataNodes() {
				if n.Server != nil || n.ctr == nil {
					t.Errorf("node %s: want a container and no local Server", n.Name)
				}
				if err := topo.Client(i, ClientOptions{}).Ping(ctx).Err(); err != nil {
					t.Fatalf("PING %s (%s): %v", n.Name, n.Addr, err)
				}
			}
			if spec.Kind == KindReplicated {
				p, err := topo.CurrentPrimary(ctx)
				if err != nil || p.Name != "node-0" {
					t.Fatalf("CurrentPrimary = %v, %v; want node-0", p, err)
				}
				fc := topo.FailoverClient(ClientOptions{})
				if err := fc.Set(ctx, "via-sentinels", "1", 0).Err(); err != nil {
					t.Fatalf("SET through the sentinels' primary: %v", err)
				}
			}
			if err := topo.Close(); err != nil {
				t.Fatal(err)
			}
			closed = true
			if c, n := labelled(t, ours()); c != c0 || n != n0 {
				t.Fatalf("after Close %d containers and %d networks of this process, before Up %d and %d", c, n, c0, n0)
			}
		})
	}
}

// TestDockerFaults applies each container fault to a master and checks what
// the client sees, and that the undo brings it back.
func TestDockerFaults(t *testing.T) {
	image := dockerTestImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topo, err := Up(ctx, Spec{Kind: KindRedlock, Masters: 2}, UpOptions{Provider: ProviderDocker, Image: image})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	ping := func(i int) error {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		return topo.Client(i, ClientOptions{}).Ping(pctx).Err()
	}
	apply := func(spec string) func() error {
		t.Helper()
		f, err := ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := topo.CheckFault(f); err != nil {
			t.Fatalf("CheckFault(%s): %v", spec, err)
		}
		undo, err := topo.Apply(ctx, f)
		if err != nil {
			t.Fatalf("Apply(%s): %v", spec, err)
		}
		return undo
	}
	for _, tc := range []struct {
		spec string
		// downErr is what a PING during the fault fails with.
		downErr func(error) bool
	}{
		{"at=0s pause node=1 for=1s", func(err error) bool { return errors.Is(err, context.DeadlineExceeded) || isTimeout(err) }},
		{"at=0s partition node=1 for=1s", func(err error) bool { return err != nil }},
		{"at=0s restart node=1", func(err error) bool { return err != nil }},
	} {
		t.Run(strings.Fields(tc.spec)[1], func(t *testing.T) {
			if err := topo.Client(1, ClientOptions{}).Set(ctx, "before", "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			undo := apply(tc.spec)
			if err := ping(1); !tc.downErr(err) {
				t.Fatalf("PING during %s: %v", tc.spec, err)
			}
			if err := ping(0); err != nil {
				t.Fatalf("the other master during %s: %v", tc.spec, err)
			}
			if undo == nil {
				t.Fatal("no undo")
			}
			if err := undo(); err != nil {
				t.Fatal(err)
			}
			if err := waitPing(ctx, topo.DataNodes()[1].Addr, 10*time.Second); err != nil {
				t.Fatalf("after undoing %s: %v", tc.spec, err)
			}
			n, err := topo.Client(1, ClientOptions{}).Exists(ctx, "before").Result()
			if err != nil {
				t.Fatal(err)
			}
			// Only the restart (no persistence) forgets.
			if want := int64(1); strings.Contains(tc.spec, "restart") {
				want = 0
				if n != want {
					t.Errorf("after a restart without persistence the key exists=%d, want %d", n, want)
				}
			} else if n != want {
				t.Errorf("after %s the key exists=%d, want %d", tc.spec, n, want)
			}
		})
	}
	t.Run("kill", func(t *testing.T) {
		if undo := apply("at=0s kill node=1"); undo != nil {
			t.Error("kill has an undo")
		}
		if err := ping(1); err == nil {
			t.Fatal("PING answered after kill")
		}
		if down := topo.Down(); len(down) != 1 || down[0] != topo.DataNodes()[1].Addr {
			t.Fatalf("Down() = %v, want the killed node", down)
		}
	})
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

// TestDockerReplicatedPartition cuts the primary off its network: the
// sentinels cannot reach it any more and promote the replica, and the
// failover client follows; afterwards the old primary rejoins as a replica.
func TestDockerReplicatedPartition(t *testing.T) {
	image := dockerTestImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topo, err := Up(ctx, Spec{Kind: KindReplicated, Masters: 1}, UpOptions{Provider: ProviderDocker, Image: image})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	f, _ := ParseFault("at=0s partition primary for=10s")
	undo, err := topo.Apply(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := topo.CurrentPrimary(ctx)
		if err == nil && p.Name == "node-1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failover to node-1 within 20 s of partitioning the primary: %v, %v", p, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	fc := topo.FailoverClient(ClientOptions{})
	if err := fc.Set(ctx, "after-failover", "1", 0).Err(); err != nil {
		t.Fatalf("SET through the sentinels after the failover: %v", err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	// The sentinels turn the old primary into a replica of the new one.
	old := redis.NewClient(adminOptions(topo.DataNodes()[0].Addr))
	defer old.Close()
	deadline = time.Now().Add(30 * time.Second)
	for {
		info, err := old.Info(ctx, "replication").Result()
		if err == nil && infoField(info, "role") == "slave" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("old primary not a replica 30 s after the partition healed: %v %q", err, infoField(info, "role"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDockerCleanupOnCancel cancels Up half way: whatever it had created
// must be gone when it returns.
func TestDockerCleanupOnCancel(t *testing.T) {
	image := dockerTestImage(t)
	c0, n0 := labelled(t, ours())
	for _, after := range []time.Duration{300 * time.Millisecond, 1500 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		topo, err := Up(ctx, Spec{Kind: KindReplicated, Masters: 1}, UpOptions{Provider: ProviderDocker, Image: image})
		cancel()
		if err == nil {
			_ = topo.Close()
			t.Logf("Up finished within %s; nothing was cancelled", after)
		}
		if c, n := labelled(t, ours()); c != c0 || n != n0 {
			t.Fatalf("Up cancelled after %s left %d containers and %d networks (before: %d, %d); error %v", after, c-c0, n-n0, c0, n0, err)
		}
	}
}

// TestDockerReapsOrphans leaves a network labelled as a lockbench process
// that no longer runs: the next Up removes it.
func TestDockerReapsOrphans(t *testing.T) {
	image := dockerTestImage(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	host, _ := os.Hostname()
	ctx := context.Background()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	run := randomID()
	labels := map[string]string{LabelRun: run, LabelPID: strconv.Itoa(dead.Process.Pid), LabelHost: host}
	if _, err := cli.NetworkCreate(ctx, "lockbench-"+run, client.NetworkCreateOptions{Driver: "bridge", Labels: labels}); err != nil {
		t.Fatal(err)
	}
	defer removeLabelled(ctx, cli, LabelRun+"="+run)
	topo, err := Up(ctx, Spec{Kind: KindSingle, Masters: 1}, UpOptions{Provider: ProviderDocker, Image: image})
	if err != nil {
		t.Fatal(err)
	}
	_ = topo.Close()
	if c, n := labelled(t, LabelRun+"="+run); c != 0 || n != 0 {
		t.Fatalf("the orphan's %d containers and %d networks are still there", c, n)
	}
}

// TestDockerSentinelLogTail checks that a replicated topology on containers
// can quote its sentinel's output, as an error about sentinels that never
// agreed does.
func TestDockerSentinelLogTail(t *testing.T) {
	image := dockerTestImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := Up(ctx, Spec{Kind: KindReplicated, Masters: 1}, UpOptions{Provider: ProviderDocker, Image: image})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	if got := topo.sentinelLogTail(); !strings.Contains(got, "@ lockbench") {
		t.Fatalf("sentinel log tail %q shows nothing of the monitored primary", got)
	}
}
