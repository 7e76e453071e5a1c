package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// envVar is the LOCKBENCH_* variable that mirrors a flag.
func envVar(name string) string {
	return "LOCKBENCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// cliFlags turns plan's flag table into urfave flags. Values are taken as
// strings and parsed by plan, so every bad value gets the same kind of message.
func cliFlags(table []plan.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range table {
		out = append(out, cliFlag(f, false))
	}
	return out
}

// cliFlag is one run flag as urfave takes it; a hidden one is left out of
// help (a flag the command refuses, so that it is refused with its reason
// rather than as unknown).
func cliFlag(f plan.Flag, hidden bool) cli.Flag {
	env := []string{envVar(f.Name)}
	usage := f.Usage
	if s := f.ScopeText(); s != "" {
		usage += " [" + s + "]"
	}
	switch {
	case f.Bool:
		return &cli.BoolFlag{Name: f.Name, Aliases: f.Aliases, Usage: usage, EnvVars: env, Category: f.Category, Hidden: hidden}
	case f.Multi:
		return &cli.StringSliceFlag{Name: f.Name, Aliases: f.Aliases, Usage: usage, EnvVars: env, Category: f.Category,
			Value: defaultSlice(f.Default), Hidden: hidden}
	}
	return &cli.GenericFlag{Name: f.Name, Aliases: f.Aliases, Usage: usage, EnvVars: env, Category: f.Category,
		Value: &onceValue{name: f.Name, value: f.Default}, Hidden: hidden}
}

// runFlagsOf are the run flags command takes (table, for givenValues), its
// urfave flags, and the flags it refuses with why: those are defined but
// hidden, and refuseSet names the reason when one is given.
func runFlagsOf(command string) (table []plan.Flag, flags []cli.Flag, refused map[string]string) {
	table, refused = plan.CommandFlags(command)
	flags = cliFlags(table)
	for _, f := range plan.RunFlags() {
		if _, ok := refused[f.Name]; ok {
			flags = append(flags, cliFlag(f, true))
		}
	}
	return table, flags, refused
}

// onceValue is a single-valued run flag, kept as the string plan parses. A
// second value on the command line is refused for every command by
// refuseRepeatedFlags; here a command-line value replaces one from the
// environment.
type onceValue struct {
	name, value string
}

// Set takes the flag's value.
func (o *onceValue) Set(v string) error {
	o.value = v
	return nil
}

// String is the value.
func (o *onceValue) String() string { return o.value }

// stringFlag reads a single-valued run flag.
func stringFlag(c *cli.Context, name string) string {
	if v, ok := c.Generic(name).(*onceValue); ok {
		return v.value
	}
	return c.String(name)
}

func defaultSlice(d string) *cli.StringSlice {
	if d == "" {
		return nil
	}
	return cli.NewStringSlice(d)
}

// givenValues collects the flags the user set (on the command line or in the
// environment); plan fills presets and defaults under them.
func givenValues(c *cli.Context, table []plan.Flag) plan.Values {
	v := plan.Values{}
	for _, f := range table {
		if !c.IsSet(f.Name) {
			continue
		}
		switch {
		case f.Bool:
			v.Set(f.Name, fmt.Sprint(c.Bool(f.Name)))
		case f.Multi:
			v.Set(f.Name, c.StringSlice(f.Name)...)
		default:
			v.Set(f.Name, stringFlag(c, f.Name))
		}
	}
	return v
}

func runCommand() *cli.Command {
	table, flags, _ := runFlagsOf("run")
	return &cli.Command{
		Name:      "run",
		Usage:     "run a lock benchmark and store its result",
		UsageText: "lockbench run [flags]   (no flags: 10 s on a local single-instance redis-server)",
		Flags: append(flags,
			&cli.IntFlag{Name: "count", Value: 1, Usage: "run each configuration this many times (repeats form a group for results show/compare)", EnvVars: []string{envVar("count")}, Category: "output"},
			&cli.StringFlag{Name: "report", Usage: "also write the HTML report of this run to FILE", EnvVars: []string{envVar("report")}, Category: "output"},
			&cli.StringSliceFlag{Name: "assert", Usage: "threshold to check, e.g. 'acquire.p99<10ms' or 'incidents.overlaps==0'; a failure exits 3", EnvVars: []string{envVar("assert")}, Category: "output"},
			columnsFlag,
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("run takes no arguments, got %q; flags start with --", c.Args().First())}
			}
			if err := plan.CheckRepeats(c.Int("count")); err != nil {
				return err
			}
			asserts, err := parseAsserts(c.StringSlice("assert"))
			if err != nil {
				return err
			}
			plans, err := plan.Expand(givenValues(c, table))
			if err != nil {
				return err
			}
			if runs := len(plans) * c.Int("count"); runs > 1 && !plan.HistoryPerRun(plans[0].History) {
				return plan.HistoryPerRunError(fmt.Sprintf("%d runs", runs))
			}
			columns, err := viewColumns(c, results.SideBySideView(), plans[0].Format)
			if err != nil {
				return err
			}
			done, err := runPlans(c, plans, c.Int("count"), columns)
			if err != nil {
				return err
			}
			if path := c.String("report"); path != "" {
				extras := results.ReportExtras{Checks: results.CheckAll(asserts, done)}
				if err := writeReportWith(c, path, done, extras); err != nil {
					return err
				}
			}
			return checkAsserts(c, asserts, done)
		},
	}
}

func runPlans(c *cli.Context, plans []plan.Plan, count int, columns []string) ([]*results.Result, error) {
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	batch := plan.Batch{Build: buildVersion(c), Log: stderr, Warn: stderr}
	if isTerminal(stderr) {
		batch.Progress = stderr
	}
	done, err := batch.Run(c.Context, plans, count)
	if errors.Is(err, plan.ErrInterrupted) && len(done) > 0 {
		// Runs that finished before the interruption are still shown.
		if perr := printResults(stdout, plans[0].Format, done, columns); perr != nil {
			return nil, perr
		}
		return nil, fmt.Errorf("%w (%s stored)", err, results.Count(int64(len(done)), "finished run above was|finished runs above were"))
	}
	if err != nil {
		return nil, err
	}
	if err := printResults(stdout, plans[0].Format, done, columns); err != nil {
		return nil, err
	}
	if c.Context.Err() != nil {
		return nil, errors.New("interrupted; partial result stored")
	}
	if !plans[0].Quiet {
		writeNext(stderr, nextAfterRuns(plans[0].OutDir, done, c.String("report") != "")...)
	}
	return done, nil
}

func parseAsserts(exprs []string) ([]results.Assertion, error) {
	var out []results.Assertion
	for _, e := range exprs {
		a, err := results.ParseAssertion(e)
		if err != nil {
			return nil, usageError{msg: "--assert: " + err.Error()}
		}
		out = append(out, a)
	}
	return out, nil
}

// checkAsserts prints the verdicts and fails with exit code 3 if any failed.
func checkAsserts(c *cli.Context, as []results.Assertion, rs []*results.Result) error {
	if len(as) == 0 {
		return nil
	}
	checks := results.CheckAll(as, rs)
	if err := results.WriteChecks(c.App.ErrWriter, checks); err != nil {
		return err
	}
	if failed := results.Failed(checks); len(failed) > 0 {
		return assertError{msg: fmt.Sprintf("%d of %d assertion checks failed", len(failed), len(checks))}
	}
	return nil
}

// writeJSON writes v as indented JSON: the json writer of outputs whose
// JSON is their value as it is.
func writeJSON[T any](w io.Writer, v T) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printResults prints a run command's results in format (--format, which
// plan accepted).
func printResults(w io.Writer, format string, rs []*results.Result, columns []string) error {
	return runOutput().Write(w, results.Format(format), ranRuns{rs, columns})
}

// ranRuns is what run prints: its results and the table's columns.
type ranRuns struct {
	rs      []*results.Result
	columns []string
}

// runOutput is run's results in each format it offers; plan's --format
// accepts the same set (TestRunFormatsArePlans).
func runOutput() results.Output[ranRuns] {
	return results.Output[ranRuns]{
		Table: func(w io.Writer, r ranRuns) error { return writeRunTables(w, r.rs, r.columns) },
		JSON: func(w io.Writer, r ranRuns) error {
			if len(r.rs) == 1 {
				return writeJSON(w, r.rs[0])
			}
			return writeJSON(w, r.rs)
		},
		CSV: func(w io.Writer, r ranRuns) error { return results.WriteCSV(w, r.rs...) },
		Marked: func(w io.Writer, r ranRuns) error {
			for _, res := range r.rs {
				if err := job.WriteMarked(w, res); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// writeRunTables prints each run's summary and what bounded it, then the
// runs side by side or a group's spread.
func writeRunTables(w io.Writer, rs []*results.Result, columns []string) error {
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := results.WriteSummary(w, r); err != nil {
			return err
		}
		// The rulebook's one rule names what bounded the run, as capacity's
		// limit line does, with the next step it implies.
		if err := results.Wrapping(w, func(w io.Writer) error { _, err := fmt.Fprintln(w, verdict.LimitOf(r).Text()); return err }); err != nil {
			return err
		}
	}
	// Repeats of one configuration get their spread; several configurations
	// (topologies) one row each, of medians, with ratios to the first.
	switch groups := results.GroupRuns(rs); {
	case len(groups) > 1:
		fmt.Fprintln(w)
		return results.WriteSideBySideGroups(w, groups, columns)
	case len(rs) > 1:
		fmt.Fprintln(w)
		return results.WriteGroupSummary(w, groups[0])
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal), where a
// self-overwriting live line makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
