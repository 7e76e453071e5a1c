package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// adviseRunFlags are the run flags advise takes: the work, the --redis
// target, and where results go. It decides every other run flag itself.
func adviseRunFlags() []plan.Flag {
	take := append(advise.WorkFlags(), "redis", "out", "quiet")
	var out []plan.Flag
	for _, f := range plan.RunFlags() {
		if slices.Contains(take, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

func adviseCommand() *cli.Command {
	table := adviseRunFlags()
	return &cli.Command{
		Name:  "advise",
		Usage: "plan experiments within a time budget, run them, and write one page of advice (lock, TTL, renewal, retry, capacity, incidents) citing the stored result of every number",
		UsageText: "lockbench advise [--candidate LOCK@TOPOLOGY]... [--hold 5ms] [--pause-prob 0.001 --pause 300ms] [-c 16 | --rate 5000]\n" +
			"      [--slo 'p99<10ms'] [--max-incident-rate 1e-4] [--correctness strict|bounded] [--budget 5m] [--plan-only] [--resume] [--report FILE]",
		Flags: append(cliFlags(table),
			&cli.StringSliceFlag{Name: "candidate", Category: "target", Usage: "lock and topology to consider, repeatable: " + sweep.LockSpecHelp + " (default: single and fenced on single (on --redis when given), redlock on redlock:5, etcd on etcd:3, and postgres where installed)"},
			&cli.StringSliceFlag{Name: "slo", Category: "output", Value: cli.NewStringSlice("p99<10ms"), Usage: "latency or throughput to keep at the demand, repeatable, e.g. 'p99<10ms' (on time_to_acquire: the caller's wait, retries included; with --rate from the intended start)"},
			&cli.Float64Flag{Name: "max-incident-rate", Category: "output", Value: 1e-4, Usage: "highest acceptable share of holders that outlive their lease (strict) or cause an incident (bounded), proven at 95%"},
			&cli.StringFlag{Name: "correctness", Category: "output", Value: advise.Strict, Usage: "strict (a stale write accepted is unacceptable) or bounded (a rare duplicate is tolerable, up to --max-incident-rate)"},
			&cli.StringFlag{Name: "budget", Category: "output", Value: "5m", Usage: "wall time for the whole command, servers' start-up included; it ends within 1.25 × it"},
			&cli.BoolFlag{Name: "plan-only", Category: "output", Usage: "print the plan (experiments, each with its window and why, and the total against the budget) and stop"},
			&cli.BoolFlag{Name: "resume", Category: "output", Usage: "reuse stored results (in --out) of the same resolved configuration instead of running them again"},
			&cli.StringFlag{Name: "report", Category: "output", Usage: "also write the page as HTML to FILE"},
			formatFlag(advicePageOutput())),
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c, advicePageOutput())
			if err != nil {
				return err
			}
			in, err := adviseInput(c, table)
			if err != nil {
				return err
			}
			p, err := advise.NewPlan(in)
			if err != nil {
				return err
			}
			if err := p.Check(); err != nil {
				return err
			}
			if c.Bool("plan-only") {
				if err := refuseSet(c, map[string]string{"resume": "--plan-only runs nothing, so nothing is resumed", "report": "--plan-only writes no page"}); err != nil {
					return err
				}
				return advicePlanOutput().Write(c.App.Writer, format, p)
			}
			return runAdvise(c, p, format)
		},
	}
}

// adviseInput reads advise's flags into its input.
func adviseInput(c *cli.Context, table []plan.Flag) (advise.Input, error) {
	given := givenValues(c, table)
	in := advise.Input{Redis: given["redis"], Out: given.Get("out"), Work: plan.Values{}}
	if in.Out == "" {
		in.Out = "./runs"
	}
	if len(in.Redis) > 1 {
		return in, usageError{msg: fmt.Sprintf("--redis: advise takes one target, the server the single candidates run on; got %d", len(in.Redis))}
	}
	for _, name := range advise.WorkFlags() {
		if given.Has(name) {
			in.Work[name] = given[name]
		}
	}
	for _, s := range compose.JoinClusterPieces(c.StringSlice("candidate")) {
		cand, err := advise.ParseCandidate(s)
		if err != nil {
			return in, err
		}
		in.Candidates = append(in.Candidates, cand)
	}
	if len(in.Candidates) == 0 {
		in.Candidates = advise.DefaultCandidates(compose.PgInstalled())
	}
	slo, err := parseAsserts(c.StringSlice("slo"))
	if err != nil {
		return in, usageError{msg: "--slo: " + err.Error()[len("--assert: "):]}
	}
	in.Req.SLO = slo
	in.Req.MaxIncidentRate = c.Float64("max-incident-rate")
	if in.Req.Correctness, err = advise.ParseCorrectness(c.String("correctness")); err != nil {
		return in, err
	}
	if in.Budget, err = advise.ParseBudget(c.String("budget")); err != nil {
		return in, err
	}
	return in, in.Check()
}

// advicePageOutput is advise's page in each format it offers.
func advicePageOutput() results.Output[advise.Page] {
	return results.Output[advise.Page]{Table: advise.WriteText, JSON: advise.WriteJSON}
}

// advicePlanOutput is advise --plan-only's plan, in the page's formats.
func advicePlanOutput() results.Output[advise.Plan] {
	return results.Output[advise.Plan]{Table: advise.WritePlan, JSON: writeJSON[advise.Plan]}
}

// runAdvise runs the plan, then prints the page (and writes its HTML). An
// interrupted run still prints the page of what was measured.
func runAdvise(c *cli.Context, p advise.Plan, format results.Format) error {
	quiet := c.Bool("quiet")
	if !quiet {
		if err := advise.WritePlan(c.App.ErrWriter, p); err != nil {
			return err
		}
	}
	deps := advise.Deps{Run: storeRunner(c)}
	if c.Bool("resume") {
		stored, err := storedForResume(c, "advise", p.Input.Out, "experiment")
		if err != nil {
			return err
		}
		deps.Stored = stored
	}
	if !quiet {
		deps.Progress = budgetProgress(c, "experiments")
	}
	ev := advise.Run(c.Context, p, deps)
	if !quiet && isTerminal(c.App.ErrWriter) {
		fmt.Fprintln(c.App.ErrWriter)
	}
	page := advise.Build(ev)
	if err := advicePageOutput().Write(c.App.Writer, format, page); err != nil {
		return err
	}
	if err := writeHTMLReport(c, "advice page", func(w io.Writer) error { return advise.WriteHTML(w, page, p.Input.Out) }); err != nil {
		return err
	}
	if ev.Interrupted {
		return fmt.Errorf("interrupted: the page shows what was measured and what is missing; lockbench advise --resume with the same flags runs the rest")
	}
	return nil
}

// budgetProgress prints, before each step of a budgeted plan (advise's
// experiments, failover-map's failovers), where the plan stands and the time
// left at the pace so far; unit names the steps.
func budgetProgress(c *cli.Context, unit string) func(advise.Progress) {
	w := c.App.ErrWriter
	term := isTerminal(w)
	return func(p advise.Progress) {
		line := fmt.Sprintf("[%s] %d/%d %s, %s elapsed, ETA %s  %s", bar(p.Done, p.Total, 20), p.Done, p.Total, unit,
			p.Elapsed.Round(time.Second), p.ETA.Round(time.Second), p.Label)
		if term {
			fmt.Fprintf(w, "\r\033[K%s", line)
			return
		}
		fmt.Fprintln(w, line)
	}
}

// storedForResume reads the results --resume may reuse from dir (cmd names
// the command, unit what it runs). A dir with none is bad input: --resume
// with nothing to go on from would silently run everything again.
func storedForResume(c *cli.Context, cmd, dir, unit string) ([]*results.Result, error) {
	stored, _, err := results.List(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(stored) == 0) {
		return nil, usageError{msg: fmt.Sprintf("--resume: no stored %ss in %s to go on from; want the --out of the %s to resume", unit, dir, cmd)}
	}
	return stored, err
}

// writeHTMLReport writes the page --report names, if any, atomically, with
// render, and says where (what names the page).
func writeHTMLReport(c *cli.Context, what string, render func(io.Writer) error) error {
	path := c.String("report")
	if path == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "%s written to %s\n", what, path)
	return nil
}
