package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/failovermap"
	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/k8s"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

func failoverMapCommand() *cli.Command {
	return &cli.Command{
		Name:  "failover-map",
		Usage: "double grants per failover against replication lag, hold time and WAIT, per lock, each cell over many failovers with 95% intervals and a first-principles prediction beside it",
		UsageText: "lockbench failover-map [--topology replicated|cluster:M,R] [--lock single,fenced,redislock] [--lag 0,100ms,500ms] [--hold 100ms,1s,3s]\n" +
			"      [--mitigation none,wait,waitaof] [--wait-timeout 100ms] [--failovers 10] [--parallel N] [--engine local|swarm|k8s] [--fresh]\n" +
			"      [--budget 30m] [--plan-only] [--resume] [--report FILE]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "topology", Value: "replicated", Usage: "replicated (sentinels promote the replica) or cluster:M,R with R ≥ 1 (shard 0 fails over)"},
			&cli.StringFlag{Name: "lock", Usage: "locks, comma-separated (default: every lock the topology runs but naive)"},
			&cli.StringFlag{Name: "lag", Value: "0,100ms,500ms", Usage: "replication lags at the primary's death, comma-separated, 0 to 5s: the replica holds the stream for this long before the kill"},
			&cli.StringFlag{Name: "hold", Value: "100ms,1s,3s", Usage: "mean hold times, comma-separated, 1ms to 1m (each uniform ±50%)"},
			&cli.StringFlag{Name: "mitigation", Value: "none,wait", Usage: "none, wait (WAIT 1 after SET, fewer acks count as not acquired) or waitaof (Redis 7.2+), comma-separated"},
			&cli.DurationFlag{Name: "wait-timeout", Value: 100 * time.Millisecond, Usage: "bound on the WAIT of the wait mitigation"},
			&cli.IntFlag{Name: "failovers", Value: 10, Usage: "conclusive failovers per cell (fewer when the budget is short); on replicated without WAIT they follow one another on one topology, restored and verified clean between them"},
			parallelFlag("failovers"),
			&cli.BoolFlag{Name: "fresh", Usage: "every failover on a fresh topology of its own, never after another on a shared one: a start-up each, " +
				"as --engine swarm and k8s run them (resume their failovers with it)"},
			&cli.StringFlag{Name: "budget", Value: "30m", Usage: "wall time for the whole command, servers' start-up included; it ends within 1.2 × it"},
			&cli.BoolFlag{Name: "plan-only", Usage: "print the plan (cells, failovers per cell, estimate against the budget) and stop"},
			&cli.BoolFlag{Name: "resume", Usage: "reuse stored results (in --out) of the same failovers instead of running them again"},
			&cli.StringFlag{Name: "out", Value: "./runs", Usage: "directory for result files", EnvVars: []string{"LOCKBENCH_OUT"}},
			&cli.StringFlag{Name: "report", Usage: "also write the heat maps (lag × hold, one panel per lock and mitigation) as HTML to FILE"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no plan or progress lines"},
			formatFlag(failoverMapOutput()),
			trialIndexFlag(),
		}, failoverEngineFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("failover-map takes no arguments, got %q", c.Args().First())}
			}
			format, err := checkFormat(c, failoverMapOutput())
			if err != nil {
				return err
			}
			engine, err := engineOf(c)
			if err != nil {
				return err
			}
			if err := engineRefusals(c, engine); err != nil {
				return err
			}
			p, err := failoverMapPlan(c, engine)
			if err != nil {
				return err
			}
			if c.Bool("plan-only") {
				if err := refuseSet(c, map[string]string{"resume": "--plan-only runs nothing, so nothing is resumed", "report": "--plan-only writes no page",
					"trial-index": "--plan-only runs nothing"}); err != nil {
					return err
				}
				if engine == engineK8s {
					return usageError{msg: "--plan-only with --engine k8s: the job it prints is the plan, one index per failover asked for, with no budget to fit"}
				}
				return failoverPlanOutput().Write(c.App.Writer, format, p)
			}
			if engine != engineLocal {
				if err := failoverMapFitsImage(p, engine); err != nil {
					return err
				}
			}
			if engine == engineK8s {
				return failoverMapK8sJob(c, p)
			}
			if c.IsSet("trial-index") {
				return failoverMapOneFailover(c, p)
			}
			return runFailoverMap(c, p, format, engine)
		},
	}
}

// failoverMapPlan reads the axes and makes the plan; every bad axis is one
// line naming the flag (exit 2). On an engine, and in a pod's one failover,
// every failover is on a fresh topology (each task brings up its own); the
// job of --engine k8s, and the pod that runs one of its failovers, plan
// every failover asked for, with no budget to fit.
func failoverMapPlan(c *cli.Context, engine string) (failovermap.Plan, error) {
	spec, err := failovermap.ParseTopology(c.String("topology"))
	if err != nil {
		return failovermap.Plan{}, err
	}
	locks := c.String("lock")
	if !c.IsSet("lock") {
		locks = failovermap.DefaultLocks(spec)
	}
	axes := failovermap.Axes{Topology: c.String("topology"), WaitTimeout: c.Duration("wait-timeout")}
	if axes.Locks, err = failovermap.ParseLocks(locks, spec); err != nil {
		return failovermap.Plan{}, err
	}
	if axes.Lags, err = failovermap.ParseLags(c.String("lag")); err != nil {
		return failovermap.Plan{}, err
	}
	if axes.Holds, err = failovermap.ParseHolds(c.String("hold")); err != nil {
		return failovermap.Plan{}, err
	}
	if axes.Mitigations, err = failovermap.ParseMitigations(c.String("mitigation")); err != nil {
		return failovermap.Plan{}, err
	}
	if wt := axes.WaitTimeout; wt < time.Millisecond || wt > 10*time.Second {
		return failovermap.Plan{}, &plan.InputError{Flag: "wait-timeout", Msg: fmt.Sprintf("%v: want from 1ms to 10s", wt)}
	}
	budget, err := advise.ParseBudget(c.String("budget"))
	if err != nil {
		return failovermap.Plan{}, err
	}
	jobPlan := engine == engineK8s || c.IsSet("trial-index")
	if jobPlan {
		budget = unbudgeted
	}
	version, err := failovermap.LocalVersion(c.Context)
	if err != nil {
		// WAITAOF is then judged unknown, not assumed.
		fmt.Fprintf(c.App.ErrWriter, "failover-map: %v; WAITAOF taken as absent\n", err)
	}
	parallel := c.Int("parallel")
	if engine == engineK8s {
		// Pods at once on the cluster: this machine does not run them.
		if parallel < 1 {
			return failovermap.Plan{}, usageError{msg: fmt.Sprintf("--parallel %d: want 1 or more pods at once", parallel)}
		}
	} else if parallel, err = parallelOf(c); err != nil {
		return failovermap.Plan{}, err
	}
	p, err := failovermap.NewPlan(axes, c.Int("failovers"), budget, c.String("out"), version)
	if err != nil {
		return p, err
	}
	p.SetParallel(parallel)
	if engine != engineLocal || jobPlan || c.Bool("fresh") {
		p.SetFresh()
	}
	return p, p.Check()
}

// failoverMapOutput is failover-map's map in each format it offers.
func failoverMapOutput() results.Output[failovermap.Map] {
	return results.Output[failovermap.Map]{Table: failovermap.WriteText, JSON: failovermap.WriteJSON}
}

// failoverPlanOutput is failover-map --plan-only's plan, in the map's formats.
func failoverPlanOutput() results.Output[failovermap.Plan] {
	return results.Output[failovermap.Plan]{Table: failovermap.WritePlan, JSON: writeJSON[failovermap.Plan]}
}

// runFailoverMap runs the plan and prints the map; an interrupted run
// prints what was measured and says how to run the rest.
func runFailoverMap(c *cli.Context, p failovermap.Plan, format results.Format, engine string) (err error) {
	// Stored results first: a --resume that could not go on is bad input,
	// refused before the plan is printed or an engine joined.
	var stored []*results.Result
	if c.Bool("resume") {
		if stored, err = storedForResume(c, "failover-map", p.Out, "failover"); err != nil {
			return err
		}
		if p.StoredOnlyFresh(stored) {
			return usageError{msg: fmt.Sprintf("--resume: the failovers stored in %s ran each on a fresh topology (--engine swarm or k8s, or --fresh); give --fresh to go on from them", p.Out)}
		}
	}
	quiet := c.Bool("quiet")
	if !quiet {
		if err := failovermap.WritePlan(c.App.ErrWriter, p); err != nil {
			return err
		}
	}
	deps := failovermap.Deps{Deps: advise.Deps{Run: storeRunner(c), Stored: stored}, On: func(topo *compose.Topology) sweep.Runner {
		batch := plan.Batch{Build: buildVersion(c), Stored: storedOf(c).add, Topology: topo}
		return batch.RunValues
	}}
	if engine == engineSwarm {
		run, leave, err := swarmTrialRunner(c, p.Out, "failover-map", false)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, leave()) }()
		deps.Run = func(ctx context.Context, v plan.Values, _ string, _ int) (*results.Result, error) { return run(ctx, v) }
	}
	if !quiet {
		deps.Progress = budgetProgress(c, "failovers")
	}
	m := failovermap.Run(c.Context, p, deps)
	if !quiet && isTerminal(c.App.ErrWriter) {
		fmt.Fprintln(c.App.ErrWriter)
	}
	if err := failoverMapOutput().Write(c.App.Writer, format, m); err != nil {
		return err
	}
	if err := writeHTMLReport(c, "failover map", func(w io.Writer) error { return failovermap.WriteHTML(w, m) }); err != nil {
		return err
	}
	if m.Interrupted {
		return fmt.Errorf("interrupted: the map shows what was measured; lockbench failover-map --resume with the same flags runs the rest")
	}
	return nil
}

// unbudgeted is the budget of a plan that runs every failover asked for
// (the job of --engine k8s, and each of its pods): long enough to fit
// them all, short enough not to overflow the plan's arithmetic.
const unbudgeted = 10000 * time.Hour

// failoverMapFitsImage refuses a plan with a cell whose failovers need
// servers or tools the trial image does not carry, naming the first.
func failoverMapFitsImage(p failovermap.Plan, engine string) error {
	for _, cell := range p.Cells {
		if why := trialMisfit(cell.Values(p.Spec(), p.Axes.WaitTimeout)); why != "" {
			return usageError{msg: fmt.Sprintf("failover-map --engine %s: cell %s: %s; run it with --engine local", engine, cell, why)}
		}
	}
	return nil
}

// failoverMapK8sJob prints the Indexed Job of the plan's failovers: index
// k runs the failover Run would run k-th (lockbench failover-map with the
// same axes --trial-index k), on a fresh topology inside its pod, stores
// it there and prints it between the markers for results collect; then
// failover-map --fresh --resume with the same axes reads them.
func failoverMapK8sJob(c *cli.Context, p failovermap.Plan) error {
	args := []string{"failover-map", "--topology", c.String("topology"), "--lag", c.String("lag"), "--hold", c.String("hold"),
		"--mitigation", c.String("mitigation"), "--wait-timeout", c.Duration("wait-timeout").String(),
		"--failovers", strconv.Itoa(p.PerCell)}
	if c.IsSet("lock") {
		args = append(args, "--lock", c.String("lock"))
	}
	args = append(args, "--out", job.ResultsDir, "-q")
	return k8s.WriteTrialJob(c.App.Writer, k8s.TrialJobSpec{Name: "lockbench-failover-map", RunID: plan.NewRunID(), Image: c.String("engine-image"),
		Args: args, Trials: p.Planned(), Parallel: c.Int("parallel")})
}

// failoverMapOneFailover runs planned failover k of the plan (a pod's
// index) on a fresh topology, stores it and prints it between the markers.
func failoverMapOneFailover(c *cli.Context, p failovermap.Plan) error {
	for _, name := range []string{"budget", "resume", "engine", "report"} {
		if c.IsSet(name) {
			return usageError{msg: fmt.Sprintf("--trial-index runs one planned failover; --%s does not apply", name)}
		}
	}
	_, _, v, err := p.PlannedFailover(c.Int("trial-index"))
	if err != nil {
		return usageError{msg: fmt.Sprintf("--trial-index %v", err)}
	}
	r, err := storeRunner(c)(c.Context, v, "failover-map", 0)
	if err != nil {
		return err
	}
	return job.WriteMarked(c.App.Writer, r)
}
