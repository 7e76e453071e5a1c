package cli

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/swarm"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/compose/longtest"
	"github.com/lockbench/lockbench/results"
)

// swarmJobLinger is how long each task keeps /metrics up after its run:
// longer than promLinger, since Prometheus must first find the task by DNS
// (refreshed every scrape interval) and a task's scrape crosses the
// overlay network on a loaded host.
const swarmJobLinger = "15s"

// testImages builds the three images of the test under tags of its own
// (id), each removed when the test ends: a static lockbench (the
// generators), this machine's redis-server and its prometheus, both
// dynamically linked and so copied with their libraries and loader.
func testImages(t *testing.T, ctx context.Context, cli *client.Client, id string) (lockbenchImage, redisImage, promImage string) {
	t.Helper()
	bin := staticLockbench(t, ctx)
	removeLater := func(tag string) {
		t.Cleanup(func() {
			if _, err := cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil {
				t.Errorf("remove image %s: %v", tag, err)
			}
		})
	}
	lb, err := compose.BuildLockbenchImage(ctx, compose.LockbenchImageOptions{Tag: "lockbench/lockbench:prom-e2e-" + id, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	removeLater(lb.Tag)
	rd, err := compose.BuildLocalImage(ctx, compose.ImageOptions{Tag: "lockbench/redis:prom-e2e-" + id})
	if err != nil {
		t.Fatal(err)
	}
	removeLater(rd.Tag)
	pr, err := compose.BuildPrometheusImage(ctx, compose.PrometheusImageOptions{Tag: "lockbench/prometheus:prom-e2e-" + id})
	if err != nil {
		t.Fatal(err)
	}
	removeLater(pr.Tag)
	t.Logf("images %s (%d B), %s (%d B), %s (%d B)", lb.Tag, lb.Size, rd.Tag, rd.Size, pr.Tag, pr.Size)
	return lb.Tag, rd.Tag, pr.Tag
}

// imagesTagged lists the engine's image tags that contain s.
func imagesTagged(t *testing.T, ctx context.Context, cli *client.Client, s string) []string {
	t.Helper()
	res, err := cli.ImageList(ctx, client.ImageListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, img := range res.Items {
		for _, tag := range img.RepoTags {
			if strings.Contains(tag, s) {
				tags = append(tags, tag)
			}
		}
	}
	return tags
}

// startPrometheusContainer runs the Prometheus image on net with config as
// its configuration and its port published on 127.0.0.1 only, removed
// when the test ends; it returns once Prometheus is ready.
func startPrometheusContainer(t *testing.T, ctx context.Context, cli *client.Client, image, net, name string, config []byte) *prometheusServer {
	t.Helper()
	port := freePort(t)
	web := network.MustParsePort(fmt.Sprintf("%d/tcp", compose.PrometheusPort))
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:   name,
		Config: &container.Config{Image: image, ExposedPorts: network.PortSet{web: {}}},
		HostConfig: &container.HostConfig{PortBindings: network.PortMap{
			web: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: fmt.Sprint(port)}}}},
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{net: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logContainer(t, cli, res.ID)
		}
		if _, err := cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
			t.Error(err)
		}
	})
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	dir := strings.TrimPrefix(filepath.Dir(compose.PrometheusConfigPath), "/")
	now := time.Now()
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: now})
	_ = tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(compose.PrometheusConfigPath, "/"), Mode: 0o644, Size: int64(len(config)), ModTime: now})
	_, _ = tw.Write(config)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.CopyToContainer(ctx, res.ID, client.CopyToContainerOptions{DestinationPath: "/", Content: &tarball}); err != nil {
		t.Fatalf("copy the configuration into %s: %v", name, err)
	}
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &prometheusServer{url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			logContainer(t, cli, res.ID)
			t.Fatalf("prometheus in %s not ready in 90 s: %v", name, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// logContainer logs the end of a container's output, for a failed test.
func logContainer(t *testing.T, cli *client.Client, id string) {
	rc, err := cli.ContainerLogs(context.Background(), id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "40"})
	if err != nil {
		t.Logf("logs of %s: %v", id, err)
		return
	}
	defer rc.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(rc)
	t.Logf("log of container %.12s:\n%s", id, b.String())
}

// TestPrometheusScrapesASwarmJob runs Debian's prometheus as a container
// (FROM scratch, its libraries and loader copied in) on a Swarm job's
// attachable overlay network, with the configuration `lockbench metrics
// prometheus-config --swarm-service` writes: it finds the job's three
// generator tasks by the engine's DNS (tasks.SERVICE) as they start, and
// PromQL over what it scraped gives each generator's acquisitions per
// second and the job's, and the p99 of the summed native histograms,
// within the stored and merged results' figures. Nothing the test made is
// left: containers, the service, the network, the images, the Swarm.
func TestPrometheusScrapesASwarmJob(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs a Docker engine with Swarm mode and image builds")
	}
	longtest.Skip(t)
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skip("prometheus not found on PATH: install Debian's prometheus (make prometheus) to run the real-Prometheus tests")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server on PATH for the Redis image")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := compose.CheckDockerEngine(ctx); err != nil {
		t.Skipf("needs a Docker engine: %v", err)
	}
	dc, err := compose.DockerClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	cli := dc.Client
	id := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000_000)
	// Registered first, so it runs after every other cleanup.
	t.Cleanup(func() {
		if left := imagesTagged(t, context.Background(), cli, "prom-e2e-"+id); len(left) > 0 {
			t.Errorf("images left behind: %v", left)
		}
	})
	lbImage, redisImage, promImage := testImages(t, ctx, cli, id)

	composetest.SwarmLock(t)
	before := snapshot(t, ctx, cli)
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
	net := "lockbench-e2e-prom-" + id
	if _, err := cli.NetworkCreate(ctx, net, client.NetworkCreateOptions{Driver: "overlay", Attachable: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.NetworkRemove(context.Background(), net, client.NetworkRemoveOptions{}); err != nil {
			t.Error(err)
		}
	})
	data := startRedis(t, ctx, cli, redisImage, net, "lbe2e-prom-data-"+id)

	runID := "prom-swarm-" + id
	service := swarm.ServiceName(job.Spec{Name: "lockbench", RunID: runID})
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if code, _, errOut := lockbench(t, "metrics", "prometheus-config", "--swarm-service", service,
		"--scrape-interval", promScrape.String(), "-o", cfgPath); code != 0 {
		t.Fatalf("prometheus-config: %d %s", code, errOut)
	}
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "'tasks."+service+"'") || strings.Contains(string(cfg), "static_configs") {
		t.Fatalf("the configuration does not find %s by DNS alone:\n%s", service, cfg)
	}
	prom := startPrometheusContainer(t, ctx, cli, promImage, net, "lbe2e-prom-"+id, cfg)

	out := filepath.Join(dir, "runs")
	code, stdout, errs := lockbench(t, "swarm", "job", "--generators", "3", "--network", net, "--image", lbImage,
		"--name", "lockbench", "--run-id", runID, "--out", out, "--start-in", "8s", "--",
		"--redis", "redis://"+data+":6379", "--keys", "4", "-c", "4", "--hold", "1ms", "-d", "3s", "--warmup", "500ms",
		"--metrics-linger", swarmJobLinger)
	t.Logf("swarm job:\n%s%s", errs, stdout)
	if code != 0 {
		t.Fatalf("swarm job: exit %d", code)
	}
	gens, err := results.Generators(out, runID)
	if err != nil || len(gens) != 3 {
		t.Fatalf("%d generator results: %v", len(gens), err)
	}
	ms, _ := filepath.Glob(filepath.Join(out, "merged-*.json"))
	if len(ms) != 1 {
		t.Fatalf("merged results %v: want one", ms)
	}
	merged, err := results.Read(ms[0])
	if err != nil {
		t.Fatal(err)
	}

	prom.waitScraped(t, runID, 3)
	// Each generator was found by DNS: its instance is its task's address
	// on the overlay network, at the port the tasks serve.
	instances := prom.query(t, fmt.Sprintf(`count by (instance) (last_over_time(lockbench_window_seconds{run_id=%q}[10m]))`, runID), "instance")
	if len(instances) != 3 {
		t.Errorf("instances %v: want the 3 tasks", instances)
	}
	for in := range instances {
		if !strings.HasSuffix(in, fmt.Sprintf(":%d", job.MetricsPort)) {
			t.Errorf("instance %q: want a task's address at port %d", in, job.MetricsPort)
		}
	}
	perGen := prom.query(t, acquiredPerS(runID), "generator")
	for _, r := range gens {
		g := fmt.Sprint(r.Config["generator-id"])
		if got := perGen[g]; math.Abs(got-r.Throughput.AcquiredPerS) > rateTolerance*r.Throughput.AcquiredPerS {
			t.Errorf("generator %s: PromQL acquisitions/s %v, stored %v", g, got, r.Throughput.AcquiredPerS)
		}
	}
	// The merge adds the generators' throughputs: so does PromQL's sum.
	jobRate := prom.query(t, "sum("+acquiredPerS(runID)+")", "")[""]
	t.Logf("job: PromQL acquisitions/s %.3f, merged %.3f", jobRate, merged.Throughput.AcquiredPerS)
	if merged.Contention.Acquired == 0 || math.Abs(jobRate-merged.Throughput.AcquiredPerS) > rateTolerance*merged.Throughput.AcquiredPerS {
		t.Errorf("job: PromQL acquisitions/s %v, merged %v (%d acquired)", jobRate, merged.Throughput.AcquiredPerS, merged.Contention.Acquired)
	}
	p99, count := prom.nativeP99(t, runID)
	if tta := merged.Ops[results.OpTimeToAcquire]; int64(count) != tta.Count {
		t.Errorf("summed native histograms hold %v acquisitions, the merged time_to_acquire %d", count, tta.Count)
	}
	checkP99(t, "swarm job", p99, merged.Ops[results.OpTimeToAcquire].LatencyUS.P99)
}

// TestJobsTakeMetricsLinger: a job's generators serve /metrics (the job
// gives each --metrics-addr), so --metrics-linger is a run flag a job
// takes; on Swarm's host network, where the job gives none, it is refused.
func TestJobsTakeMetricsLinger(t *testing.T) {
	code, out, errs := lockbench(t, "k8s", "job", "--generators", "2", "--image", "x", "--", "--keys", "1", "--metrics-linger", "5s")
	if code != 0 || !strings.Contains(out, "--metrics-linger") {
		t.Errorf("k8s job with --metrics-linger: exit %d, stderr %q: want the manifest", code, errs)
	}
	code, _, errs = lockbench(t, "swarm", "job", "--network", "host", "--", "--keys", "1", "--metrics-linger", "5s")
	if code != exitBadInput || !strings.Contains(errs, "--metrics-linger") {
		t.Errorf("swarm job on the host network with --metrics-linger: exit %d, stderr %q: want exit 2 naming it", code, errs)
	}
}
