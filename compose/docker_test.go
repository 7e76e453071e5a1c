package compose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParseProvider(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "", want: ProviderLocal},
		{in: "local", want: ProviderLocal},
		{in: " Local ", want: ProviderLocal},
		{in: "docker", want: ProviderDocker},
		{in: "DOCKER", want: ProviderDocker},
		{in: "external", bad: true}, // implied by --redis URLs, never named
		{in: "podman", bad: true},
		{in: "local,docker", bad: true},
	} {
		got, err := ParseProvider(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseProvider(%q) = %q, want an error", tc.in, got)
				continue
			}
			for _, w := range []string{"--provider", `"` + tc.in + `"`, "local", "docker"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseProvider(%q) error %q does not mention %s", tc.in, err, w)
				}
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseProvider(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestResolveProvider(t *testing.T) {
	url := []string{"redis://127.0.0.1:6379"}
	for _, tc := range []struct {
		opts UpOptions
		want string
		bad  string
	}{
		{opts: UpOptions{}, want: ProviderLocal},
		{opts: UpOptions{Provider: "docker"}, want: ProviderDocker},
		{opts: UpOptions{URLs: url}, want: ProviderExternal},
		{opts: UpOptions{Provider: "local", URLs: url}, want: ProviderExternal},
		{opts: UpOptions{Provider: "external", URLs: url}, want: ProviderExternal},
		{opts: UpOptions{Provider: "external"}, bad: "needs --redis URLs"},
		{opts: UpOptions{Provider: "docker", URLs: url}, bad: "takes no --redis URLs"},
		{opts: UpOptions{Provider: "vm"}, bad: "--provider"},
	} {
		got, err := resolveProvider(tc.opts)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("resolveProvider(%+v) = %q, %v; want an error with %q", tc.opts, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolveProvider(%+v) = %q, %v; want %q", tc.opts, got, err, tc.want)
		}
	}
}

// TestDockerProviderRefusals covers what the docker provider refuses before
// it looks for an engine, so the answers are the same with or without one.
func TestDockerProviderRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		opts UpOptions
		want string
	}{
		{"clock shim", Spec{Kind: KindSingle, Masters: 1}, UpOptions{Provider: ProviderDocker, ClockShim: true}, "clock shim"},
		{"urls", Spec{Kind: KindSingle, Masters: 1}, UpOptions{Provider: ProviderDocker, URLs: []string{"redis://127.0.0.1:1"}}, "takes no --redis URLs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := Up(context.Background(), tc.spec, tc.opts)
			if err == nil {
				_ = topo.Close()
				t.Fatal("Up succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNoDockerEngine) {
				t.Fatalf("error %q, want one with %q and not ErrNoDockerEngine", err, tc.want)
			}
		})
	}
}

// TestDockerNodesRefuseProcessFaults checks that a container, which has no
// Server, is refused process and clock faults but not proxy faults.
func TestDockerNodesRefuseProcessFaults(t *testing.T) {
	topo := &Topology{Spec: Spec{Kind: KindSingle, Masters: 1}, Provider: ProviderDocker,
		Nodes: []*Node{{Name: "master-0", Role: RoleMaster, Addr: "localhost:32768"}}}
	for _, spec := range []string{"at=1s kill node=0", "at=1s restart primary", "at=1s pause node=0 for=1s",
		"at=1s clock-jump node=0 +5s", "at=1s clock-speed node=0 2 for=1s"} {
		f, err := ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := topo.CheckFault(f); err == nil || !strings.Contains(err.Error(), "needs a local server") {
			t.Errorf("CheckFault(%q) = %v, want a refusal naming a local server", spec, err)
		}
	}
	// With proxies (UpOptions.Proxy) latency and partition are fine.
	topo.Nodes[0].proxy = &nodeProxy{}
	for _, spec := range []string{"at=1s latency node=0 5ms for=1s", "at=1s partition node=0 for=1s"} {
		f, err := ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := topo.CheckFault(f); err != nil {
			t.Errorf("CheckFault(%q) = %v, want nil", spec, err)
		}
	}
}

func TestDockerProviderWithoutEngine(t *testing.T) {
	if checkDockerEngine(context.Background()) == nil {
		t.Skip("a Docker engine is reachable here; this test checks the no-engine message")
	}
	type result struct {
		topo *Topology
		err  error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		topo, err := Up(context.Background(), Spec{Kind: KindSingle, Masters: 1}, UpOptions{Provider: ProviderDocker})
		done <- result{topo, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Up with the docker provider did not return within 15 s")
	}
	if r.err == nil {
		_ = r.topo.Close()
		t.Skip("docker engine present; this test checks the no-engine message")
	}
	t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), r.err)
	if !errors.Is(r.err, ErrNoDockerEngine) {
		t.Fatalf("error %q does not wrap ErrNoDockerEngine", r.err)
	}
	if strings.Contains(r.err.Error(), "\n") {
		t.Errorf("error is not one line: %q", r.err)
	}
	for _, w := range []string{"no Docker engine is reachable", "start Docker", "local provider", "--redis"} {
		if !strings.Contains(r.err.Error(), w) {
			t.Errorf("error %q does not mention %q", r.err, w)
		}
	}
}

// TestDockerEngineCheckIsBounded points DOCKER_HOST at a listener that never
// answers and runs the no-engine test in a child process (testcontainers
// keeps the engine it found for the life of a process): the look for an
// engine must give up on its own, and print nothing.
func TestDockerEngineCheckIsBounded(t *testing.T) {
	if os.Getenv("LOCKBENCH_DOCKER_CHILD") != "" {
		t.Skip("already the child")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	// An engine that accepts connections and never answers: the worst case,
	// where only the check's own timeout ends the wait.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDockerProviderWithoutEngine$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOCKBENCH_DOCKER_CHILD=1", "DOCKER_HOST=tcp://"+l.Addr().String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("child test failed: %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-waited
		t.Fatalf("child test still running after 20 s\n%s", out.String())
	}
	t.Logf("child done after %s", time.Since(start).Round(time.Millisecond))
	if got := strings.TrimSpace(out.String()); got != "PASS" {
		t.Errorf("child printed more than PASS (testcontainers logging?):\n%s", got)
	}
}

// TestComposeFiles keeps compose/docker/*.yml in line with the topologies
// they stand for: the image, loopback-only ports, the redlock5 ports of the
// README, and the sentinel settings of the local replicated topology.
func TestComposeFiles(t *testing.T) {
	type service struct {
		Image   string   `yaml:"image"`
		Ports   []string `yaml:"ports"`
		Command []string `yaml:"command"`
	}
	load := func(name string) map[string]service {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("docker", name))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Services map[string]service `yaml:"services"`
		}
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for n, s := range f.Services {
			if want := "${LOCKBENCH_REDIS_IMAGE:-" + DefaultImage + "}"; s.Image != want {
				t.Errorf("%s: service %s image %q, want %q", name, n, s.Image, want)
			}
			for _, p := range s.Ports {
				if !strings.HasPrefix(p, "127.0.0.1:") {
					t.Errorf("%s: service %s publishes %q beyond loopback", name, n, p)
				}
			}
		}
		return f.Services
	}
	hostPorts := func(svcs map[string]service) []string {
		var out []string
		for _, s := range svcs {
			for _, p := range s.Ports {
				// 127.0.0.1:${VAR:-DEFAULT}:6379: the default host port.
				host := strings.TrimPrefix(p, "127.0.0.1:")
				if _, def, ok := strings.Cut(host, ":-"); ok {
					host = def
				}
				out = append(out, strings.Split(strings.TrimSuffix(strings.Split(host, "}")[0], ":"), ":")[0])
			}
		}
		slices.Sort(out)
		return out
	}

	if got := hostPorts(load("single.yml")); !slices.Equal(got, []string{"6379"}) {
		t.Errorf("single.yml host ports %v, want [6379]", got)
	}
	if got := hostPorts(load("redlock5.yml")); !slices.Equal(got, []string{"6381", "6382", "6383", "6384", "6385"}) {
		t.Errorf("redlock5.yml host ports %v, want 6381-6385", got)
	}

	rep := load("replicated.yml")
	want := []string{
		fmt.Sprintf("sentinel monitor %s primary 6379 %d", MasterName, sentinelQuorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, downAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, failoverTimeout.Milliseconds()),
	}
	sentinels := 0
	for n, s := range rep {
		if !strings.HasPrefix(n, "sentinel-") {
			continue
		}
		sentinels++
		script := strings.Join(s.Command, " ")
		for _, w := range want {
			if !strings.Contains(script, w) {
				t.Errorf("replicated.yml: %s does not configure %q", n, w)
			}
		}
	}
	if sentinels != sentinelCount {
		t.Errorf("replicated.yml has %d sentinels, want %d", sentinels, sentinelCount)
	}
	if !slices.Contains(rep["replica"].Command, "--replicaof") {
		t.Error("replicated.yml: the replica does not replicate")
	}
}
