package cli

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/compose/longtest"
	"github.com/lockbench/lockbench/results"
)

// TestScenarioOnSwarm runs a two-trial scenario (naive-release, one trial
// of each variant) with --engine swarm on this machine's engine: each trial
// a Swarm task with its redis-server inside the trial image. The verdict
// has the words the recipe earns from first principles (the naive release
// violated, the atomic script not), both trials are stored on the host in
// trial order, and nothing is left: no service, task container, network,
// secret, nor the Swarm where it was inactive. Then Ctrl-C in the second
// trial keeps the first and leaves nothing either.
func TestScenarioOnSwarm(t *testing.T) {
	ctx, cli, before := swarmTrialEngine(t)
	image := trialTestImage(t, ctx, cli)

	out := t.TempDir()
	code, verdict, errs := lockbench(t, "scenario", "naive-release", "--trials", "1", "--engine", "swarm", "--engine-image", image, "--out", out, "-q")
	t.Logf("scenario on swarm:\n%s%s", errs, verdict)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"naive GET+DEL: violated", "single (atomic script): undecided"} {
		if !strings.Contains(verdict, want) {
			t.Errorf("verdict lacks %q", want)
		}
	}
	if got := storedLabels(t, out); fmt.Sprint(got) != "[naive-release / naive GET+DEL / trial 1 naive-release / single (atomic script) / trial 1]" {
		t.Errorf("stored trials %q: want one of each variant", got)
	}
	if after := snapshot(t, ctx, cli); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the run left the engine changed:\nbefore %+v\nafter  %+v", before, after)
	}

	// Ctrl-C once the first trial is stored: it is kept, the second is
	// stopped in its task, and the task goes.
	out = t.TempDir()
	ictx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	go func() {
		for ictx.Err() == nil {
			if files, _ := filepath.Glob(filepath.Join(out, "*.json")); len(files) > 0 {
				time.Sleep(2 * time.Second) // the second trial's task is up
				interrupt()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	code = run(ictx, []string{"lockbench", "scenario", "naive-release", "--trials", "1", "--engine", "swarm", "--engine-image", image, "--out", out, "-q"}, &stdout, &stderr)
	t.Logf("interrupted scenario on swarm: exit %d\n%s%s", code, stderr.String(), stdout.String())
	if code != 130 || !strings.Contains(stdout.String(), "naive GET+DEL: violated") || !strings.Contains(stdout.String(), "0/0 of 0") {
		t.Errorf("exit %d: want 130 and a verdict of the first trial only (the second variant begun, with none)", code)
	}
	if got := storedLabels(t, out); len(got) != 1 {
		t.Errorf("stored trials %q: want the first one kept", got)
	}
}

// trialTestImage builds the trial image from a static build of this
// lockbench under a tag of the test's own, removed when the test ends.
func trialTestImage(t *testing.T, ctx context.Context, cli *client.Client) string {
	t.Helper()
	bin := staticLockbench(t, ctx)
	tag := "lockbench/trial:e2e-" + filepath.Base(t.TempDir())
	info, err := compose.BuildTrialImage(ctx, compose.TrialImageOptions{Tag: strings.ToLower(tag), Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), info.Tag, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("remove image %s: %v", info.Tag, err)
		}
	})
	return info.Tag
}

// storedLabels are the labels of the results stored in dir, in label order.
func storedLabels(t *testing.T, dir string) []string {
	t.Helper()
	rs, _, err := results.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range rs {
		labels = append(labels, r.Label)
	}
	sort.Strings(labels)
	return labels
}

// swarmTrialEngine is what both engine tests need before they start: the
// long suite, a Docker engine and redis-server (for the trial image), the
// machine's Swarm held for the test (composetest.SwarmLock), a client of
// the engine for the test's life, and the engine's state to compare with
// after, compared again when the test ends. The context ends with the test, at the latest in 10 minutes.
func swarmTrialEngine(t *testing.T) (context.Context, *client.Client, engineState) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs a Docker engine with Swarm mode and an image build")
	}
	longtest.Skip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	if err := compose.CheckDockerEngine(ctx); err != nil {
		t.Skipf("needs a Docker engine: %v", err)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("needs redis-server on PATH for the trial image")
	}
	composetest.SwarmLock(t)
	dc, err := compose.DockerClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	before := snapshot(t, ctx, dc.Client)
	// Registered after the client's close, so it runs before it: on every
	// path out of the test, the engine must be as it was.
	t.Cleanup(func() {
		if after := snapshot(t, context.Background(), dc.Client); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the engine was left changed:\nbefore %+v\nafter  %+v", before, after)
		}
	})
	return ctx, dc.Client, before
}
