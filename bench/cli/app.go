// Package cli is lockbench's command line as a library: the commands, their
// flags and their wiring to the bench, lockimpl, compose, workloads and
// results packages. cmd/lockbench is a thin call of Main; a Go program that
// brings a lock of its own calls Main too, with its locks in Options, and
// gets every command with them (--lock go:NAME).
//
// It lives under bench rather than cmd because a main package cannot be
// imported; nothing in bench imports it, so the arrows still point one way:
// from the command line to the packages that do the work.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
)

// Options configure Main beyond its arguments.
type Options struct {
	// Stdout and Stderr are where the commands write; nil means os.Stdout
	// and os.Stderr.
	Stdout, Stderr io.Writer
	// Version is what `lockbench version` prints and every result records
	// in hosts[].build; "" means the module version or VCS revision the
	// binary was built from.
	Version string
	// Locks are the program's own Go locks, each run by every command as
	// --lock go:NAME, built in-process over the topology's clients as the
	// built-in locks are.
	Locks lockimpl.GoLocks
}

// Main runs the lockbench command line on args (args[0] is the program's
// name) and returns its exit code: 0 success, 1 a run-time failure, 2 bad
// input, 3 a failed --assert, 4 an unsafe history, 130/143 when ctx was
// cancelled by SIGINT/SIGTERM (a cause of type Signalled says which).
func Main(ctx context.Context, args []string, opts Options) int {
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if err := opts.Locks.Check(); err != nil {
		fmt.Fprintf(opts.Stderr, "lockbench: %v\n", err)
		return exitBadInput
	}
	// go-redis logs dial failures itself; lockbench reports them once, as errors.
	redis.SetLogger(quietLogger{})
	ctx = lockimpl.WithGoLocks(ctx, opts.Locks)
	return runWith(ctx, args, opts)
}

// buildVersion is the version `lockbench version` prints and every result
// records in hosts[].build: the one Main was given, else the module version
// or VCS revision the binary was built from.
func buildVersion(c *cli.Context) string {
	if v, _ := c.App.Metadata[versionKey].(string); v != "" {
		return v
	}
	return plan.BuildVersion()
}

// versionKey holds Options.Version in the app's metadata.
const versionKey = "version"

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

// Signalled is the cause of a run cancelled by a signal: a caller of Main
// cancels its context with it (context.WithCancelCause) for the shell's
// exit code, 128 + the signal's number.
type Signalled struct{ Sig os.Signal }

func (s Signalled) Error() string { return "interrupted by " + s.Sig.String() }

// ExitCode is the exit code of a run interrupted by the signal.
func (s Signalled) ExitCode() int {
	if s.Sig == syscall.SIGTERM {
		return exitSIGTERM
	}
	return exitSIGINT
}

// interruptCode is the exit code of a run whose context was cancelled: by
// SIGTERM 143, by SIGINT (or a caller's cancel) 130.
func interruptCode(ctx context.Context) int {
	var s Signalled
	if errors.As(context.Cause(ctx), &s) {
		return s.ExitCode()
	}
	return exitSIGINT
}

// usageError marks bad input found by the CLI itself (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// assertError marks a failed --assert threshold (exit code 3).
type assertError struct{ msg string }

func (e assertError) Error() string { return e.msg }

// run is Main without the program's locks: testable end to end.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, Options{Stdout: stdout, Stderr: stderr})
}

// runWith is Main once its options are complete.
func runWith(ctx context.Context, args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	app := newApp(stdout, stderr)
	app.Metadata[versionKey] = opts.Version
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
	refuseUnregisteredGoLocks(app.Commands)
	return app
}

// refuseUnregisteredGoLocks makes every command that takes --lock refuse a
// go:NAME this program did not register before it starts anything: the
// registered locks travel in the context, which the plan's parsing does
// not see, and a run would otherwise start its servers first.
func refuseUnregisteredGoLocks(cmds []*cli.Command) {
	for _, cmd := range cmds {
		refuseUnregisteredGoLocks(cmd.Subcommands)
		flag := flagNamed(cmd, "lock")
		if flag == nil {
			continue
		}
		_, multi := flag.(*cli.StringSliceFlag)
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			for _, lock := range lockFlagWords(c, "lock", multi) {
				if err := lockimpl.GoLocksIn(c.Context).Unregistered(lock); err != nil {
					return usageError{msg: "--lock: " + err.Error()}
				}
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
}

// flagNamed is cmd's flag called name, or nil.
func flagNamed(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// lockFlagWords are the comma-separated words of a string or string-slice
// flag (a sweep's axis lists several locks in one value).
func lockFlagWords(c *cli.Context, name string, multi bool) []string {
	raw := []string{c.String(name)}
	if multi {
		raw = c.StringSlice(name)
	}
	var out []string
	for _, r := range raw {
		for _, w := range strings.Split(r, ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
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
			fmt.Fprintf(c.App.Writer, "lockbench %s\n", buildVersion(c))
			return nil
		},
	}
}

// quietLogger drops go-redis's internal log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

// Run is Main for a program's main function: SIGINT and SIGTERM cancel the
// run (its partial result is stored; a second signal quits at once), and
// the return is the exit code to give os.Exit.
func Run(args []string, opts Options) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		cancel(Signalled{sig})
		// A second signal while the first is being handled (servers
		// stopping, a partial result being written) quits at once.
		sig = <-sigs
		os.Exit(Signalled{sig}.ExitCode())
	}()
	return Main(ctx, args, opts)
}
