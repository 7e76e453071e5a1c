// Command lockbench benchmarks and load-tests distributed locks on Redis,
// etcd and PostgreSQL.
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

// version is set at build time with -ldflags "-X main.version=…" (make
// build does); a plain go build leaves it empty.
var version string

// buildVersion is the version `lockbench version` prints and every result
// records in hosts[].build: the stamped one, else the module version or VCS
// revision the binary was built from.
func buildVersion() string {
	if version != "" {
		return version
	}
	return plan.BuildVersion()
}

// Exit codes, as DESIGN.md fixes them.
const (
	exitOK           = 0
	exitRuntime      = 1
	exitBadInput     = 2
	exitAssertFailed = 3
	// exitSIGINT and exitSIGTERM follow the shell's 128 + signal number.
	exitSIGINT  = 130
	exitSIGTERM = 143
)

func main() {
	// go-redis logs dial failures itself; lockbench reports them once, as errors.
	redis.SetLogger(quietLogger{})
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(signalled{sig})
		// A second signal while the first is being handled (servers
		// stopping, a partial result being written) quits at once.
		sig = <-sigs
		os.Exit(signalled{sig}.exitCode())
	}()
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// signalled is the cause of a run cancelled by a signal.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return "interrupted by " + s.sig.String() }

func (s signalled) exitCode() int {
	if s.sig == syscall.SIGTERM {
		return exitSIGTERM
	}
	return exitSIGINT
}

// interruptCode is the exit code of a run whose context was cancelled: by
// SIGTERM 143, by SIGINT (or a caller's cancel) 130.
func interruptCode(ctx context.Context) int {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		return s.exitCode()
	}
	return exitSIGINT
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
	// What the command stored, whatever became of it, ends its output.
	defer writeNext(stderr, app.Metadata[storedKey].(*storedRuns).next()...)
	if ctx.Err() != nil {
		// Interrupted: whatever finished was printed and stored; say so once.
		msg := "interrupted"
		if err != nil && !errors.Is(err, context.Canceled) {
			msg = err.Error()
		}
		fmt.Fprintf(stderr, "lockbench: %s\n", msg)
		return interruptCode(ctx)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "lockbench: %v\n", err)
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	var ae assertError
	var un unsafeError
	var uk unknownError
	switch {
	case errors.As(err, &ue), plan.IsInputError(err):
		return exitBadInput
	case errors.As(err, &ae):
		return exitAssertFailed
	case errors.As(err, &un):
		return exitUnsafe
	case errors.As(err, &uk):
		return exitUnknown
	}
	return exitRuntime
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "lockbench",
		Usage:     "benchmark and load-test distributed locks on Redis, etcd, PostgreSQL, ZooKeeper and NATS",
		Writer:    stdout,
		ErrWriter: stderr,
		Metadata:  map[string]interface{}{storedKey: &storedRuns{}},
		// Errors are printed once, by run, as one line.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageError{msg: usageMessage(c, err)}
		},
		Action: unknownCommand,
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(c.App.ErrWriter, "lockbench: %s\n", unknownCommandMessage(c.App, name))
			os.Exit(exitBadInput)
		},
		// Before any command runs: a single-valued flag given twice is
		// refused for every command alike, then the engine's environment
		// becomes the flags' variables.
		Before: func(c *cli.Context) error {
			if err := refuseRepeatedFlags(c); err != nil {
				return err
			}
			return applyJobEnvironment(c)
		},
		Commands: []*cli.Command{
			runCommand(),
			workloadsCommand(),
			resultsCommand(),
			sweepCommand(),
			capacityCommand(),
			tuneTTLCommand(),
			scenarioCommand(),
			failoverMapCommand(),
			renewalCheckCommand(),
			chaosCommand(),
			lockCostCommand(),
			checkCommand(),
			adviseCommand(),
			redlockCostCommand(),
			k8sCommand(),
			metricsCommand(),
			swarmCommand(),
			imageCommand(),
			versionCommand(),
		},
	}
	setUsageErrors(app.Commands, app.OnUsageError)
	return app
}

// setUsageErrors makes every subcommand report flag errors as bad input,
// refuses arguments where a command takes none (an argument that would be
// ignored is bad input too), and gives commands that only group others one
// line for a name they do not have.
func setUsageErrors(cmds []*cli.Command, f cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		c.OnUsageError = f
		switch {
		case c.Action == nil && len(c.Subcommands) > 0:
			c.Action = unknownSubcommand
		case c.Action != nil && c.ArgsUsage == "":
			c.Action = noArguments(c.Name, c.Action)
		}
		setUsageErrors(c.Subcommands, f)
	}
}

// noArguments wraps the action of a command that takes no arguments.
func noArguments(name string, action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() > 0 {
			return usageError{msg: fmt.Sprintf("%s takes no arguments, got %q; flags start with --", name, c.Args().First())}
		}
		return action(c)
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print lockbench's version",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "lockbench %s\n", buildVersion())
			return nil
		},
	}
}

// quietLogger drops go-redis's internal log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}
