package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
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
		env := []string{envVar(f.Name)}
		switch {
		case f.Bool:
			out = append(out, &cli.BoolFlag{Name: f.Name, Aliases: f.Aliases, Usage: f.Usage, EnvVars: env, Category: f.Category})
		case f.Multi:
			out = append(out, &cli.StringSliceFlag{Name: f.Name, Aliases: f.Aliases, Usage: f.Usage, EnvVars: env, Category: f.Category,
				Value: defaultSlice(f.Default)})
		default:
			out = append(out, &cli.StringFlag{Name: f.Name, Aliases: f.Aliases, Usage: f.Usage, EnvVars: env, Category: f.Category,
				Value: f.Default})
		}
	}
	return out
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
			v.Set(f.Name, c.String(f.Name))
		}
	}
	return v
}

func runCommand() *cli.Command {
	table := plan.RunFlags()
	return &cli.Command{
		Name:      "run",
		Usage:     "run a lock benchmark and store its result",
		UsageText: "lockbench run [flags]   (no flags: 10 s on a local single-instance redis-server)",
		Flags:     cliFlags(table),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("run takes no arguments, got %q; flags start with --", c.Args().First())}
			}
			plans, err := plan.Expand(givenValues(c, table))
			if err != nil {
				return err
			}
			return runPlans(c, plans)
		},
	}
}

func runPlans(c *cli.Context, plans []plan.Plan) error {
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	var done []*results.Result
	for _, pl := range plans {
		env := plan.Env{Log: stderr}
		if !pl.Quiet && isTerminal(stderr) {
			env.Progress = stderr
		}
		if pl.Quiet {
			env.Log = nil
		}
		r, err := plan.Execute(c.Context, pl, env)
		if err != nil {
			return err
		}
		path, err := results.Write(pl.OutDir, r)
		if err != nil {
			return err
		}
		if env.Log != nil {
			fmt.Fprintf(stderr, "result stored in %s\n", path)
		}
		done = append(done, r)
		if r.Partial {
			break
		}
	}
	if err := printResults(stdout, plans[0].Format, done); err != nil {
		return err
	}
	if c.Context.Err() != nil {
		return fmt.Errorf("interrupted; partial result stored")
	}
	return nil
}

func printResults(w io.Writer, format string, rs []*results.Result) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if len(rs) == 1 {
			return enc.Encode(rs[0])
		}
		return enc.Encode(rs)
	}
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := results.WriteSummary(w, r); err != nil {
			return err
		}
	}
	if len(rs) > 1 {
		fmt.Fprintln(w)
		return results.WriteSideBySide(w, rs)
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
