package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Provider names: where a topology's servers come from.
const (
	// ProviderLocal starts redis-server processes on this machine (the default).
	ProviderLocal = "local"
	// ProviderDocker starts one redis container a master through the Docker
	// engine (testcontainers-go).
	ProviderDocker = "docker"
	// ProviderExternal reaches servers someone else runs; it is implied by
	// --redis URLs and is not a --provider value.
	ProviderExternal = "external"
)

// ProviderHelp lists the accepted --provider values.
const ProviderHelp = "local or docker (external is implied by --redis URLs)"

// DefaultImage is the docker provider's image when UpOptions.Image is empty.
const DefaultImage = "redis:7.0"

// dockerCheckTimeout bounds the look for a Docker engine, so that a missing
// engine fails fast instead of hanging in discovery or in the reaper.
const dockerCheckTimeout = 3 * time.Second

// ErrNoDockerEngine is wrapped by the docker provider's error when no Docker
// engine answers.
var ErrNoDockerEngine = errors.New("no Docker engine is reachable")

// ParseProvider parses a --provider value: local (also the empty string) or
// docker, in any case.
func ParseProvider(s string) (string, error) {
	switch p := strings.ToLower(strings.TrimSpace(s)); p {
	case "", ProviderLocal:
		return ProviderLocal, nil
	case ProviderDocker:
		return ProviderDocker, nil
	}
	return "", fmt.Errorf("--provider %q: unknown; want %s", s, ProviderHelp)
}

// resolveProvider is the provider Up uses: URLs imply external, which only
// the docker provider contradicts.
func resolveProvider(opts UpOptions) (string, error) {
	p := strings.ToLower(strings.TrimSpace(opts.Provider))
	if p == ProviderExternal {
		if len(opts.URLs) == 0 {
			return "", errors.New("the external provider needs --redis URLs")
		}
		return ProviderExternal, nil
	}
	p, err := ParseProvider(p)
	if err != nil {
		return "", err
	}
	if len(opts.URLs) > 0 {
		if p == ProviderDocker {
			return "", errors.New("--provider docker starts its own containers; it takes no --redis URLs (drop one of the two)")
		}
		return ProviderExternal, nil
	}
	return p, nil
}

// addCleanup registers f for Close.
func (t *Topology) addCleanup(f func() error) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}

// upDocker starts the masters of single or redlock:N as containers of
// UpOptions.Image, after checking that a Docker engine answers. The nodes have
// no Server: process faults (kill, restart, pause, clock) are refused by
// CheckFault, while latency and partition work through UpOptions.Proxy.
func (t *Topology) upDocker(ctx context.Context) error {
	switch {
	case t.Spec.Kind == KindReplicated:
		return errors.New("topology replicated is not supported by the docker provider (its sentinels and failover faults need local processes); use the local provider (the default, needs redis-server on PATH)")
	case t.opts.ClockShim:
		return errors.New("the clock shim needs local servers; the docker provider cannot move a container's clock")
	}
	if t.Spec.Masters == 0 {
		t.Spec.Masters = 5
	}
	// Checked before any container request: without an engine,
	// testcontainers would otherwise go on to start its reaper.
	if err := checkDockerEngine(ctx); err != nil {
		return err
	}
	t.Provider = ProviderDocker
	image := t.opts.Image
	if image == "" {
		image = DefaultImage
	}
	set := &containerSet{}
	t.addCleanup(set.terminate)

	t.logf("docker: starting %d container(s) of %s", t.Spec.Masters, image)
	start := time.Now()
	nodes := make([]*Node, t.Spec.Masters)
	errs := make([]error, t.Spec.Masters)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			nodes[i], errs[i] = startContainer(ctx, set, image, i, t.opts.Persistence)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	t.Nodes = append(t.Nodes, nodes...)
	t.logf("docker: %s up after %s: %s", t.Spec, time.Since(start).Round(time.Millisecond), strings.Join(t.Addrs(), " "))
	return nil
}

// startContainer starts master i and waits until it accepts connections.
func startContainer(ctx context.Context, set *containerSet, image string, i int, p Persistence) (*Node, error) {
	name := fmt.Sprintf("master-%d", i)
	cmd := append([]string{"redis-server", "--protected-mode", "no"}, persistenceArgs(p)...)
	c, err := testcontainers.Run(ctx, image,
		testcontainers.WithLogger(tclog.NewNoopLogger()),
		testcontainers.WithCmd(cmd...),
		testcontainers.WithExposedPorts(redisPort),
		testcontainers.WithLabels(map[string]string{"org.lockbench.node": name}),
		testcontainers.WithWaitStrategyAndDeadline(time.Minute,
			wait.ForLog("Ready to accept connections"),
			wait.ForListeningPort(redisPort)),
	)
	if c != nil {
		// Also a container that failed its wait: it exists and must go.
		set.add(c)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s container (%s): %w", name, image, err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s container: docker host: %w", name, err)
	}
	port, err := c.MappedPort(ctx, redisPort)
	if err != nil {
		return nil, fmt.Errorf("%s container: mapped port of %s: %w", name, redisPort, err)
	}
	addr := net.JoinHostPort(host, port.Port())
	return &Node{Name: name, Role: RoleMaster, Addr: addr, opts: &redis.Options{Addr: addr}}, nil
}

const redisPort = "6379/tcp"

// containerSet holds the containers of a topology so Close can remove them,
// also those of an Up that failed half way.
type containerSet struct {
	mu   sync.Mutex
	ctrs []*testcontainers.DockerContainer
}

func (s *containerSet) add(c *testcontainers.DockerContainer) {
	s.mu.Lock()
	s.ctrs = append(s.ctrs, c)
	s.mu.Unlock()
}

// terminate stops and removes every container, in parallel, and forgets them.
func (s *containerSet) terminate() error {
	s.mu.Lock()
	ctrs := s.ctrs
	s.ctrs = nil
	s.mu.Unlock()
	errs := make([]error, len(ctrs))
	var wg sync.WaitGroup
	for i, c := range ctrs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.Terminate(ctx, testcontainers.StopTimeout(3*time.Second)); err != nil {
				errs[i] = fmt.Errorf("remove container %s: %w", shortID(c.GetContainerID()), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

var quietTestcontainers sync.Once

// checkDockerEngine asks the engine testcontainers would use for a ping,
// within dockerCheckTimeout. Its error wraps ErrNoDockerEngine and the cause.
// testcontainers caches the engine it found (or failed to find) for the life
// of the process.
func checkDockerEngine(ctx context.Context) (err error) {
	// testcontainers logs to its process-wide default logger (the engine
	// banner, the reaper), not only to a request's: keep it quiet, so that
	// nothing of it mixes with a run's output.
	quietTestcontainers.Do(func() { tclog.SetDefault(tclog.NewNoopLogger()) })
	ctx, cancel := context.WithTimeout(ctx, dockerCheckTimeout)
	defer cancel()
	defer func() {
		// Some of testcontainers' discovery panics instead of failing.
		if r := recover(); r != nil {
			err = noEngine(fmt.Errorf("docker discovery panicked: %v", r))
		}
	}()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
			return fmt.Errorf("look for a Docker engine: %w", cerr) // the caller gave up
		}
		return noEngine(err)
	}
	defer cli.Close()
	// The client may have fallen back to the environment's defaults without
	// having reached anything: ask the engine itself.
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return noEngine(err)
	}
	return nil
}

func noEngine(cause error) error {
	where := "DOCKER_HOST is unset"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		where = "DOCKER_HOST=" + RedactURL(h)
	}
	return &noEngineError{cause: cause, where: where}
}

// noEngineError is ErrNoDockerEngine with its cause, on one line.
type noEngineError struct {
	cause error
	where string
}

func (e *noEngineError) Error() string {
	// testcontainers joins the errors of its discovery steps with newlines.
	cause := strings.Join(strings.Fields(strings.ReplaceAll(e.cause.Error(), "\n", "; ")), " ")
	return fmt.Sprintf("%v (%s; %s); start Docker, or use the local provider (the default, needs redis-server on PATH) or --redis URLs",
		ErrNoDockerEngine, cause, e.where)
}

func (e *noEngineError) Unwrap() []error { return []error{ErrNoDockerEngine, e.cause} }
