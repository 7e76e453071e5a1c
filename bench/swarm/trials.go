package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// TrialsOptions configures OpenTrials.
type TrialsOptions struct {
	// Image is the trial image (compose.TrialImage): lockbench and the
	// servers its trials start, on this engine.
	Image string
	// RunID names the command's services (trial-RUNID-N), so that two
	// commands on one engine do not collide.
	RunID string
	// ImageNextStep says how to make Image where the engine has none.
	ImageNextStep string
	// Progress, when set, receives a line when Swarm is initialised.
	Progress io.Writer
}

// Trials runs single runs of lockbench (a scenario's trials), each as a
// Swarm task with its servers inside it, on this machine's engine: one
// replicated job of one task per trial, so that trials run side by side as
// the caller's pool starts them, each result read from its task's log.
// Swarm is joined once for all of them and left by Close.
type Trials struct {
	dc    *testcontainers.DockerClient
	m     *Membership
	opts  TrialsOptions
	seq   atomic.Int64
	say   func(string)
	label map[string]string
}

// OpenTrials checks that the engine answers, that it has the image, and
// makes it a Swarm manager (initialising Swarm where it is inactive, which
// Close undoes).
func OpenTrials(ctx context.Context, opts TrialsOptions) (*Trials, error) {
	dc, err := compose.DockerClient(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := dc.Client.ImageInspect(ctx, opts.Image); err != nil {
		dc.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("image %s is not on this engine: %s", opts.Image, opts.ImageNextStep)
		}
		return nil, fmt.Errorf("inspect image %s: %w", opts.Image, err)
	}
	m, err := Join(ctx, dc.Client)
	if err != nil {
		dc.Close()
		return nil, err
	}
	t := &Trials{dc: dc, m: m, opts: opts, say: progress(opts.Progress),
		label: map[string]string{job.LabelName: "lockbench", job.LabelRunID: opts.RunID}}
	if m.initialised {
		t.say("swarm: initialised a single-node Swarm on this engine; it is left again when the trials are done")
	}
	return t, nil
}

// Close leaves the Swarm where OpenTrials initialised it, with a context of
// its own (the caller's may have been cancelled by Ctrl-C).
func (t *Trials) Close(ctx context.Context) error {
	defer t.dc.Close()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := t.m.Leave(cctx); err != nil {
		return fmt.Errorf("clean up the Swarm lockbench initialised: %w", err)
	}
	return nil
}

// TrialMount is a directory of this machine a trial's task sees at Target:
// where the task leaves a file the host reads once the task is done (a
// run's history). A single-node Swarm runs the task on this machine, so
// Source is a path of its file system.
type TrialMount struct {
	Source, Target string
}

// Validate refuses a mount the engine would refuse less clearly: both
// paths absolute.
func (m TrialMount) Validate() error {
	if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) {
		return fmt.Errorf("mount %s at %s: want two absolute paths", m.Source, m.Target)
	}
	return nil
}

// TrialService is the service of one trial: a replicated job of one task,
// never restarted, running lockbench with args (the image's entrypoint is
// lockbench), with the stop grace a run needs to stop its servers, and
// mounts bound into the task read-write.
func TrialService(name, image string, args []string, labels map[string]string, mounts ...TrialMount) swarm.ServiceSpec {
	one := uint64(1)
	none := swarm.RestartPolicyConditionNone
	grace := stopGrace
	var binds []mount.Mount
	for _, m := range mounts {
		binds = append(binds, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target})
	}
	return swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{Image: image, Args: args, Labels: labels, StopGracePeriod: &grace, Mounts: binds},
			RestartPolicy: &swarm.RestartPolicy{Condition: none},
		},
		Mode: swarm.ServiceMode{ReplicatedJob: &swarm.ReplicatedJob{MaxConcurrent: &one, TotalCompletions: &one}},
	}
}

// TrialArgs is the command line of a trial's task: lockbench run with the
// trial's flags (plan.Values.Args, without --out and --format), storing
// inside the task and printing its result between the markers.
func TrialArgs(runFlags []string) []string {
	args := append([]string{"run"}, runFlags...)
	return append(args, "--out", job.ResultsDir, "--format", "marked", "-q")
}

// Run runs one trial of runFlags as a task and returns its result, read
// from the task's log. The service and its container are removed before it
// returns, on success, error and cancellation; cancelled, the trial is
// stopped and its result dropped (a trial cut short decides nothing), and
// the error is the context's. mounts are bound into the task; what it
// writes there stays on this machine after the task is removed.
func (t *Trials) Run(ctx context.Context, runFlags []string, mounts ...TrialMount) (r *results.Result, err error) {
	for _, m := range mounts {
		if err := m.Validate(); err != nil {
			return nil, err
		}
	}
	cli := t.dc.Client
	name := fmt.Sprintf("trial-%s-%d", strings.ToLower(t.opts.RunID), t.seq.Add(1))
	svc, err := cli.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: TrialService(name, t.opts.Image, TrialArgs(runFlags), t.label, mounts...)})
	if err != nil {
		return nil, fmt.Errorf("create service %s: %w", name, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if cerr := removeService(cctx, cli, svc.ID); cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up service %s: %w", name, cerr))
		}
	}()
	tasks, err := wait(ctx, cli, svc.ID, 1, time.Second, func(string) {})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("service %s: %w", name, err)
	}
	return t.result(ctx, tasks[0])
}

// result reads the trial's result from its task's log; the engine may
// still be shipping the log's end just after the task completed, so a log
// without its result is read again for a few seconds.
func (t *Trials) result(ctx context.Context, task swarm.Task) (*results.Result, error) {
	for try := 0; ; try++ {
		stdout, _, err := taskLogs(ctx, t.dc.Client, task.ID)
		var r *results.Result
		if err == nil {
			r, err = TrialResult(stdout)
		}
		if err == nil || try == 10 {
			return r, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// TrialResult is the one result a trial's log holds between the markers.
func TrialResult(log io.Reader) (*results.Result, error) {
	rs, err := job.Collect(log)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the trial's log: %w", err)
	case len(rs) != 1:
		return nil, fmt.Errorf("the trial's log holds %d results, want 1", len(rs))
	}
	return rs[0], nil
}
