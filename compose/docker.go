package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Provider names: where a topology's servers come from.
const (
	// ProviderLocal starts redis-server processes on this machine (the default).
	ProviderLocal = "local"
	// ProviderDocker starts the topology's servers as containers through the
	// Docker engine (testcontainers-go), on a network of their own.
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
			return "", badRequest("--provider docker starts its own containers; it takes no --redis URLs (drop one of the two)")
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
	disableRyuk()
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
