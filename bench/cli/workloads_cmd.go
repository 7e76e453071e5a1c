package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/workloads"
)

func workloadsCommand() *cli.Command {
	return &cli.Command{
		Name:  "workloads",
		Usage: "list the workload presets for run --workload",
		Action: func(c *cli.Context) error {
			t := newPlainTable(c.App.Writer)
			for _, p := range workloads.Presets() {
				keys := make([]string, 0, len(p.Flags))
				for k := range p.Flags {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				flags := make([]string, len(keys))
				for i, k := range keys {
					flags[i] = fmt.Sprintf("--%s %s", k, p.Flags[k])
				}
				t.row(p.Name, p.Description, strings.Join(flags, " "))
			}
			return t.flush()
		},
	}
}
