package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

var withFaultFlag = &cli.BoolFlag{Name: "with-fault", Category: "output",
	Usage: "also run each lock under its topology's canonical fault: " + compose.CanonicalFaultHelp()}

func lockCostCommand() *cli.Command {
	table, flags, refused := runFlagsOf("lock-cost")
	return &cli.Command{
		Name:  "lock-cost",
		Usage: "the same workload on each lock (lockbench's and the peer libraries'): throughput, latency, client and server cost, ratios against the first",
		UsageText: "lockbench lock-cost [--lock NAME[@TOPOLOGY]]... [--with-fault] [-c 16] [-d 5s] [--count 3]\n" +
			"   default locks: single, fenced, redislock, redlock@redlock:5, redsync@redlock:5",
		Flags: append(flags,
			&cli.StringSliceFlag{Name: "lock", Category: "target", Usage: "lock to compare, repeatable: " + sweep.LockSpecHelp},
			withFaultFlag, countFlag, formatFlag(lockCostOutput()), columnsFlag),
		Action: func(c *cli.Context) error {
			if err := refuseSet(c, refused); err != nil {
				return err
			}
			var locks []sweep.LockSpec
			for _, s := range compose.JoinClusterPieces(c.StringSlice("lock")) {
				spec, err := sweep.ParseLockSpec(s)
				if err != nil {
					return usageError{msg: "--lock " + err.Error()}
				}
				locks = append(locks, spec)
			}
			if len(locks) == 0 {
				locks = sweep.DefaultLockSpecs()
			}
			return runLockCost(c, table, locks, c.Bool("with-fault"))
		},
	}
}

// redlockCostCommand is lock-cost over single and redlock:N for each of
// --masters (or, with --redis, single on the first URL and redlock over
// all), always with one master killed.
func redlockCostCommand() *cli.Command {
	table, flags, refused := runFlagsOf("redlock-cost")
	return &cli.Command{
		Name:  "redlock-cost",
		Usage: "lock-cost of single against redlock:3/5/7, with one master killed (an alias of lock-cost --with-fault)",
		UsageText: "lockbench redlock-cost [--masters 3,5,7] [-c 16] [-d 5s]\n" +
			"   lockbench redlock-cost --redis redis://a:6379 --redis redis://b:6379 --redis redis://c:6379   (external masters: N = the URLs)",
		Flags: append(flags,
			&cli.StringFlag{Name: "masters", Value: "3,5,7", Usage: "Redlock master counts to compare against single", Category: "output"},
			countFlag, formatFlag(lockCostOutput()), columnsFlag),
		Action: func(c *cli.Context) error {
			if err := refuseSet(c, refused); err != nil {
				return err
			}
			locks := []sweep.LockSpec{{Lock: lockimpl.LockSingle, Topology: "single"}}
			if urls := c.StringSlice("redis"); len(urls) > 0 {
				if c.IsSet("masters") {
					return usageError{msg: "--masters: with --redis the masters are the URLs; give one or the other"}
				}
				locks = append(locks, sweep.LockSpec{Lock: lockimpl.LockRedlock, Topology: fmt.Sprintf("redlock:%d", len(urls))})
				return runLockCost(c, table, locks, false)
			}
			for _, m := range sweep.ParseList(c.String("masters")) {
				n, err := strconv.Atoi(m)
				if err != nil || n < 1 || n > compose.MaxMasters {
					return usageError{msg: fmt.Sprintf("--masters %q: want master counts from 1 to %d, e.g. 3,5,7", c.String("masters"), compose.MaxMasters)}
				}
				locks = append(locks, sweep.LockSpec{Lock: lockimpl.LockRedlock, Topology: fmt.Sprintf("redlock:%d", n)})
			}
			return runLockCost(c, table, locks, true)
		},
	}
}

// runLockCost checks every run of the comparison, runs and stores them, and
// prints the table (or JSON).
func runLockCost(c *cli.Context, table []plan.Flag, locks []sweep.LockSpec, withFault bool) error {
	format, err := checkFormat(c, lockCostOutput())
	if err != nil {
		return err
	}
	columns, err := viewColumns(c, results.LockCostView(), string(format))
	if err != nil {
		return err
	}
	if err := plan.CheckRepeats(c.Int("count")); err != nil {
		return err
	}
	base, err := plan.WithCommandDefaults(c.Command.Name, givenValues(c, table))
	if err != nil {
		return err
	}
	cp := sweep.CostPlan{Locks: locks, Count: c.Int("count"), WithFault: withFault, Base: base}
	if err := cp.Check(); err != nil {
		return err
	}
	rows, err := sweep.RunCost(c.Context, cp, storeRunner(c), progressFor(c))
	if err != nil {
		return err
	}
	return lockCostOutput().Write(c.App.Writer, format, lockCosts{rows, columns})
}

// lockCosts is what lock-cost prints: each lock's runs and the table's
// columns.
type lockCosts struct {
	rows    []sweep.CostRuns
	columns []string
}

// lockCostOutput is lock-cost's (and redlock-cost's) comparison in each
// format it offers.
func lockCostOutput() results.Output[lockCosts] {
	return results.Output[lockCosts]{
		Table: func(w io.Writer, l lockCosts) error { return sweep.WriteLockCost(w, l.rows, l.columns) },
		JSON:  func(w io.Writer, l lockCosts) error { return sweep.WriteLockCostJSON(w, l.rows) },
		CSV:   func(w io.Writer, l lockCosts) error { return sweep.WriteLockCostCSV(w, l.rows) },
	}
}
