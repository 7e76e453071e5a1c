package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/renewal"
	"github.com/lockbench/lockbench/results"
)

// renewalCheckCommand is `lockbench renewal-check`: the matrix of renewal
// cases × locks, each cell a few short runs with histories.
func renewalCheckCommand() *cli.Command {
	return &cli.Command{
		Name:      "renewal-check",
		Usage:     "which lock tells its holder the lease is gone before the next write: renewal cases × every lock that renews",
		UsageText: "lockbench renewal-check [--cases all|A,B] [--locks all|A,B] [--trials N] [--out DIR] [--html FILE] [--format table|json]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cases", Value: "all", Usage: "the cases to run, a comma list (see the README's Renewal check)"},
			&cli.StringFlag{Name: "locks", Value: "all", Usage: "the locks to run them on, a comma list"},
			&cli.IntFlag{Name: "trials", Value: 3, Usage: "trials per cell (fault firings, three per run; or calls of a probe), 1 to 30"},
			&cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory for result files and histories", EnvVars: []string{"LOCKBENCH_OUT"}},
			&cli.StringFlag{Name: "html", Usage: "also write the matrix as an HTML page to FILE, its cells linking to their runs"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines"},
			formatFlag(renewalOutput()),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("renewal-check takes no arguments, got %q", c.Args().First())}
			}
			format, err := checkFormat(c, renewalOutput())
			if err != nil {
				return err
			}
			cases, locks, err := renewal.Select(c.String("cases"), c.String("locks"))
			if err != nil {
				return usageError{msg: err.Error()}
			}
			trials := c.Int("trials")
			if trials < 1 || trials > 30 {
				return usageError{msg: fmt.Sprintf("--trials %d: want a whole number from 1 to 30", trials)}
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
			var progress renewal.Progress
			if !c.Bool("quiet") {
				progress = func(done, total int, label string) {
					fmt.Fprintf(c.App.ErrWriter, "renewal-check: run %d/%d, %s\n", done+1, total, label)
				}
			}
			store := storeRunner(c)
			run := func(ctx context.Context, v plan.Values) (*results.Result, error) {
				v.Set("out", out)
				v.Set("history", filepath.Clean(out)+"/")
				return store(ctx, v, "", 0)
			}
			m, err := renewal.Run(c.Context, cases, locks, trials, run, progress)
			if err != nil {
				return err
			}
			if page := c.String("html"); page != "" {
				if err := writeRenewalPage(page, m, out); err != nil {
					return err
				}
			}
			return renewalOutput().Write(c.App.Writer, format, m)
		},
	}
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
