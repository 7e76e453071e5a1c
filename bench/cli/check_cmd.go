package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/check"
	"github.com/lockbench/lockbench/results"
)

// exitUnsafe is check's exit code for a history that broke mutual exclusion.
const exitUnsafe = 4

// exitUnknown is check's exit code for a history that is not unsafe but
// has a key whose linearizability search ran out of its --timeout: neither safe
// nor unsafe, so neither 0 nor 4.
const exitUnknown = 5

// unsafeError marks an unsafe history (exit code 4).
type unsafeError struct{ msg string }

func (e unsafeError) Error() string { return e.msg }

// unknownError marks a history the check could not decide (exit code 5).
type unknownError struct{ msg string }

func (e unknownError) Error() string { return e.msg }

func checkCommand() *cli.Command {
	return &cli.Command{
		Name: "check",
		Usage: "check run histories (--history) against a lease-lock model (replayed per key; Porcupine draws --visualize), reading them once in bounded memory; " +
			"exit 4 when unsafe, 5 when a key's search ran out of --timeout (unknown)",
		ArgsUsage: "HISTORY… (the files of one run's generators are merged)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "visualize", Usage: "write Porcupine's visualization of every violating key, with the run's faults, to FILE (HTML)"},
			&cli.StringFlag{Name: "drift", Usage: "clock-drift allowance instead of the run's (1% of the TTL + 2 ms): a grant less than this before the earlier lease's end counts as an overrun, not a double grant"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "bound on the linearizability search per key (the model's replay of its segments), all its segments together (0: none); " +
				"a key whose search runs out of it is unknown, and check exits 5 unless the history is unsafe"},
			checkFormatFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageError{msg: "check needs at least one HISTORY file (written by run --history)"}
			}
			for _, a := range c.Args().Slice() {
				if strings.HasPrefix(a, "-") {
					return usageError{msg: fmt.Sprintf("check: %q after a HISTORY file: flags go before the files (lockbench check --visualize out.html run.jsonl.gz)", a)}
				}
			}
			format, err := checkFormat(c, checkOutput())
			if err != nil {
				return err
			}
			if c.Duration("timeout") < 0 {
				return usageError{msg: fmt.Sprintf("--timeout %v: want a duration of 0 (none) or more, e.g. 1m", c.Duration("timeout"))}
			}
			opts := check.Options{Timeout: c.Duration("timeout"), Visualize: c.String("visualize") != ""}
			if c.IsSet("drift") {
				d, err := time.ParseDuration(c.String("drift"))
				if err != nil || d < 0 {
					return usageError{msg: fmt.Sprintf("--drift %q: want a duration of 0 or more, e.g. 5ms", c.String("drift"))}
				}
				opts.Drift, opts.DriftSet = d, true
			}
			rep, err := check.CheckFiles(c.Args().Slice(), opts)
			if err != nil {
				return usageError{msg: fmt.Sprintf("check: %v", err)}
			}
			if err := checkOutput().Write(c.App.Writer, format, rep); err != nil {
				return err
			}
			if path := c.String("visualize"); path != "" {
				if err := visualize(rep, path); err != nil {
					return err
				}
				if rep.Illegal() > 0 {
					fmt.Fprintf(c.App.ErrWriter, "visualization of %d violating key segment(s): %s\n", rep.Illegal(), path)
				}
			}
			switch {
			case rep.Unsafe():
				return unsafeError{msg: "check: the history is unsafe (see above)"}
			case rep.Undecided():
				return unknownError{msg: fmt.Sprintf("check: unknown: the linearizability search ran out of --timeout %v on %d key(s) (see above)", rep.Timeout, len(rep.Unknown))}
			}
			return nil
		},
	}
}

// visualize writes the visualization, or says there is nothing to draw.
func visualize(rep *check.Report, path string) error {
	if rep.Illegal() == 0 {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--visualize: %w", err)
	}
	if err := rep.Visualize(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// checkJSON is the report as JSON: the counts, the verdict, the failing keys.
// checkOutput is check's report in each format it offers.
func checkOutput() results.Output[*check.Report] {
	return results.Output[*check.Report]{
		Table: func(w io.Writer, r *check.Report) error { r.Render(w); return nil },
		JSON:  func(w io.Writer, r *check.Report) error { return writeJSON(w, checkJSON(r)) },
	}
}

// checkFormatFlag is check's --format: its help has no categories.
func checkFormatFlag() *cli.StringFlag {
	f := formatFlag(checkOutput())
	f.Category = ""
	return f
}

func checkJSON(r *check.Report) any {
	type key struct {
		check.Key
		check.Counts
		Violations int    `json:"violations"`
		Porcupine  string `json:"linearizability"`
	}
	out := struct {
		RunID     string       `json:"run_id"`
		Safe      bool         `json:"safe"`
		Verdict   string       `json:"verdict"`
		Counts    check.Counts `json:"window"`
		Outside   check.Counts `json:"outside_window"`
		DriftNS   int64        `json:"drift_ns"`
		Keys      int          `json:"keys_checked"`
		Events    int          `json:"events_checked"`
		Porcupine string       `json:"linearizability"`
		Complete  bool         `json:"complete"`
		Failing   []key        `json:"failing_keys"`
		Unknown   []check.Key  `json:"unknown_keys"`
	}{RunID: r.Header.RunID, Safe: !r.Unsafe() && !r.Undecided(), Verdict: r.Word(), Unknown: append([]check.Key{}, r.Unknown...), Counts: r.Counts, Outside: r.Outside, DriftNS: int64(r.Drift), Keys: r.CheckedKeys,
		Events: r.CheckedEvents, Porcupine: string(r.Porcupine), Complete: r.Complete, Failing: []key{}}
	for _, k := range r.Keys {
		out.Failing = append(out.Failing, key{Key: k.Key, Counts: k.Counts, Violations: k.ViolationsFound, Porcupine: string(k.Porcupine)})
	}
	return out
}
