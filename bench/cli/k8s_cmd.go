package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/k8s"
	"github.com/lockbench/lockbench/bench/plan"
)

func k8sCommand() *cli.Command {
	return &cli.Command{
		Name:  "k8s",
		Usage: "run many generators as one run on Kubernetes",
		Subcommands: []*cli.Command{{
			Name:      "job",
			Usage:     "print an Indexed Job of N generators of one run (kubectl apply -f -)",
			ArgsUsage: "-- RUN FLAGS",
			UsageText: "lockbench k8s job --generators 8 [--image IMG] [--name NAME] [--start-in 60s] -- --redis redis://redis:6379 --keys 1 -c 16 -d 60s",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "generators", Value: 3, Usage: "pods, one generator each"},
				&cli.StringFlag{Name: "image", Value: k8s.DefaultImage, Usage: "lockbench image (see compose/k8s/Dockerfile)"},
				&cli.StringFlag{Name: "name", Value: "lockbench", Usage: "the job's name"},
				&cli.StringFlag{Name: "run-id", Usage: "the run's id (default: a new one)"},
				&cli.StringFlag{Name: "env-secret", Usage: "Secret whose keys become the pods' environment, for URLs with passwords (LOCKBENCH_REDIS=…)"},
				&cli.DurationFlag{Name: "start-in", Value: time.Minute, Usage: "how long after now the generators start together (time for the pods to be scheduled)"},
			},
			Action: func(c *cli.Context) error {
				runFlags := c.Args().Slice()
				runID := c.String("run-id")
				if runID == "" {
					runID = plan.NewRunID()
				}
				if c.Duration("start-in") < 0 {
					return usageError{msg: "--start-in: want a duration of 0 or more"}
				}
				spec := job.Spec{Name: c.String("name"), RunID: runID, Generators: c.Int("generators"), Image: c.String("image"),
					StartAt: time.Now().Add(c.Duration("start-in")), RunFlags: runFlags}
				if err := spec.Validate(); err != nil {
					return usageError{msg: err.Error()}
				}
				// The run flags must make a run: checked here, not in a pod.
				if err := checkRunFlags(c, jobRunCheck(spec)); err != nil {
					return err
				}
				return k8s.WriteJob(c.App.Writer, spec, c.String("env-secret"))
			},
		}},
	}
}

// jobRunCheck is the command line a job's run flags are checked as: the
// user's flags with those of the job's own that change what the user's may
// be (the --metrics-addr every generator gets unless the job has none,
// which --metrics-linger needs).
func jobRunCheck(spec job.Spec) []string {
	args := []string{"lockbench", "run", "--run-id", spec.RunID, "--generators", fmt.Sprint(spec.Generators)}
	if !spec.NoMetrics {
		args = append(args, "--metrics-addr", fmt.Sprintf(":%d", job.MetricsPort))
	}
	return append(args, spec.RunFlags...)
}

// checkRunFlags parses run flags as run would, without running.
func checkRunFlags(c *cli.Context, args []string) error {
	table := plan.RunFlags()
	var err error
	app := &cli.App{Name: "lockbench", Writer: c.App.ErrWriter, ErrWriter: c.App.ErrWriter, ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(rc *cli.Context, e error, _ bool) error {
			return usageError{msg: "run flags: " + usageMessage(rc, e)}
		},
		Before: refuseRepeatedFlags,
		Commands: []*cli.Command{{Name: "run", Flags: cliFlags(table), Action: func(rc *cli.Context) error {
			if rc.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("run flags: %q is not a flag", rc.Args().First())}
			}
			_, err = plan.Expand(givenValues(rc, table))
			return err
		}}}}
	if rerr := app.Run(args); rerr != nil {
		return rerr
	}
	return err
}

// resultsCollect reads generators' results from pod logs and stores them.
func resultsCollect(c *cli.Context) error {
	in := os.Stdin
	if path := c.String("logs"); path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return usageError{msg: fmt.Sprintf("--logs %s: %v", path, err)}
		}
		defer f.Close()
		in = f
	}
	rs, err := job.Collect(in)
	for _, r := range rs {
		path, werr := storeResult(c, c.String("out"), r)
		if werr != nil {
			return werr
		}
		fmt.Fprintln(c.App.Writer, path)
	}
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		return usageError{msg: "collect: no result between " + job.BeginMarker + " and " + job.EndMarker + " in the logs"}
	}
	return nil
}
