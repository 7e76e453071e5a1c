package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/k8s"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/renewal"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/bench/swarm"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// The engines a command of trials runs its trials on.
const (
	engineLocal = "local"
	engineSwarm = "swarm"
	engineK8s   = "k8s"
)

// engineFlags are --engine and --engine-image of scenario and
// renewal-check, whose trials run on every engine.
func engineFlags() []cli.Flag {
	return engineFlagsWith("where the trials run: local (this machine, --parallel at once), " +
		"swarm (each trial a Swarm task with its servers inside, on this machine's Docker engine; --parallel tasks at once) " +
		"or k8s (print the Indexed Job of the trials, one per index, --parallel pods at once)")
}

// failoverEngineFlags are failover-map's --engine and --engine-image: on an
// engine each failover is a task (or pod) on a fresh topology of its own.
func failoverEngineFlags() []cli.Flag {
	return engineFlagsWith("where the failovers run: local (this machine, --parallel at once), " +
		"swarm (each failover a Swarm task with its servers inside, on this machine's Docker engine, on a fresh topology: --fresh; --parallel tasks at once) " +
		"or k8s (print the Indexed Job of the planned failovers, one per index, --parallel pods at once)")
}

func engineFlagsWith(usage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "engine", Value: engineLocal, Usage: usage},
		&cli.StringFlag{Name: "engine-image", Value: compose.TrialImage, Usage: "with an --engine other than local: the image of lockbench and the trials' servers (lockbench image build trial makes it)"},
	}
}

// engineOf reads --engine: an unknown engine, or --engine-image without an
// engine that runs images, is bad input.
func engineOf(c *cli.Context) (string, error) {
	e := c.String("engine")
	switch e {
	case engineLocal, engineSwarm, engineK8s:
	default:
		return "", usageError{msg: fmt.Sprintf("--engine %q: want local, swarm or k8s", e)}
	}
	if e == engineLocal && c.IsSet("engine-image") {
		return "", usageError{msg: "--engine-image: the image of --engine swarm or k8s; give --engine too"}
	}
	return e, nil
}

// engineRefusals refuses the flags an engine cannot honour, naming why.
func engineRefusals(c *cli.Context, engine string) error {
	if engine == engineLocal {
		return nil
	}
	why := map[string]string{
		"provider": "the trials' servers start inside each " + engineUnit(engine) + ", as local processes",
		"history":  "a trial's history would stay inside its " + engineUnit(engine),
		"image":    "the trials' servers are those of --engine-image",
	}
	if engine == engineK8s {
		why["budget"] = "the job runs the planned trials only, with no more within a budget; collect them, and --resume without --engine runs more where undecided"
		why["resume"] = "the job's trials are collected and resumed afterwards (lockbench results collect, then --resume without --engine)"
	}
	for _, name := range []string{"provider", "history", "image", "budget", "resume"} {
		if w, ok := why[name]; ok && c.IsSet(name) {
			return usageError{msg: fmt.Sprintf("--%s with --engine %s: %s", name, engine, w)}
		}
	}
	return nil
}

func engineUnit(engine string) string {
	if engine == engineK8s {
		return "pod"
	}
	return "task"
}

// scenarioFitsImage refuses a scenario (on the --lock given) whose trials
// need servers or tools the trial image does not carry: the first variant
// that does not fit, named, in one line.
func scenarioFitsImage(s scenario.Scenario, engine string) error {
	for i, v := range s.Variants {
		if why := trialMisfit(s.TrialFlags(i, 1)); why != "" {
			return usageError{msg: fmt.Sprintf("scenario %s --engine %s: variant %q: %s; run it with --engine local", s.Name, engine, v.Name, why)}
		}
	}
	return nil
}

// trialMisfit says why a run of flags cannot run in the trial image, ""
// when it can: its servers or tools (compose.TrialImageMisfit), or its
// lock. A driver's program and a definition file are on this machine, not
// in the image; a go: lock is in it when the image was built from this
// program (lockbench image build trial copies the running executable).
func trialMisfit(flags plan.Values) string {
	if why := compose.TrialImageMisfit(flags.Get("topology"), flags["fault"]); why != "" {
		return why
	}
	lock := flags.Get("lock")
	switch {
	case flags.Get("lock-def") != "" || strings.HasPrefix(lock, lockimpl.DefPrefix):
		return "its lock definition is a file of this machine, which the trial image does not carry"
	case strings.HasPrefix(lock, lockimpl.DriverPrefix):
		return "its lock's driver is a program of this machine, which the trial image does not carry"
	}
	return ""
}

// renewalFitsImage refuses a matrix with a cell whose runs need servers or
// tools the trial image does not carry, naming the first such cell and the
// locks whose cells fit.
func renewalFitsImage(cases []renewal.Case, locks []renewal.Lock, engine string) error {
	var fit []string
	first := ""
	for _, l := range locks {
		ok := l.Absent == ""
		for _, cs := range cases {
			if applies, _ := cs.Applies(l); !applies || l.Absent != "" {
				continue
			}
			// A probe calls the lock from this process, on this
			// machine: only runs go to the engine.
			flags := cs.Flags(l)
			if flags == nil {
				continue
			}
			if why := trialMisfit(flags); why != "" {
				ok = false
				if first == "" {
					first = fmt.Sprintf("renewal-check --engine %s: %s on %s: %s", engine, cs.Name, l.Name, why)
				}
			}
		}
		if ok {
			fit = append(fit, l.Name)
		}
	}
	if first == "" {
		return nil
	}
	if len(fit) == 0 {
		return usageError{msg: first + "; run it with --engine local"}
	}
	return usageError{msg: fmt.Sprintf("%s; choose --locks among %s, or run it with --engine local", first, strings.Join(fit, ","))}
}

// swarmTrialRunner opens the Swarm trials of a command (the engine must
// answer and have the image) and returns the runner that runs one trial as
// a task and stores its result in out, as the local runner stores its own,
// with the closer that leaves Swarm as it was found. With history, each
// task writes its run's history into a directory of this machine bound
// into it, and the history is copied into out beside the result, where the
// local runner writes it (renewal-check reads it there). group, when set,
// is recorded in each result's configuration as a local run of the group
// records it.
func swarmTrialRunner(c *cli.Context, out, group string, history bool) (scenario.Runner, func() error, error) {
	self, _ := os.Executable()
	trials, err := swarm.OpenTrials(c.Context, swarm.TrialsOptions{Image: c.String("engine-image"), RunID: plan.NewRunID(),
		ImageNextStep: compose.TrialImageNextStep(self), Progress: c.App.ErrWriter})
	if err != nil {
		return nil, nil, err
	}
	run := func(ctx context.Context, v plan.Values) (r *results.Result, err error) {
		v = v.Clone()
		// The task's own: where it stores, and quiet (swarm.TrialArgs).
		for _, name := range []string{"out", "history", "provider", "image", "quiet", "format"} {
			delete(v, name)
		}
		if history {
			r, err = runKeepingHistory(ctx, trials, v, out)
		} else {
			r, err = trials.Run(ctx, v.Args())
		}
		if err != nil {
			return nil, err
		}
		if group != "" {
			// As a local run of the group records it (plan.Env.Group):
			// the task's run has no such flag.
			if r.Config == nil {
				r.Config = map[string]any{}
			}
			r.Config["group"] = group
		}
		if _, err := storeResult(c, out, r); err != nil {
			return nil, err
		}
		return r, nil
	}
	return run, func() error { return trials.Close(c.Context) }, nil
}

// taskHistoryDir is where a task sees the directory of this machine it
// writes its run's history into.
const taskHistoryDir = "/history"

// runKeepingHistory runs v as a task with a temporary directory of this
// machine bound at taskHistoryDir, and copies the history the run wrote
// there into out, the result then naming that copy. The directory is
// removed on every path (the task is gone by then: Trials.Run removes it
// before returning).
func runKeepingHistory(ctx context.Context, trials *swarm.Trials, v plan.Values, out string) (*results.Result, error) {
	dir, err := os.MkdirTemp("", "lockbench-history-")
	if err != nil {
		return nil, fmt.Errorf("a directory for the task's history: %w", err)
	}
	defer os.RemoveAll(dir)
	// The task runs as nobody (compose.BuildTrialImage): it must be able
	// to write here.
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, fmt.Errorf("a directory for the task's history: %w", err)
	}
	v.Set("history", taskHistoryDir+"/")
	r, err := trials.Run(ctx, v.Args(), swarm.TrialMount{Source: dir, Target: taskHistoryDir})
	if err != nil {
		return nil, err
	}
	if err := fetchTaskHistory(r, dir, out); err != nil {
		return nil, err
	}
	return r, nil
}

// fetchTaskHistory copies the history r names in the task (a file in
// taskHistoryDir) from dir, where that directory is on this machine, into
// out, and makes r name the copy. A result naming no history, or one
// elsewhere in the task, is an error: the matrix needs the file.
func fetchTaskHistory(r *results.Result, dir, out string) error {
	if r.History == "" || filepath.Dir(r.History) != taskHistoryDir {
		return fmt.Errorf("run %s: its history is %q, want a file in %s", r.ID, r.History, taskHistoryDir)
	}
	dst := filepath.Join(out, filepath.Base(r.History))
	if err := copyFile(filepath.Join(dir, filepath.Base(r.History)), dst); err != nil {
		return fmt.Errorf("run %s: the task's history: %w", r.ID, err)
	}
	r.History = dst
	return nil
}

// copyFile copies src to a new file dst, owned by this process's user
// (the task's file is nobody's).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		_ = o.Close()
		_ = os.Remove(dst)
		return err
	}
	return o.Close()
}

// scenarioK8sJob prints the Indexed Job of the scenario's planned trials:
// index k runs the trial Run would run k-th (lockbench scenario NAME
// --trial-index k, k the pod's completion index), stores it in the pod and prints it between the markers.
func scenarioK8sJob(c *cli.Context, s scenario.Scenario, trials int) error {
	parallel := c.Int("parallel")
	if parallel < 1 {
		return usageError{msg: fmt.Sprintf("--parallel %d: want 1 or more pods at once", parallel)}
	}
	args := []string{"scenario", s.Name, "--trials", strconv.Itoa(trials)}
	if c.IsSet("safety-level") {
		args = append(args, "--safety-level", c.String("safety-level"))
	}
	if c.IsSet("lock") {
		args = append(args, "--lock", c.String("lock"))
	}
	for _, o := range c.StringSlice("peer-option") {
		args = append(args, "--peer-option", o)
	}
	args = append(args, "--out", job.ResultsDir, "-q")
	runID := plan.NewRunID()
	return k8s.WriteTrialJob(c.App.Writer, k8s.TrialJobSpec{Name: "lockbench-" + s.Name, RunID: runID, Image: c.String("engine-image"),
		Args: args, Trials: s.PlannedTrials(trials), Parallel: parallel})
}

// trialIndexFlag is the hidden --trial-index of a pod of the k8s engine.
func trialIndexFlag() cli.Flag {
	// No environment variable: a variable left in a user's shell must not
	// turn a scenario into one trial (the pod passes its index as an
	// argument, k8s.CompletionIndexArg).
	return &cli.IntFlag{Name: "trial-index", Hidden: true,
		Usage: "run only planned trial K (from 0) and print its result between the markers (a pod of --engine k8s)"}
}

// scenarioOneTrial runs planned trial k of the scenario (a pod's index),
// stores it and prints it between the markers for results collect.
func scenarioOneTrial(c *cli.Context, s scenario.Scenario, trials int, run scenario.Runner) error {
	for _, name := range []string{"budget", "resume", "engine"} {
		if c.IsSet(name) {
			return usageError{msg: fmt.Sprintf("--trial-index runs one planned trial; --%s does not apply", name)}
		}
	}
	variant, n, err := s.PlannedTrial(trials, c.Int("trial-index"))
	if err != nil {
		return usageError{msg: fmt.Sprintf("--trial-index: %v", err)}
	}
	r, err := run(c.Context, s.TrialFlags(variant, n))
	if err != nil {
		return err
	}
	return job.WriteMarked(c.App.Writer, r)
}

// renewalK8sJob prints the Indexed Job of the matrix's planned runs: index
// k runs renewal.PlannedRuns' k-th (lockbench renewal-check with the same
// cases, locks and trials, --trial-index k), which prints its result and
// its history for results collect; the probes run at --resume, from the
// process that gives the matrix.
func renewalK8sJob(c *cli.Context, cases []renewal.Case, locks []renewal.Lock, trials int) error {
	parallel := c.Int("parallel")
	if parallel < 1 {
		return usageError{msg: fmt.Sprintf("--parallel %d: want 1 or more pods at once", parallel)}
	}
	if c.IsSet("html") {
		return usageError{msg: "--html with --engine k8s: the job prints no matrix; give --html to the --resume that folds the collected runs"}
	}
	runs := renewal.PlannedRuns(cases, locks, trials)
	if len(runs) == 0 {
		return usageError{msg: "--engine k8s: no run to put in a job (the cells are probes, which call the lock from here, or n/a); run it with --engine local"}
	}
	args := append(renewalPodArgs(c, trials), "--out", job.ResultsDir, "-q")
	return k8s.WriteTrialJob(c.App.Writer, k8s.TrialJobSpec{Name: "lockbench-renewal-check", RunID: plan.NewRunID(), Image: c.String("engine-image"),
		Args: args, Trials: len(runs), Parallel: parallel})
}

// renewalPodArgs is the matrix a pod plans its index from: the cases,
// locks and trials as given (the pod's lockbench is the image's, so a
// default is written out rather than left to it).
func renewalPodArgs(c *cli.Context, trials int) []string {
	return []string{"renewal-check", "--cases", c.String("cases"), "--locks", c.String("locks"), "--trials", strconv.Itoa(trials)}
}

// oneRunRefusals refuses, with renewal-check's --trial-index (a pod's
// command), the flags of a whole matrix, before anything is planned.
func oneRunRefusals(c *cli.Context) error {
	if !c.IsSet("trial-index") {
		return nil
	}
	for _, name := range []string{"budget", "resume", "engine", "html"} {
		if c.IsSet(name) {
			return usageError{msg: fmt.Sprintf("--trial-index runs one planned run; --%s does not apply", name)}
		}
	}
	return nil
}

// renewalOneRun runs planned run k of the matrix (a pod's index) with its
// history, stores both in --out, and prints the result between the
// markers and the history between its own, for results collect.
func renewalOneRun(c *cli.Context, cases []renewal.Case, locks []renewal.Lock, trials int, run renewal.Runner) error {
	runs := renewal.PlannedRuns(cases, locks, trials)
	k := c.Int("trial-index")
	if k < 0 || k >= len(runs) {
		return usageError{msg: fmt.Sprintf("--trial-index %d: want 0 to %d (the matrix's planned runs, probes not among them)", k, len(runs)-1)}
	}
	r, err := run(c.Context, runs[k].Values())
	if err != nil {
		return fmt.Errorf("renewal-check %s on %s, run %d: %w", runs[k].Case.Name, runs[k].Lock.Name, runs[k].N, err)
	}
	if !strings.HasSuffix(r.History, ".gz") {
		return fmt.Errorf("run %s: its history is %q, want a gzip'd file (a --history directory's)", r.ID, r.History)
	}
	f, err := os.Open(r.History)
	if err != nil {
		return fmt.Errorf("run %s: its history: %w", r.ID, err)
	}
	defer f.Close()
	if err := job.WriteMarked(c.App.Writer, r); err != nil {
		return err
	}
	return job.WriteMarkedHistory(c.App.Writer, r.ID, f)
}
