package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// resultsCollect reads generators' results from pod logs and stores them,
// with the histories the logs carry (renewal-check's pods print each run's
// beside its result): each written into --out beside its result, as a
// local run writes it, the stored result naming it.
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
	out := c.String("out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	got, err := job.CollectWith(in, historyInto(out))
	for _, r := range got.Results {
		hist := ""
		switch {
		case got.Histories[r.ID]:
			hist = collectedHistory(out, r.ID)
			r.History = hist
		case r.History != "":
			fmt.Fprintf(c.App.ErrWriter, "run %s: its history (%s) is not in the logs: it stayed where the run wrote it\n", r.ID, r.History)
		}
		path, werr := storeResult(c, out, r)
		if werr != nil {
			return errors.Join(werr, err)
		}
		fmt.Fprintln(c.App.Writer, path)
		if hist != "" {
			fmt.Fprintln(c.App.Writer, hist)
		}
	}
	if err != nil {
		return err
	}
	if len(got.Results) == 0 {
		return usageError{msg: "collect: no result between " + job.BeginMarker + " and " + job.EndMarker + " in the logs"}
	}
	return nil
}

// collectedHistory is where results collect writes run id's history: in
// out, named as a run names its history in a --history directory.
func collectedHistory(out, id string) string {
	return filepath.Join(out, id+".history.jsonl.gz")
}

// historyInto is the sink of results collect: each history into a
// temporary file in out, renamed to collectedHistory once kept (a
// history already there, from collecting the same logs before, is
// replaced), removed when dropped.
func historyInto(out string) job.HistorySink {
	return func(id string) (job.HistoryWriter, error) {
		f, err := os.CreateTemp(out, "."+id+".history-*")
		if err != nil {
			return nil, err
		}
		return &historyFile{f: f, dst: collectedHistory(out, id)}, nil
	}
}

// historyFile is one history being collected.
type historyFile struct {
	f   *os.File
	dst string
}

func (h *historyFile) Write(p []byte) (int, error) { return h.f.Write(p) }

// Keep closes the file and renames it into place, readable as a local
// run's history is.
func (h *historyFile) Keep() error {
	err := h.f.Chmod(0o644)
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(h.f.Name(), h.dst)
	}
	if err != nil {
		_ = os.Remove(h.f.Name())
	}
	return err
}

// Drop closes and removes the file.
func (h *historyFile) Drop() {
	_ = h.f.Close()
	_ = os.Remove(h.f.Name())
}
