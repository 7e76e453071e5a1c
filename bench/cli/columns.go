package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/results"
)

// columnsFlag picks the figures of a view's table beyond its key ones.
var columnsFlag = &cli.StringSliceFlag{Name: "columns", Category: "output",
	Usage: "figures the table shows instead of its key ones: catalogue names, comma-separated (e.g. acquire.p95,client.cpu_us_per_acquire); json and csv carry every figure"}

// viewColumns checks --columns against the view before anything runs: an
// unknown name is bad input naming the accepted ones, and --columns with a
// format that carries every figure anyway would be ignored, so it is refused.
func viewColumns(c *cli.Context, v results.View, format string) ([]string, error) {
	cols := c.StringSlice("columns")
	if len(cols) == 0 {
		return nil, nil
	}
	if format != "table" {
		return nil, usageError{msg: "--columns: chooses the table's figures; --format " + format + " carries every figure already"}
	}
	if _, err := v.Figures(cols); err != nil {
		return nil, usageError{msg: err.Error()}
	}
	return cols, nil
}
