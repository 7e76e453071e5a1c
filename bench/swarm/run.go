package swarm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// Options configures Run.
type Options struct {
	// Spec is the job; its Secret goes into a Docker secret.
	Spec job.Spec
	// Network is the network the tasks join: an attachable overlay network,
	// HostNetwork, or "" for the engine's default.
	Network string
	// Progress, when set, receives a line whenever the tasks' states change.
	Progress io.Writer
	// Timeout bounds the wait for the tasks (0: no bound but ctx's).
	Timeout time.Duration
	// Poll is how often the tasks' states are read; 0 means half a second.
	Poll time.Duration
}

// serviceLabel is the label the engine puts on a service's task containers.
const serviceLabel = "com.docker.swarm.service.id"

// cleanupTimeout bounds the removal of what a job created, which runs with a
// context of its own: the job's may have been cancelled.
const cleanupTimeout = 2 * time.Minute

// Run runs the job as a Swarm replicated job and returns the generators'
// results in generator order; interrupted (ctx cancelled), it returns the
// partial results the generators printed as they stopped, with the error. Whatever it created is removed before it
// returns, on success, error and cancellation: the service (and with it its
// tasks' containers), the secret, and the Swarm itself where Run initialised
// it.
func Run(ctx context.Context, opts Options) (rs []*results.Result, err error) {
	s := opts.Spec
	if err := s.Validate(); err != nil {
		return nil, err
	}
	dc, err := compose.DockerClient(ctx)
	if err != nil {
		return nil, err
	}
	defer dc.Close()
	cli := dc.Client
	say := progress(opts.Progress)
	if err := checkLocalImage(ctx, cli, s.Image); err != nil {
		return nil, err
	}
	m, err := Join(ctx, cli)
	if err != nil {
		return nil, err
	}
	cleanup := func(what string, f func(context.Context) error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if cerr := f(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up %s: %w", what, cerr))
		}
	}
	if m.initialised {
		say("swarm: initialised a single-node Swarm on this engine; it is left again when the job is done")
		defer cleanup("the Swarm lockbench initialised", m.Leave)
	}
	name := ServiceName(s)
	var secret *SecretRef
	if len(s.Secret) > 0 {
		res, err := cli.SecretCreate(ctx, client.SecretCreateOptions{Spec: swarm.SecretSpec{
			Annotations: swarm.Annotations{Name: name + "-env", Labels: s.Labels()}, Data: s.SecretFile()}})
		if err != nil {
			return nil, fmt.Errorf("create secret %s-env: %w", name, err)
		}
		secret = &SecretRef{ID: res.ID, Name: name + "-env"}
		defer cleanup("secret "+secret.Name, func(c context.Context) error { return removeSecret(c, cli, secret.ID) })
	}
	svc, err := cli.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: Service(s, secret, opts.Network)})
	if err != nil {
		return nil, createError(name, opts.Network, err)
	}
	defer cleanup("service "+name, func(c context.Context) error { return removeService(c, cli, svc.ID) })
	say(fmt.Sprintf("swarm: service %s: %d generators, run %s, starting together at %s",
		name, s.Generators, s.RunID, s.StartAt.UTC().Format(time.RFC3339)))
	wctx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	tasks, err := wait(wctx, cli, svc.ID, s.Generators, opts.Poll, say)
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			err = fmt.Errorf("%w (the job's --timeout %s)", err, opts.Timeout)
		}
		err = fmt.Errorf("service %s: %w", name, err)
		if ctx.Err() != nil {
			// Interrupted: what the generators measured so far is kept, as
			// run keeps its partial result.
			return interrupted(context.WithoutCancel(ctx), cli, s, svc.ID, say, err)
		}
		return nil, err
	}
	return collect(ctx, cli, s, tasks)
}

// interrupted stops the job's running generators with SIGTERM, on which each
// prints the result of what it measured so far (marked partial), and
// returns what their logs hold, every result marked partial, with err. The
// service and its containers are removed afterwards, as on every return.
func interrupted(ctx context.Context, cli *client.Client, s job.Spec, serviceID string, say func(string), err error) ([]*results.Result, error) {
	say("swarm: interrupted; stopping the generators, which print what they measured so far")
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	f := make(client.Filters).Add("label", serviceLabel+"="+serviceID)
	cs, lerr := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if lerr != nil {
		return nil, errors.Join(err, fmt.Errorf("list the generators to stop: %w", lerr))
	}
	grace := int(stopGrace / time.Second)
	var wg sync.WaitGroup
	for _, c := range cs.Items {
		if c.State == container.StateRunning {
			wg.Go(func() { _, _ = cli.ContainerStop(ctx, c.ID, client.ContainerStopOptions{Timeout: &grace}) })
		}
	}
	wg.Wait()
	res, terr := cli.TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", serviceID)})
	if terr != nil {
		return nil, errors.Join(err, fmt.Errorf("list the generators' tasks: %w", terr))
	}
	logs := map[int]io.Reader{}
	for _, t := range res.Items {
		if stdout, _, lerr := taskLogs(ctx, cli, t.ID); lerr == nil {
			logs[t.Slot] = stdout
		}
	}
	rs, missing := collectPartial(s, logs)
	if len(missing) > 0 {
		say(fmt.Sprintf("swarm: no result from generator(s) %v (not started, or stopped before they printed one)", missing))
	}
	return rs, err
}

// collectPartial reads the results an interrupted job's generators printed
// to their logs, by task slot: every result marked partial (a generator that
// finished is part of a run that did not), in generator order; missing
// lists the slots without a result of their own generator.
func collectPartial(s job.Spec, logs map[int]io.Reader) (rs []*results.Result, missing []int) {
	for slot := range s.Generators {
		var found *results.Result
		if log, ok := logs[slot]; ok {
			got, _ := job.Collect(log) // a log cut inside a result still gives those before it
			want := fmt.Sprintf("%s-g%d", s.RunID, slot)
			for _, r := range got {
				if r.ID == want {
					found = r
				}
			}
		}
		if found == nil {
			missing = append(missing, slot)
			continue
		}
		found.Partial = true
		rs = append(rs, found)
	}
	return rs, missing
}

// checkLocalImage refuses, before anything is created, a job whose image is
// the local lockbench image (compose.LockbenchImage) where this engine has
// none, saying how to make it. Another image may come from a registry as
// the tasks start, so it is not checked.
func checkLocalImage(ctx context.Context, cli *client.Client, image string) error {
	if image != compose.LockbenchImage {
		return nil
	}
	_, err := cli.ImageInspect(ctx, image)
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("image %s is not on this engine: %s", image, imageNextStep())
	}
	return fmt.Errorf("inspect image %s: %w", image, err)
}

// imageNextStep says how to make the lockbench image from this lockbench.
func imageNextStep() string {
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	return compose.LockbenchImageNextStep(self)
}

// progress returns a printer of lines to w (none when w is nil).
func progress(w io.Writer) func(string) {
	return func(line string) {
		if w != nil {
			fmt.Fprintln(w, line)
		}
	}
}

// createError explains a refused service: most often the network.
func createError(name, network string, err error) error {
	if network != "" && cerrdefs.IsNotFound(err) {
		return fmt.Errorf("create service %s: --network %s: %w; want an attachable overlay network (docker network create -d overlay --attachable NAME) or host", name, network, err)
	}
	return fmt.Errorf("create service %s: %w", name, err)
}

// wait polls the service's tasks until n are complete, saying how they
// stand whenever that changes. A task that failed or was rejected ends the
// wait with its error and the end of its log.
func wait(ctx context.Context, cli *client.Client, serviceID string, n int, poll time.Duration, say func(string)) ([]swarm.Task, error) {
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	last := ""
	for {
		res, err := cli.TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", serviceID)})
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		tasks := res.Items
		sort.Slice(tasks, func(i, j int) bool { return tasks[i].Slot < tasks[j].Slot })
		if line := summary(tasks, n); line != last {
			say("swarm: " + line)
			last = line
		}
		complete := 0
		for _, t := range tasks {
			switch t.Status.State {
			case swarm.TaskStateComplete:
				complete++
			case swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateOrphaned, swarm.TaskStateShutdown, swarm.TaskStateRemove:
				hint := ""
				if strings.Contains(t.Status.Err, "No such image") {
					hint = "; " + imageNextStep()
				}
				return nil, fmt.Errorf("%s%s%s", describeTask(t), hint, logTail(ctx, cli, t.ID))
			}
		}
		if complete >= n {
			return tasks, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d tasks (%s): %w", n, last, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// summary counts tasks by state: "4 generators: 1 preparing, 3 running".
func summary(tasks []swarm.Task, n int) string {
	count := map[swarm.TaskState]int{}
	for _, t := range tasks {
		count[t.Status.State]++
	}
	states := make([]string, 0, len(count))
	for st := range count {
		states = append(states, string(st))
	}
	sort.Strings(states)
	parts := make([]string, 0, len(states))
	for _, st := range states {
		parts = append(parts, fmt.Sprintf("%d %s", count[swarm.TaskState(st)], st))
	}
	if len(parts) == 0 {
		parts = append(parts, "no task scheduled yet")
	}
	return fmt.Sprintf("%d generators: %s", n, strings.Join(parts, ", "))
}

// logTail is the end of a task's output, for an error message.
func logTail(ctx context.Context, cli *client.Client, taskID string) string {
	out, errs, err := taskLogs(ctx, cli, taskID)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(errs.String()+out.String()), "\n")
	var keep []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "{") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	if len(keep) > 3 {
		keep = keep[len(keep)-3:]
	}
	if len(keep) == 0 {
		return ""
	}
	return "; its log ends: " + strings.Join(keep, " | ")
}

// taskLogs reads a task's stdout and stderr apart.
func taskLogs(ctx context.Context, cli *client.Client, taskID string) (stdout, stderr *bytes.Buffer, err error) {
	rc, err := cli.TaskLogs(ctx, taskID, client.TaskLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return nil, nil, fmt.Errorf("logs of task %s: %w", shortID(taskID), err)
	}
	defer rc.Close()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	if _, err := stdcopy.StdCopy(stdout, stderr, rc); err != nil {
		return nil, nil, fmt.Errorf("logs of task %s: %w", shortID(taskID), err)
	}
	return stdout, stderr, nil
}

// collect reads each task's result from its log: one result per task, the
// generator the task's slot names. The engine may still be shipping the
// end of a log just after the task completed, so a log without its result
// is read again for a few seconds.
func collect(ctx context.Context, cli *client.Client, s job.Spec, tasks []swarm.Task) ([]*results.Result, error) {
	out := make([]*results.Result, 0, len(tasks))
	for _, t := range tasks {
		want := fmt.Sprintf("%s-g%d", s.RunID, t.Slot)
		var rs []*results.Result
		var err error
		for try := 0; ; try++ {
			var stdout *bytes.Buffer
			stdout, _, err = taskLogs(ctx, cli, t.ID)
			if err == nil {
				rs, err = job.Collect(stdout)
			}
			if err == nil && len(rs) > 0 || try == 10 {
				break
			}
			select {
			case <-ctx.Done():
				return out, ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
		switch {
		case err != nil:
			return out, fmt.Errorf("task %d: %w", t.Slot, err)
		case len(rs) != 1:
			return out, fmt.Errorf("task %d: %d results in its log, want 1", t.Slot, len(rs))
		case rs[0].ID != want:
			return out, fmt.Errorf("task %d printed result %s, want %s: the slot and the generator id disagree", t.Slot, rs[0].ID, want)
		}
		out = append(out, rs[0])
	}
	return out, nil
}

// stopGrace is how long a running generator has to stop after SIGTERM
// (the service's removal sends it, on Ctrl-C say) and clean up its keys
// before its container is removed by force.
const stopGrace = 10 * time.Second

// removeService removes the service and its tasks' containers. The engine
// would stop and remove them itself, but only tens of seconds later: a
// running generator (the job was interrupted) is stopped here at once, with
// SIGTERM and stopGrace to clean up its keys, and every container removed.
func removeService(ctx context.Context, cli *client.Client, id string) error {
	if _, err := cli.ServiceRemove(ctx, id, client.ServiceRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove service: %w", err)
	}
	f := make(client.Filters).Add("label", serviceLabel+"="+id)
	grace := int(stopGrace / time.Second)
	for try := 0; ; try++ {
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil {
			return fmt.Errorf("list the service's containers: %w", err)
		}
		if len(cs.Items) == 0 {
			return nil
		}
		var wg sync.WaitGroup
		errs := make([]error, len(cs.Items))
		for i, c := range cs.Items {
			wg.Go(func() {
				if c.State == container.StateRunning {
					_, _ = cli.ContainerStop(ctx, c.ID, client.ContainerStopOptions{Timeout: &grace})
				}
				_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
				if err != nil && !cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "already in progress") {
					errs[i] = fmt.Errorf("remove task container %s: %w", shortID(c.ID), err)
				}
			})
		}
		wg.Wait()
		if try == 20 {
			return errors.Join(append(errs, fmt.Errorf("%d task containers are still there", len(cs.Items)))...)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// removeSecret removes the job's secret once no service uses it.
func removeSecret(ctx context.Context, cli *client.Client, id string) error {
	var err error
	for try := 0; try < 20; try++ {
		if _, err = cli.SecretRemove(ctx, id, client.SecretRemoveOptions{}); err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return err
}
