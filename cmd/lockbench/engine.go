package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/k8s"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/bench/swarm"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// The engines a command of trials runs its trials on.
const (
	engineLocal = "local"
	engineSwarm = "swarm"
	engineK8s   = "k8s"
)

// engineFlag is --engine of a command whose trials run on this machine
// only so far (a new flag each call: urfave/cli keeps what a parse set on
// the flag).
func engineFlag() cli.Flag {
	return &cli.StringFlag{Name: "engine", Value: engineLocal, Usage: "where the trials run: local only so far (swarm and k8s are scenario's)"}
}

// engineFlags are --engine and --engine-image, of the commands that run
// trials on an engine.
func engineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "engine", Value: engineLocal, Usage: "where the trials run: local (this machine, --parallel at once), " +
			"swarm (each trial a Swarm task with its servers inside, on this machine's Docker engine; --parallel tasks at once) " +
			"or k8s (print the Indexed Job of the trials, one per index, --parallel pods at once)"},
		&cli.StringFlag{Name: "engine-image", Value: compose.TrialImage, Usage: "with --engine swarm or k8s: the image of lockbench and the trials' servers (lockbench image build trial makes it)"},
	}
}

// engineOf reads --engine: an unknown engine, or --engine-image without an
// engine that runs images, is bad input. only lists the engines the
// command runs (a refusal names the others).
func engineOf(c *cli.Context, command string, only ...string) (string, error) {
	e := c.String("engine")
	switch e {
	case engineLocal, engineSwarm, engineK8s:
	default:
		return "", usageError{msg: fmt.Sprintf("--engine %q: want local, swarm or k8s", e)}
	}
	if len(only) > 0 && !slices.Contains(only, e) {
		return "", usageError{msg: fmt.Sprintf("--engine %s: %s runs its trials on %v only, so far", e, command, only)}
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
		why["budget"] = "the job runs the planned trials only; run the verdict's undecided variants again with more --trials"
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
		flags := s.TrialFlags(i, 1)
		if why := compose.TrialImageMisfit(flags.Get("topology"), flags["fault"]); why != "" {
			return usageError{msg: fmt.Sprintf("scenario %s --engine %s: variant %q: %s; run it with --engine local", s.Name, engine, v.Name, why)}
		}
	}
	return nil
}

// swarmTrialRunner opens the Swarm trials of a command (the engine must
// answer and have the image) and returns the runner that runs one trial as
// a task and stores its result in out, as the local runner stores its own,
// with the closer that leaves Swarm as it was found.
func swarmTrialRunner(c *cli.Context, out string) (scenario.Runner, func() error, error) {
	self, _ := os.Executable()
	trials, err := swarm.OpenTrials(c.Context, swarm.TrialsOptions{Image: c.String("engine-image"), RunID: plan.NewRunID(),
		ImageNextStep: compose.TrialImageNextStep(self), Progress: c.App.ErrWriter})
	if err != nil {
		return nil, nil, err
	}
	run := func(ctx context.Context, v plan.Values) (*results.Result, error) {
		v = v.Clone()
		// The task's own: where it stores, and quiet (swarm.TrialArgs).
		for _, name := range []string{"out", "history", "provider", "image", "quiet", "format"} {
			delete(v, name)
		}
		r, err := trials.Run(ctx, v.Args())
		if err != nil {
			return nil, err
		}
		if _, err := storeResult(c, out, r); err != nil {
			return nil, err
		}
		return r, nil
	}
	return run, func() error { return trials.Close(c.Context) }, nil
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
