// Command lockbench benchmarks and load-tests Redis distributed locks.
// It only wires flags; the work is done by the bench, lockimpl, compose,
// workloads and results packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes, as DESIGN.md fixes them.
const (
	exitOK           = 0
	exitRuntime      = 1
	exitBadInput     = 2
	exitAssertFailed = 3
)

func main() {
	// go-redis logs dial failures itself; lockbench reports them once, as errors.
	redis.SetLogger(quietLogger{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks bad input found by the CLI itself (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// assertError marks a failed --assert threshold (exit code 3).
type assertError struct{ msg string }

func (e assertError) Error() string { return e.msg }

// run is main without the process: testable end to end.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "lockbench: %v\n", err)
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	var ae assertError
	switch {
	case errors.As(err, &ue), plan.IsInputError(err):
		return exitBadInput
	case errors.As(err, &ae):
		return exitAssertFailed
	}
	return exitRuntime
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "lockbench",
		Usage:     "benchmark and load-test Redis distributed locks",
		Writer:    stdout,
		ErrWriter: stderr,
		// Errors are printed once, by run, as one line.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{msg: err.Error()}
		},
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(c.App.ErrWriter, "lockbench: unknown command %q; see lockbench help\n", name)
			os.Exit(exitBadInput)
		},
		Commands: []*cli.Command{
			runCommand(),
			workloadsCommand(),
			resultsCommand(),
			sweepCommand(),
			capacityCommand(),
			tuneTTLCommand(),
			scenarioCommand(),
			lockCostCommand(),
			redlockCostCommand(),
			versionCommand(),
		},
	}
	setUsageErrors(app.Commands, app.OnUsageError)
	return app
}

// setUsageErrors makes every subcommand report flag errors as bad input.
func setUsageErrors(cmds []*cli.Command, f cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		c.OnUsageError = f
		setUsageErrors(c.Subcommands, f)
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print lockbench's version",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "lockbench %s\n", version)
			return nil
		},
	}
}

// quietLogger drops go-redis's internal log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}
