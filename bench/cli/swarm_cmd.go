package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/swarm"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

func swarmCommand() *cli.Command {
	return &cli.Command{
		Name:  "swarm",
		Usage: "run many generators as one run on this machine's Docker engine (Swarm mode)",
		Subcommands: []*cli.Command{{
			Name: "job",
			Usage: "run N generators of one run as a Swarm replicated job, wait for them, and store their results and the merged one " +
				"(Swarm is initialised for the job if inactive, and left again)",
			ArgsUsage: "-- RUN FLAGS",
			UsageText: "lockbench swarm job --generators 4 [--image " + compose.LockbenchImage + "] [--network NAME|host] [--out DIR] -- --redis redis://redis:6379 --keys 1 -c 16 -d 60s",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "generators", Value: 3, Usage: "tasks, one generator each"},
				&cli.StringFlag{Name: "image", Value: compose.LockbenchImage, Usage: "lockbench image (lockbench image build lockbench makes it)"},
				&cli.StringFlag{Name: "name", Value: "lockbench", Usage: "the job's name (the service is NAME-RUNID)"},
				&cli.StringFlag{Name: "run-id", Usage: "the run's id (default: a new one)"},
				&cli.StringFlag{Name: "network", Usage: "network the tasks join: an attachable overlay network beside the servers, or host (a server on this machine's loopback is 127.0.0.1) (default: the engine's default bridge)"},
				&cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory for the generators' results and the merged one", EnvVars: []string{"LOCKBENCH_OUT"}},
				&cli.DurationFlag{Name: "start-in", Value: 15 * time.Second, Usage: "how long after now the generators start together (time for the tasks to be scheduled and started)"},
				&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "give up waiting for the tasks after this long (0: wait until interrupted)"},
			},
			Action: swarmJob,
		}},
	}
}

func swarmJob(c *cli.Context) error {
	runFlags := c.Args().Slice()
	runID := c.String("run-id")
	if runID == "" {
		runID = plan.NewRunID()
	}
	switch {
	case c.Duration("start-in") < 0:
		return usageError{msg: "--start-in: want a duration of 0 or more"}
	case c.Duration("timeout") < 0:
		return usageError{msg: "--timeout: want a duration of 0 (no bound) or more"}
	case c.IsSet("network") && c.String("network") == "":
		return usageError{msg: "--network: want a network name (an attachable overlay network) or host"}
	}
	spec := job.Spec{Name: c.String("name"), RunID: runID, Generators: c.Int("generators"), Image: c.String("image"),
		StartAt: time.Now().Add(c.Duration("start-in")), RunFlags: runFlags,
		// On the host's network stack the generators would all want one port.
		NoMetrics: c.String("network") == swarm.HostNetwork}
	// URLs with passwords go to the tasks through a Docker secret.
	spec, err := spec.MoveSecrets()
	if err == nil {
		err = spec.Validate()
	}
	if err != nil {
		return usageError{msg: err.Error()}
	}
	// The run flags must make a run: checked here, not in a task.
	if err := checkRunFlags(c, jobRunCheck(spec)); err != nil {
		return err
	}
	rs, err := swarm.Run(c.Context, swarm.Options{Spec: spec, Network: c.String("network"), Progress: c.App.ErrWriter, Timeout: c.Duration("timeout")})
	if len(rs) == 0 {
		return err
	}
	// Interrupted, the generators' partial results are stored and merged
	// (marked partial) before the interruption is reported, as run does.
	if serr := storeSwarmResults(c, rs); serr != nil {
		return errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("%w; partial results of %d of %d generators stored", err, len(rs), spec.Generators)
	}
	return nil
}

// storeSwarmResults stores each generator's result and, of several, the
// merged one, whose tables it prints.
func storeSwarmResults(c *cli.Context, rs []*results.Result) error {
	out := c.String("out")
	for _, r := range rs {
		path, err := results.Write(out, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "stored %s\n", path)
	}
	merged := rs[0]
	if len(rs) == 1 {
		storedOf(c).add(out, merged)
	} else {
		var err error
		if merged, err = results.Merge(rs); err != nil {
			return fmt.Errorf("merge the generators' results: %w", err)
		}
		merged.Partial = merged.Partial || c.Context.Err() != nil
		path, err := storeResult(c, out, merged)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "merged %d generators into %s\n", len(rs), path)
	}
	return results.WriteSummary(c.App.Writer, merged)
}

// applyJobEnvironment sets what an engine gave a generator (a Docker
// secret's variables, a Swarm task's slot) as the LOCKBENCH_* variables
// the flags read, before any command parses them.
func applyJobEnvironment(*cli.Context) error {
	if err := job.ApplyEnvironment(job.ProcessEnvironment()); err != nil {
		return usageError{msg: err.Error()}
	}
	return nil
}
