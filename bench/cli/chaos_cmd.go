package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/chaos"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// chaosDrawFlags are the flags that say how a schedule is drawn, refused
// with --schedule (whose faults are given).
var chaosDrawFlags = []string{"kinds", "fault-rate", "fault-for", "overlap"}

func chaosCommand() *cli.Command {
	table, flags, refused := runFlagsOf("chaos")
	return &cli.Command{
		Name:  "chaos",
		Usage: "apply a seeded schedule of faults that fit the topology over one run, check its history, and shrink an unsafe schedule to a reproducer",
		UsageText: "lockbench chaos [run flags] [--seed N | --schedule FILE] [--kinds K,K] [--fault-rate N] [--fault-for MIN..MAX] [--overlap N]\n" +
			"   [--shrink [--shrink-tries N] [--budget D]]",
		Flags: append(flags,
			&cli.StringFlag{Name: "seed", Usage: "seed of the schedule and of the workers (default: a random one, printed); the same seed and flags draw the same schedule", Category: "chaos"},
			&cli.StringFlag{Name: "schedule", Usage: "replay the schedule in FILE (as chaos stores it: window, then one fault a line in --fault form)", Category: "chaos"},
			&cli.StringFlag{Name: "kinds", Usage: "fault kinds to draw, comma-separated (default: every kind that fits the topology and heals; kill only when named)", Category: "chaos"},
			&cli.StringFlag{Name: "fault-rate", Value: "6", Usage: "mean faults a minute (their start times a Poisson process)", Category: "chaos"},
			&cli.StringFlag{Name: "fault-for", Value: "1s..5s", Usage: "range of a drawn fault's for=, MIN..MAX", Category: "chaos"},
			&cli.IntFlag{Name: "overlap", Value: 2, Usage: "most faults in effect at once (never two of one kind, nor two that may strike one server)", Category: "chaos"},
			&cli.BoolFlag{Name: "shrink", Usage: "when the run is unsafe, re-run smaller schedules (fewer faults, shorter, later) and store the smallest that reproduces", Category: "chaos"},
			&cli.IntFlag{Name: "shrink-tries", Value: 20, Usage: "with --shrink: most runs the shrink makes", Category: "chaos"},
			&cli.StringFlag{Name: "budget", Value: "0", Usage: "with --shrink: wall time the shrink may take, e.g. 10m; 0 bounds it by --shrink-tries only", Category: "chaos"},
			formatFlag(chaosOutput()),
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{msg: fmt.Sprintf("chaos takes no arguments, got %q; flags start with --", c.Args().First())}
			}
			if err := refuseSet(c, refused); err != nil {
				return err
			}
			format, err := checkFormat(c, chaosOutput())
			if err != nil {
				return err
			}
			given := givenValues(c, table)
			s, err := chaosSchedule(c, given)
			if err != nil {
				return err
			}
			if s.Drawn {
				given.Set("seed", strconv.FormatUint(s.Seed, 10))
			}
			if err := chaos.Check(given, s); err != nil {
				return err
			}
			sh, err := shrinkOptions(c)
			if err != nil {
				return err
			}
			return runChaos(c, format, given, s, sh)
		},
	}
}

func chaosOutput() results.Output[chaos.Outcome] {
	return results.Output[chaos.Outcome]{Table: chaos.WriteTable, JSON: chaos.WriteJSON}
}

// chaosSchedule is the schedule of the run: read from --schedule, or drawn
// from --seed (a random one when none is given) over the run's window.
func chaosSchedule(c *cli.Context, given plan.Values) (chaos.Schedule, error) {
	if !plan.HistoryPerRun(given.Get("history")) {
		return chaos.Schedule{}, plan.HistoryPerRunError("chaos keeps the history of each run it makes")
	}
	if path := c.String("schedule"); path != "" {
		return readSchedule(c, path, given)
	}
	plans, err := plan.Expand(given)
	if err != nil {
		return chaos.Schedule{}, err
	}
	if len(plans) > 1 {
		return chaos.Schedule{}, usageError{msg: "--topology: chaos runs one topology; give it once"}
	}
	pl := plans[0]
	seed, err := chaosSeed(c)
	if err != nil {
		return chaos.Schedule{}, err
	}
	var kinds []compose.FaultKind
	if c.IsSet("kinds") {
		if kinds, err = compose.ParseFaultKinds(c.String("kinds")); err != nil {
			return chaos.Schedule{}, usageError{msg: "--kinds " + err.Error()}
		}
	}
	choices, err := chaos.Choices(pl, kinds)
	if err != nil {
		return chaos.Schedule{}, usageError{msg: "--kinds: " + err.Error()}
	}
	d, err := chaosDraw(c, pl.Bench.Duration)
	if err != nil {
		return chaos.Schedule{}, err
	}
	return chaos.Generate(seed, choices, d), nil
}

// readSchedule reads --schedule FILE; the drawing flags, --seed and a
// --duration other than the file's window are refused beside it.
func readSchedule(c *cli.Context, path string, given plan.Values) (chaos.Schedule, error) {
	for _, name := range append([]string{"seed"}, chaosDrawFlags...) {
		if c.IsSet(name) {
			return chaos.Schedule{}, usageError{msg: fmt.Sprintf("--%s: draws a schedule, and --schedule %s gives one; drop one of them", name, path)}
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return chaos.Schedule{}, usageError{msg: fmt.Sprintf("--schedule %s: %v", path, err)}
	}
	s, err := chaos.Parse(string(b))
	if err != nil {
		return chaos.Schedule{}, usageError{msg: fmt.Sprintf("--schedule %s: %v", path, err)}
	}
	if given.Has("duration") {
		if d, err := time.ParseDuration(given.Get("duration")); err != nil || d != s.Window {
			return chaos.Schedule{}, usageError{msg: fmt.Sprintf("--duration %s: the schedule %s sets the window (%s); drop --duration", given.Get("duration"), path, s.Window)}
		}
	}
	if s.Drawn {
		given.Set("seed", strconv.FormatUint(s.Seed, 10))
	}
	return s, nil
}

// chaosSeed is --seed, or a random seed when none is given.
func chaosSeed(c *cli.Context) (uint64, error) {
	if !c.IsSet("seed") {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("drawing a seed: %w", err)
		}
		return binary.LittleEndian.Uint64(b[:]) >> 1, nil
	}
	seed, err := strconv.ParseUint(c.String("seed"), 10, 64)
	if err != nil {
		return 0, usageError{msg: fmt.Sprintf("--seed %q: want a whole number from 0 to 2^64-1", c.String("seed"))}
	}
	return seed, nil
}

// chaosDraw reads --fault-rate, --fault-for and --overlap over the window.
func chaosDraw(c *cli.Context, window time.Duration) (chaos.Draw, error) {
	d := chaos.DefaultDraw(window)
	rate, err := strconv.ParseFloat(c.String("fault-rate"), 64)
	if err != nil {
		return d, usageError{msg: fmt.Sprintf("--fault-rate %q: want a number of faults a minute, e.g. 6", c.String("fault-rate"))}
	}
	d.Rate = rate
	lo, hi, ok := strings.Cut(c.String("fault-for"), "..")
	minFor, err1 := time.ParseDuration(lo)
	maxFor, err2 := time.ParseDuration(hi)
	if !ok || err1 != nil || err2 != nil {
		return d, usageError{msg: fmt.Sprintf("--fault-for %q: want MIN..MAX durations, e.g. 1s..5s", c.String("fault-for"))}
	}
	d.MinFor, d.MaxFor, d.Hold = minFor, maxFor, minFor
	d.MaxOverlap = c.Int("overlap")
	if err := d.Check(); err != nil {
		flag := "fault-rate"
		switch {
		case strings.HasPrefix(err.Error(), "for="):
			flag = "fault-for"
		case strings.HasPrefix(err.Error(), "overlap"):
			flag = "overlap"
		case strings.HasPrefix(err.Error(), "window"):
			flag = "duration"
		}
		return d, usageError{msg: fmt.Sprintf("--%s: %v", flag, err)}
	}
	return d, nil
}

// shrinkOptions reads --shrink-tries and --budget, refused without --shrink.
func shrinkOptions(c *cli.Context) (chaos.ShrinkOptions, error) {
	o := chaos.ShrinkOptions{Tries: c.Int("shrink-tries"), MinFor: chaos.Step * 5, Tail: chaos.DefaultDraw(0).Tail}
	if !c.Bool("shrink") {
		for _, name := range []string{"shrink-tries", "budget"} {
			if c.IsSet(name) {
				return o, usageError{msg: fmt.Sprintf("--%s: bounds the shrink, and it runs only with --shrink", name)}
			}
		}
		return o, nil
	}
	if o.Tries < 1 || o.Tries > 1000 {
		return o, usageError{msg: fmt.Sprintf("--shrink-tries %d: want a whole number from 1 to 1000", o.Tries)}
	}
	if b := c.String("budget"); b != "0" {
		d, err := advise.ParseBudget(b)
		if err != nil {
			return o, err
		}
		o.Budget = d
	}
	if !c.Bool("quiet") {
		w := c.App.ErrWriter
		o.Progress = func(t chaos.Try) {
			word := "safe"
			if t.Unsafe {
				word = "UNSAFE"
			}
			fmt.Fprintf(w, "shrink try %d/%d: %s: %s\n", t.N, o.Tries, t.Move, word)
		}
	}
	return o, nil
}

// runChaos runs the schedule, shrinks it when asked and unsafe, writes the
// outcome, and exits 4 when the run was unsafe.
func runChaos(c *cli.Context, format results.Format, given plan.Values, s chaos.Schedule, sh chaos.ShrinkOptions) error {
	scheduleOut := c.App.Writer
	if format != results.FormatTable {
		scheduleOut = c.App.ErrWriter
	}
	topology := given.Get("topology")
	if topology == "" {
		topology = "single"
	}
	if err := chaos.WriteSchedule(scheduleOut, s, topology); err != nil {
		return err
	}
	store := storeRunner(c)
	run := func(ctx context.Context, v plan.Values) (*results.Result, error) { return store(ctx, v, "", 0) }
	trial, err := chaos.Run(c.Context, given, s, run)
	if err != nil {
		if trial.Result != nil && c.Context.Err() != nil {
			return fmt.Errorf("interrupted: the partial run is stored, its schedule in %s: %w", trial.ScheduleFile, err)
		}
		return err
	}
	out := chaos.Outcome{Trial: trial, Replay: replayLine(given, trial.ScheduleFile)}
	var shrinkErr error
	if c.Bool("shrink") && trial.Unsafe() {
		reproduce := func(ctx context.Context, s chaos.Schedule) (bool, error) {
			t, err := chaos.Run(ctx, given, s, run)
			return t.Unsafe(), err
		}
		shrunk, err := chaos.Shrink(c.Context, s, sh, reproduce)
		shrinkErr = err
		out.Shrunk = &shrunk
		out.ShrunkFile = filepath.Join(filepath.Dir(trial.ScheduleFile), trial.Result.ID+".smallest.schedule")
		if err := os.WriteFile(out.ShrunkFile, []byte(shrunk.Smallest.Format(topology)), 0o644); err != nil {
			return fmt.Errorf("storing the smallest schedule: %w", err)
		}
		out.Replay = replayLine(given, out.ShrunkFile)
	}
	if err := chaosOutput().Write(c.App.Writer, format, out); err != nil {
		return err
	}
	switch {
	case shrinkErr != nil:
		return fmt.Errorf("the shrink stopped: %w (the smallest schedule so far is stored in %s)", shrinkErr, out.ShrunkFile)
	case trial.Unsafe():
		return unsafeError{msg: "chaos: the run's history is unsafe (see above)"}
	}
	return nil
}

// replayLine is the command that replays the schedule in file with the run
// flags given (less those the schedule sets).
func replayLine(given plan.Values, file string) string {
	parts := []string{"lockbench chaos"}
	var names []string
	for name := range given {
		if name != "duration" && name != "seed" && name != "tag" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, val := range given[name] {
			parts = append(parts, "--"+name+"="+shellQuote(val))
		}
	}
	return strings.Join(append(parts, "--schedule="+shellQuote(file)), " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$\\*?;&|<>()`#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
