package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/pool"
)

// parallelFlag is --parallel of the commands of trials (scenario,
// renewal-check, failover-map).
func parallelFlag(unit string) cli.Flag {
	return &cli.IntFlag{Name: "parallel", Value: 1, Usage: "how many " + unit + " at once, each with its own servers on its own ports; " +
		"refused past what the machine fits (one core and 512 MB each)"}
}

// parallelOf reads --parallel: below 1, or more trials than the machine
// fits (pool.TrialNeed against its cores and available memory), is bad
// input, in one line saying why.
func parallelOf(c *cli.Context) (int, error) {
	n := c.Int("parallel")
	if err := pool.ThisMachine().Fit(n, pool.TrialNeed()); err != nil {
		return 0, usageError{msg: err.Error()}
	}
	return n, nil
}
