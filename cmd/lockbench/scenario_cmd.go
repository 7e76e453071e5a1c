package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// scenarioCommand has one subcommand per scenario, so that flags may follow
// the name (lockbench scenario failover --trials 5).
func scenarioCommand() *cli.Command {
	subs := []*cli.Command{{
		Name:  "list",
		Usage: "list the scenarios",
		Action: func(c *cli.Context) error {
			t := newPlainTable(c.App.Writer)
			for _, s := range scenario.All() {
				t.row(s.Name, s.Description)
			}
			return t.flush()
		},
	}}
	for _, s := range scenario.All() {
		subs = append(subs, scenarioSubcommand(s))
	}
	return &cli.Command{
		Name:        "scenario",
		Usage:       "reproduce a known failure mode and count how often it breaks mutual exclusion, with and without its mitigation",
		UsageText:   "lockbench scenario list\n   lockbench scenario NAME [--trials N] [--out DIR] [--lock LOCK [--peer-option KEY=VALUE]...]",
		Subcommands: subs,
	}
}

func scenarioSubcommand(s scenario.Scenario) *cli.Command {
	return &cli.Command{
		Name:  s.Name,
		Usage: s.Description,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "trials", Value: 5, Usage: "runs per variant"},
			&cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory for result files", EnvVars: []string{"LOCKBENCH_OUT"}},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines"},
			&cli.StringFlag{Name: "lock", Usage: "run the scenario's unmitigated variants (and those of its mitigations that are settings, not other locks) on this lock, e.g. redsync or redislock"},
			&cli.StringSliceFlag{Name: "peer-option", Usage: "with a peer --lock: its library setting, repeatable (as run takes it)"},
			&cli.StringFlag{Name: "provider", Usage: "where the servers come from: local (the default) or docker (containers; faults through the engine)"},
			&cli.StringFlag{Name: "history", Usage: "keep each trial's history: a DIR/ or a FILE with {id} in it (see lockbench check)"},
			&cli.StringFlag{Name: "image", Usage: "with --provider docker: the Redis image (default " + compose.DefaultImage + "; without a registry: lockbench image build, then " + compose.LocalImage + ")"},
			formatFlag(verdictOutput()),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("scenario %s takes no arguments, got %q", s.Name, c.Args().First())}
			}
			format, err := checkFormat(c, verdictOutput())
			if err != nil {
				return err
			}
			s, err := scenarioWithLock(c, s)
			if err != nil {
				return err
			}
			if !plan.HistoryPerRun(c.String("history")) {
				return plan.HistoryPerRunError("a scenario makes many runs")
			}
			trials := c.Int("trials")
			if trials < 1 || trials > 100 {
				return usageError{msg: fmt.Sprintf("--trials %d: want a whole number from 1 to 100", trials)}
			}
			var progress scenario.Progress
			if !c.Bool("quiet") {
				progress = func(variant string, trial, trials int) {
					fmt.Fprintf(c.App.ErrWriter, "scenario %s: %s, trial %d/%d\n", s.Name, variant, trial, trials)
				}
			}
			store := storeRunner(c)
			run := func(ctx context.Context, v plan.Values) (*results.Result, error) {
				v.Set("out", c.String("out"))
				for _, name := range []string{"provider", "image", "history"} {
					if c.IsSet(name) {
						v.Set(name, c.String(name))
					}
				}
				return store(ctx, v, "", 0)
			}
			v, err := scenario.Run(c.Context, s, trials, run, progress)
			if err != nil {
				return err
			}
			return verdictOutput().Write(c.App.Writer, format, v)
		},
	}
}

// verdictOutput is a scenario's verdict in each format it offers.
func verdictOutput() results.Output[scenario.Verdict] {
	return results.Output[scenario.Verdict]{Table: scenario.WriteVerdict, JSON: scenario.WriteVerdictJSON}
}

// scenarioWithLock is s on the --lock given, if any.
func scenarioWithLock(c *cli.Context, s scenario.Scenario) (scenario.Scenario, error) {
	switch {
	case c.IsSet("lock"):
		return s.WithLock(c.String("lock"), c.StringSlice("peer-option"))
	case c.IsSet("peer-option"):
		return s, usageError{msg: "--peer-option: tunes a peer library given with --lock (redsync, redislock); give --lock too"}
	}
	return s, nil
}
