package cli

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/longtest"
)

var dockerImage struct {
	once sync.Once
	err  error
}

// needDockerImage skips without an engine (or redis-server to build the
// image from) and builds compose.LocalImage once per test binary.
func needDockerImage(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs a Docker engine")
	}
	// Containers and an image build: the long suite.
	longtest.Skip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := compose.CheckDockerEngine(ctx); err != nil {
		t.Skipf("needs a Docker engine: %v", err)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server on PATH to build the local image")
	}
	dockerImage.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_, dockerImage.err = compose.BuildLocalImage(ctx, compose.ImageOptions{})
	})
	if dockerImage.err != nil {
		t.Fatal(dockerImage.err)
	}
}

// ofThisProcess counts the containers and networks the docker provider
// created from this test process.
func ofThisProcess(t *testing.T) (containers, networks int) {
	t.Helper()
	c, n, err := compose.CountLabelled(context.Background(), compose.LabelPID+"="+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	return c, n
}

func TestImageFlagNeedsDocker(t *testing.T) {
	code, _, errs := lockbench(t, "run", "--image", compose.LocalImage, "-d", "1s")
	if code != exitBadInput || !strings.Contains(errs, "--image") || !strings.Contains(errs, "--provider docker") {
		t.Fatalf("exit %d (%s), want %d naming --image and --provider docker", code, errs, exitBadInput)
	}
}

// TestDockerRunAndInterrupt runs on containers with a container fault, and
// interrupts runs during start-up and during the window (Ctrl-C cancels the
// run's context): no container or network of this process may be left.
func TestDockerRunAndInterrupt(t *testing.T) {
	needDockerImage(t)
	c0, n0 := ofThisProcess(t)
	check := func(t *testing.T) {
		t.Helper()
		if c, n := ofThisProcess(t); c != c0 || n != n0 {
			t.Fatalf("%d containers and %d networks of this process left (before: %d, %d)", c-c0, n-n0, c0, n0)
		}
	}
	docker := []string{"--provider", "docker", "--image", compose.LocalImage, "--warmup", "0", "-q"}
	t.Run("run with a pause fault", func(t *testing.T) {
		out := t.TempDir()
		code, stdout, errs := lockbench(t, append([]string{"run", "--topology", "redlock:3", "-d", "2s", "--out", out,
			"--fault", "at=500ms pause node=1 for=500ms", "--format", "json"}, docker...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, w := range []string{`"provider": "docker"`, `"spec": "at=500ms pause node=1 for=500ms"`, `"node": "master-1 (127.0.0.1:`, `"end_s"`} {
			if !strings.Contains(stdout, w) {
				t.Errorf("result has no %s", w)
			}
		}
		check(t)
	})
	for _, after := range []time.Duration{500 * time.Millisecond, 4 * time.Second} {
		t.Run("interrupted after "+after.String(), func(t *testing.T) {
			code, _, errs := runCancelled(t, after, nil, append([]string{"run", "--topology", "redlock:3", "-d", "1m", "--out", t.TempDir()}, docker...)...)
			if code != exitSIGINT {
				t.Fatalf("exit %d (%s), want %d", code, errs, exitSIGINT)
			}
			check(t)
		})
	}
}

func TestDockerClockFaultIsBadInput(t *testing.T) {
	code, _, errs := lockbench(t, "run", "--provider", "docker", "--topology", "redlock:3", "-d", "2s", "--fault", "at=1s clock-jump node=1 +5s")
	if code != exitBadInput || !strings.Contains(errs, "--fault") || !strings.Contains(errs, "clock") {
		t.Fatalf("exit %d (%s), want %d naming --fault and the clock", code, errs, exitBadInput)
	}
}

// TestImageBuildRefusesAMissingBinary: a --redis-server that is not an
// executable is bad input, named in one line, before any engine is asked.
func TestImageBuildRefusesAMissingBinary(t *testing.T) {
	for _, p := range []string{"/no/such/redis-server", t.TempDir()} {
		code, _, errs := lockbench(t, "image", "build", "--redis-server", p)
		if code != exitBadInput || !strings.Contains(errs, "--redis-server") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d (%q), want %d and one line naming --redis-server", p, code, errs, exitBadInput)
		}
	}
}
