package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/bench/verdict"
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
		UsageText:   "lockbench scenario list\n   lockbench scenario NAME [--trials N] [--parallel N] [--engine local|swarm|k8s] [--out DIR] [--lock LOCK [--peer-option KEY=VALUE]...]",
		Subcommands: subs,
	}
}

func scenarioSubcommand(s scenario.Scenario) *cli.Command {
	return &cli.Command{
		Name:  s.Name,
		Usage: s.Description,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "trials", Value: 5, Usage: "planned runs per variant"},
			parallelFlag("trials"),
			&cli.StringFlag{Name: "budget", Value: "0", Usage: "wall time for the planned trials and then more trials of undecided variants until decided or it ends, e.g. 10m; 0 runs the planned trials only"},
			&cli.StringFlag{Name: "safety-level", Value: "0.1", Usage: "the word safe needs the 95% upper bound on violating trials within this share, in (0,1)"},
			&cli.BoolFlag{Name: "resume", Usage: "reuse stored trials (in --out) of the same variants instead of running them again"},
			&cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory for result files", EnvVars: []string{"LOCKBENCH_OUT"}},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines"},
			&cli.StringFlag{Name: "lock", Usage: "run the scenario's unmitigated variants (and those of its mitigations that are settings, not other locks) on this lock, e.g. redsync or redislock"},
			&cli.StringSliceFlag{Name: "peer-option", Usage: "with a peer --lock: its library setting, repeatable (as run takes it)"},
			&cli.StringFlag{Name: "provider", Usage: "where the servers come from: local (the default) or docker (containers; faults through the engine)"},
			&cli.StringFlag{Name: "history", Usage: "keep each trial's history: a DIR/ or a FILE with {id} in it (see lockbench check)"},
			&cli.StringFlag{Name: "image", Usage: "with --provider docker: the Redis image (default " + compose.DefaultImage + "; without a registry: lockbench image build, then " + compose.LocalImage + ")"},
			formatFlag(verdictOutput()),
			trialIndexFlag(),
		}, engineFlags()...),
		Action: func(c *cli.Context) (err error) {
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
			engine, err := engineOf(c)
			if err != nil {
				return err
			}
			if err := engineRefusals(c, engine); err != nil {
				return err
			}
			if engine != engineLocal {
				if err := scenarioFitsImage(s, engine); err != nil {
					return err
				}
			}
			if engine == engineK8s {
				return scenarioK8sJob(c, s, trials)
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
			if c.IsSet("trial-index") {
				return scenarioOneTrial(c, s, trials, run)
			}
			opts, err := scenarioOptions(c, s, trials)
			if err != nil {
				return err
			}
			if engine == engineSwarm {
				var leave func() error
				if run, leave, err = swarmTrialRunner(c, c.String("out"), "", false); err != nil {
					return err
				}
				defer func() { err = errors.Join(err, leave()) }()
			}
			v, err := scenario.Run(c.Context, s, opts, run)
			if !c.Bool("quiet") && isTerminal(c.App.ErrWriter) {
				fmt.Fprintln(c.App.ErrWriter)
			}
			if err != nil && c.Context.Err() == nil {
				return err
			}
			if werr := verdictOutput().Write(c.App.Writer, format, v); werr != nil {
				return werr
			}
			if err != nil {
				return fmt.Errorf("interrupted: the verdict shows the trials that finished; lockbench scenario %s --resume with the same flags and --out goes on: %w", s.Name, err)
			}
			return nil
		},
	}
}

// scenarioOptions reads --budget, --safety-level and --resume. A budget
// shorter than one trial's window is refused.
func scenarioOptions(c *cli.Context, s scenario.Scenario, trials int) (scenario.Options, error) {
	o := scenario.Options{Trials: trials}
	var err error
	if o.Level, o.Parallel, err = trialSettings(c); err != nil {
		return o, err
	}
	if b := c.String("budget"); b != "0" {
		if o.Budget, err = advise.ParseBudget(b); err != nil {
			return o, err
		}
		if window := s.TrialWindow(); o.Budget < window {
			return o, usageError{msg: fmt.Sprintf("--budget %v: too short for one trial (its window alone is %v); want at least that, or 0 (planned trials only)",
				o.Budget, window)}
		}
	}
	if c.Bool("resume") {
		if o.Stored, err = storedForResume(c, "scenario "+s.Name, c.String("out"), "trial"); err != nil {
			return o, err
		}
	}
	if !c.Bool("quiet") {
		o.Progress = budgetProgress(c, "trials")
	}
	return o, nil
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

// trialSettings reads --safety-level and --parallel, which scenario and
// renewal-check read alike.
func trialSettings(c *cli.Context) (level float64, parallel int, err error) {
	if level, err = verdict.ParseLevel("safety-level", c.String("safety-level")); err != nil {
		return 0, 0, usageError{msg: err.Error()}
	}
	parallel, err = parallelOf(c)
	return level, parallel, err
}
