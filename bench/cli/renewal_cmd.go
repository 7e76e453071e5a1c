package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/renewal"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// renewalCheckCommand is `lockbench renewal-check`: the matrix of renewal
// cases × locks, each cell a few short runs with histories.
func renewalCheckCommand() *cli.Command {
	return &cli.Command{
		Name:  "renewal-check",
		Usage: "which lock tells its holder the lease is gone before the next write: renewal cases × every lock that renews",
		UsageText: "lockbench renewal-check [--cases all|A,B] [--locks all|A,B] [--trials N] [--parallel N] [--engine local|swarm|k8s] [--budget 8m] [--safety-level 0.1] [--resume]\n" +
			"      [--out DIR] [--html FILE] [--format table|json]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "cases", Value: "all", Usage: "the cases to run, a comma list (see the README's Renewal check)"},
			&cli.StringFlag{Name: "locks", Value: "all", Usage: "the locks to run them on, a comma list"},
			&cli.IntFlag{Name: "trials", Value: 3, Usage: "planned trials per cell (fault firings, three per run; or calls of a probe), 1 to 30"},
			parallelFlag("runs"),
			&cli.StringFlag{Name: "budget", Value: "8m", Usage: "wall time for the matrix: the planned trials, then more runs of undecided cells until decided or it ends; 0 runs the planned trials only"},
			&cli.StringFlag{Name: "safety-level", Value: "0.1", Usage: "a word of safety (caught, kept) needs the 95% upper bound on trials that wrote after losing the lease within this share, in (0,1)"},
			&cli.BoolFlag{Name: "resume", Usage: "reuse stored runs (in --out) of the same cells instead of running them again"},
			&cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory for result files and histories", EnvVars: []string{"LOCKBENCH_OUT"}},
			&cli.StringFlag{Name: "html", Usage: "also write the matrix as an HTML page to FILE, its cells linking to their runs"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines"},
			formatFlag(renewalOutput()),
			trialIndexFlag(),
		}, engineFlags()...),
		Action: func(c *cli.Context) (err error) {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("renewal-check takes no arguments, got %q", c.Args().First())}
			}
			engine, err := engineOf(c)
			if err != nil {
				return err
			}
			if err := engineRefusals(c, engine); err != nil {
				return err
			}
			if err := oneRunRefusals(c); err != nil {
				return err
			}
			format, err := checkFormat(c, renewalOutput())
			if err != nil {
				return err
			}
			cases, locks, err := renewal.Select(c.String("cases"), c.String("locks"), lockimpl.GoLocksIn(c.Context))
			if err != nil {
				return usageError{msg: err.Error()}
			}
			trials := c.Int("trials")
			if trials < 1 || trials > 30 {
				return usageError{msg: fmt.Sprintf("--trials %d: want a whole number from 1 to 30", trials)}
			}
			if engine != engineLocal {
				if err := renewalFitsImage(cases, locks, engine); err != nil {
					return err
				}
			}
			if engine == engineK8s {
				if _, err := verdict.ParseLevel("safety-level", c.String("safety-level")); err != nil {
					return usageError{msg: err.Error()}
				}
				return renewalK8sJob(c, cases, locks, trials)
			}
			opts, err := renewalOptions(c, cases, locks, trials)
			if err != nil {
				return err
			}
			if page := c.String("html"); page != "" {
				if st, err := os.Stat(filepath.Dir(page)); err != nil || !st.IsDir() {
					return usageError{msg: fmt.Sprintf("--html %s: no directory %s; want a file in one that exists", page, filepath.Dir(page))}
				}
			}
			out := c.String("out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
			store := storeRunner(c)
			run := func(ctx context.Context, v plan.Values) (*results.Result, error) {
				v.Set("out", out)
				v.Set("history", filepath.Clean(out)+"/")
				return store(ctx, v, "", 0)
			}
			if c.IsSet("trial-index") {
				return renewalOneRun(c, cases, locks, trials, run)
			}
			if c.Bool("resume") {
				if opts.Stored, err = storedForResume(c, "renewal-check", out, "run"); err != nil {
					return err
				}
			}
			if !c.Bool("quiet") {
				opts.Progress = budgetProgress(c, "runs")
			}
			if engine == engineSwarm {
				var leave func() error
				if run, leave, err = swarmTrialRunner(c, out, "", true); err != nil {
					return err
				}
				defer func() { err = errors.Join(err, leave()) }()
			}
			m, err := renewal.Run(c.Context, cases, locks, opts, run)
			if err != nil {
				return err
			}
			if !c.Bool("quiet") && isTerminal(c.App.ErrWriter) {
				fmt.Fprintln(c.App.ErrWriter)
			}
			if page := c.String("html"); page != "" {
				if err := writeRenewalPage(page, m, out); err != nil {
					return err
				}
			}
			if err := renewalOutput().Write(c.App.Writer, format, m); err != nil {
				return err
			}
			if m.Interrupted {
				return fmt.Errorf("interrupted: the matrix shows what was measured; lockbench renewal-check --resume with the same flags and --out goes on")
			}
			return nil
		},
	}
}

// renewalOptions reads --budget and --safety-level: a budget that cannot
// hold one run of the matrix's longest cell is refused.
func renewalOptions(c *cli.Context, cases []renewal.Case, locks []renewal.Lock, trials int) (renewal.Options, error) {
	o := renewal.Options{Trials: trials}
	var err error
	if o.Level, o.Parallel, err = trialSettings(c); err != nil {
		return o, err
	}
	if s := c.String("budget"); s != "0" {
		if o.Budget, err = advise.ParseBudget(s); err != nil {
			return o, err
		}
		var longest time.Duration
		for _, cs := range cases {
			for _, l := range locks {
				if ok, _ := cs.Applies(l); ok {
					longest = max(longest, renewal.RunEstimate(cs, l))
				}
			}
		}
		if o.Budget < longest {
			return o, usageError{msg: fmt.Sprintf("--budget %v: too short for one trial (a run takes about %v); want at least that, or 0 (planned trials only)",
				o.Budget, longest.Round(time.Second))}
		}
	}
	return o, nil
}

// renewalOutput is renewal-check's matrix in each format it offers (the
// HTML page is --html's, beside it).
func renewalOutput() results.Output[renewal.Matrix] {
	return results.Output[renewal.Matrix]{Table: renewal.WriteMatrix, JSON: renewal.WriteMatrixJSON}
}

// writeRenewalPage writes the HTML page, its links relative to the page.
func writeRenewalPage(path string, m renewal.Matrix, out string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := renewal.WriteMatrixHTML(f, m, out, filepath.Dir(path)); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
