package cli

import (
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/metrics"
)

func metricsCommand() *cli.Command {
	return &cli.Command{
		Name:  "metrics",
		Usage: "configuration for the tools that watch runs (Prometheus)",
		Subcommands: []*cli.Command{{
			Name:      "prometheus-config",
			Usage:     "print a Prometheus configuration that scrapes generators' --metrics-addr",
			UsageText: "lockbench metrics prometheus-config [--target HOST:PORT]... [--swarm-service NAME-RUNID]... [--scrape-interval 1s] [-o prometheus.yml]",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "target", Value: cli.NewStringSlice("127.0.0.1:9464"), Usage: "HOST:PORT of a generator's --metrics-addr, repeatable"},
				&cli.StringSliceFlag{Name: "swarm-service", Usage: "a lockbench swarm job's service (NAME-RUNID): its tasks found by DNS, tasks.NAME-RUNID, port " + strconv.Itoa(job.MetricsPort) + ", from a Prometheus on the job's --network; repeatable; without --target, only these"},
				&cli.DurationFlag{Name: "scrape-interval", Value: 1e9, Usage: "how often Prometheus scrapes each generator (at least 100ms)"},
				&cli.StringFlag{Name: "job", Value: "lockbench", Usage: "the scrape job's name (Prometheus's job label)"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the configuration to FILE instead of stdout"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usageError{msg: fmt.Sprintf("prometheus-config takes no arguments, got %q; targets are --target HOST:PORT", c.Args().First())}
				}
				targets := c.StringSlice("target")
				if c.IsSet("swarm-service") && !c.IsSet("target") {
					targets = nil // the default target is for a generator on this machine
				}
				sw := metrics.Swarm{Services: c.StringSlice("swarm-service"), Port: job.MetricsPort}
				cfg, err := metrics.NewScrapeConfig(targets, sw, c.Duration("scrape-interval"), c.String("job"))
				if err != nil {
					return usageError{msg: err.Error()}
				}
				if path := c.String("output"); path != "" {
					if err := os.WriteFile(path, []byte(cfg.YAML()), 0o644); err != nil {
						return fmt.Errorf("--output: %w", err)
					}
					return nil
				}
				_, err = fmt.Fprint(c.App.Writer, cfg.YAML())
				return err
			},
		}},
	}
}
