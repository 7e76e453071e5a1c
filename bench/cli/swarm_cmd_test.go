package cli

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/lockbench/lockbench/bench/swarm"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/compose/longtest"
	"github.com/lockbench/lockbench/results"
)

func TestSwarmJobRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no generators":      {[]string{"--generators", "0", "--", "--keys", "1"}, "--generators 0"},
		"a flag it sets":     {[]string{"--", "--run-id", "x"}, "--run-id"},
		"bad run flag":       {[]string{"--", "--keys", "nonsense"}, "--keys"},
		"empty network":      {[]string{"--network", "", "--", "--keys", "1"}, "--network"},
		"password elsewhere": {[]string{"--", "--label", "redis://:hunter2pw@x:6379"}, "carries a password"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := lockbench(t, append([]string{"swarm", "job"}, tc.args...)...)
			if code != exitBadInput || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q: want exit 2 naming %q", code, errs, tc.want)
			}
			if strings.Contains(out+errs, "hunter2pw") {
				t.Errorf("the password was printed: %q", out+errs)
			}
		})
	}
}

// engineState is what a test must leave as it found it: the Swarm, the
// services, secrets, task containers and the networks Swarm makes, and
// anything named like the test's own. Other containers and networks are not
// compared: other tests may be using the engine at the same time.
type engineState struct {
	swarm                         string
	containers, networks, secrets []string
	services                      []string
}

func snapshot(t *testing.T, ctx context.Context, cli *client.Client) engineState {
	t.Helper()
	var s engineState
	info, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.swarm = string(info.Info.Swarm.LocalNodeState)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		_, task := c.Labels["com.docker.swarm.task.id"]
		if task || len(c.Names) > 0 && strings.HasPrefix(c.Names[0], "/lbe2e-") {
			s.containers = append(s.containers, c.ID)
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		if n.Name == "docker_gwbridge" || n.Name == "ingress" || n.Scope == "swarm" || strings.HasPrefix(n.Name, "lockbench-e2e-") {
			s.networks = append(s.networks, n.Name)
		}
	}
	if s.swarm == "active" {
		sv, err := cli.ServiceList(ctx, client.ServiceListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range sv.Items {
			s.services = append(s.services, x.Spec.Name)
		}
		sc, err := cli.SecretList(ctx, client.SecretListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range sc.Items {
			s.secrets = append(s.secrets, x.Spec.Name)
		}
	}
	for _, l := range [][]string{s.containers, s.networks, s.services, s.secrets} {
		sort.Strings(l)
	}
	return s
}

// staticLockbench builds this lockbench statically (CGO off, stripped),
// as the images' FROM scratch needs it, into the test's temporary
// directory, and returns its path.
func staticLockbench(t *testing.T, ctx context.Context) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lockbench")
	build := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-ldflags", "-s -w", "-o", bin, "../../cmd/lockbench")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v: %s", err, out)
	}
	return bin
}

// swarmTestImages builds a static lockbench, the lockbench image from it
// and the Redis image, or skips where no engine answers.
func swarmTestImages(t *testing.T, ctx context.Context) (redisImage string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs a Docker engine with Swarm mode and image builds")
	}
	// A static build, two images and a Swarm: minutes on a 2-core machine.
	longtest.Skip(t)
	if err := compose.CheckDockerEngine(ctx); err != nil {
		t.Skipf("needs a Docker engine: %v", err)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server on PATH for the Redis image")
	}
	bin := staticLockbench(t, ctx)
	dc, err := compose.DockerClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	// A rebuild moves the tag; the image it named must not stay behind
	// untagged. The tag first names an image of a different binary (the
	// same one with a byte appended, still a static ELF), so the rebuild
	// always replaces one, on a fresh machine too.
	other := bin + "-other"
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	previous, err := compose.BuildLockbenchImage(ctx, compose.LockbenchImageOptions{Binary: other})
	if err != nil {
		t.Fatal(err)
	}
	built, err := compose.BuildLockbenchImage(ctx, compose.LockbenchImageOptions{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	if previous.ID == built.ID {
		t.Fatalf("two binaries built one image %s", built.ID)
	}
	if _, err := dc.Client.ImageInspect(ctx, previous.ID); err == nil {
		t.Errorf("the image %s named before the rebuild is left behind untagged", previous.ID)
	}
	info, err := compose.BuildLocalImage(ctx, compose.ImageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info.Tag
}

// TestSwarmJobEndToEnd runs generators as Swarm tasks on this machine's
// engine: a Redis (with a password, which reaches the tasks through a Docker
// secret) and a Redis resource on an attachable overlay network the tasks
// join; three generators of the naive lock on one key, whose overlaps
// between generators the shared resource sees, then three of the fenced
// lock, which accepts no stale write. The merged counts are the sums, and
// nothing the test or the jobs created is left: no service, task container,
// network, secret, nor the Swarm itself where the test initialised it.
func TestSwarmJobEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	redisImage := swarmTestImages(t, ctx)
	// Before the engine's state is read, and released after every cleanup
	// below (the Leave included): no other package's Swarm test runs between.
	composetest.SwarmLock(t)
	dc, err := compose.DockerClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	cli := dc.Client
	before := snapshot(t, ctx, cli)
	// Cleanups run last-registered first: this check runs after all of them.
	t.Cleanup(func() {
		if after := snapshot(t, context.Background(), cli); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the engine was left changed:\nbefore %+v\nafter  %+v", before, after)
		}
	})
	m, err := swarm.Join(ctx, cli)
	if err != nil {
		if errors.Is(err, swarm.ErrNoSwarm) {
			t.Skipf("needs Swarm mode: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Leave(context.Background()); err != nil {
			t.Error(err)
		}
	})
	id := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000_000)
	net := "lockbench-e2e-" + id
	if _, err := cli.NetworkCreate(ctx, net, client.NetworkCreateOptions{Driver: "overlay", Attachable: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.NetworkRemove(context.Background(), net, client.NetworkRemoveOptions{}); err != nil {
			t.Error(err)
		}
	})
	const pw = "e2e-Pw-5c1d"
	data := startRedis(t, ctx, cli, redisImage, net, "lbe2e-data-"+id, "--requirepass", pw)
	resource := startRedis(t, ctx, cli, redisImage, net, "lbe2e-res-"+id)
	dataURL, resURL := "redis://:"+pw+"@"+data+":6379", "redis://"+resource+":6379"

	job := func(lock string, lockFlags ...string) (gens []*results.Result, merged *results.Result) {
		t.Helper()
		dir := t.TempDir()
		runID := "e2e-" + lock + "-" + id
		args := append([]string{"swarm", "job", "--generators", "3", "--network", net, "--out", dir, "--run-id", runID, "--start-in", "6s", "--",
			"--redis", dataURL, "--resource", resURL, "--lock", lock, "--keys", "1", "-c", "1", "-d", "2s", "--warmup", "0", "--retry", "fixed:1ms"},
			lockFlags...)
		code, out, errs := lockbench(t, args...)
		t.Logf("swarm job %s:\n%s%s", lock, errs, out)
		if code != 0 {
			t.Fatalf("swarm job %s: exit %d", lock, code)
		}
		if strings.Contains(out+errs, pw) {
			t.Errorf("the password was printed")
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), pw) {
				t.Errorf("%s holds the password", f)
			}
		}
		gens, err := results.Generators(dir, runID)
		if err != nil || len(gens) != 3 {
			t.Fatalf("%d generator results: %v", len(gens), err)
		}
		ms, _ := filepath.Glob(filepath.Join(dir, "merged-*.json"))
		if len(ms) != 1 {
			t.Fatalf("merged results %v: want one", ms)
		}
		if merged, err = results.Read(ms[0]); err != nil {
			t.Fatal(err)
		}
		return gens, merged
	}

	// The naive lock's race: work nearly as long as the TTL, and a round trip
	// between GET and DEL long enough for the lease to expire in it.
	gens, merged := job("naive", "--ttl", "100ms", "--hold", "uniform:40ms,70ms", "--naive-gap", "40ms")
	var acquired, contended, overlaps int64
	for _, r := range gens {
		acquired += r.Contention.Acquired
		contended += r.Contention.Contended
		overlaps += r.Incidents.Overlaps
	}
	if contended == 0 || overlaps == 0 {
		t.Errorf("naive: contended %d, overlaps %d: want both between generators on one key through the shared resource", contended, overlaps)
	}
	if merged.Contention.Acquired != acquired || merged.Contention.Contended != contended || merged.Incidents.Overlaps != overlaps {
		t.Errorf("naive merged: acquired %d contended %d overlaps %d, want the sums %d %d %d", merged.Contention.Acquired,
			merged.Contention.Contended, merged.Incidents.Overlaps, acquired, contended, overlaps)
	}

	// Holders stall past their TTL before writing (the gc-pause preset): the
	// fence refuses their late writes.
	naiveOverlaps := overlaps
	gens, merged = job("fenced", "--workload", "gc-pause")
	acquired = 0
	var rejected, accepted int64
	for _, r := range gens {
		acquired += r.Contention.Acquired
		rejected += r.Incidents.FencingRejected
		accepted += r.Incidents.StaleWritesAccepted
	}
	if accepted != 0 || merged.Incidents.StaleWritesAccepted != 0 || rejected == 0 {
		t.Errorf("fenced: %d stale writes accepted (merged %d), %d rejected: want none accepted and some rejected", accepted, merged.Incidents.StaleWritesAccepted, rejected)
	}
	if acquired == 0 || merged.Contention.Acquired != acquired || merged.Incidents.FencingRejected != rejected {
		t.Errorf("fenced merged: acquired %d rejected %d, want the sums %d %d", merged.Contention.Acquired, merged.Incidents.FencingRejected, acquired, rejected)
	}
	t.Logf("naive: %d overlaps between generators; fenced: %d stale writes rejected, %d accepted", naiveOverlaps, rejected, accepted)
}

// startRedis runs a Redis container of image on net, named name (also its
// address there), removed when the test ends.
func startRedis(t *testing.T, ctx context.Context, cli *client.Client, image, net, name string, args ...string) string {
	t.Helper()
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:             name,
		Config:           &container.Config{Image: image, Cmd: append([]string{"redis-server", "--protected-mode", "no", "--save", "", "--appendonly", "no"}, args...)},
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{net: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
			t.Error(err)
		}
	})
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestImageBuildLockbenchRefusals(t *testing.T) {
	dynamic := "" // this test binary where it is linked with cgo (-race is)
	if f, err := elf.Open(os.Args[0]); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				dynamic = os.Args[0]
			}
		}
		f.Close()
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"flag before lockbench": {[]string{"image", "build", "--tag", "x:y", "lockbench"}, "--tag came before lockbench"},
		"not executable":        {[]string{"image", "build", "lockbench", "--binary", "/etc/hostname"}, "--binary"},
		"redis flag":            {[]string{"image", "build", "lockbench", "--redis-server", "/bin/sh"}, "redis-server"},
		"dynamic binary":        {[]string{"image", "build", "lockbench", "--binary", dynamic}, "not a static executable"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.args[len(tc.args)-1] == "" {
				t.Skip("this test binary is not dynamically linked")
			}
			code, _, errs := lockbench(t, tc.args...)
			if code != exitBadInput || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q: want exit 2 and one line naming %q", code, errs, tc.want)
			}
		})
	}
}
