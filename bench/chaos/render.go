package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lockbench/lockbench/bench/check"
)

// Outcome is a chaos command's whole answer: the run of the schedule and,
// when it was shrunk, the shrink.
type Outcome struct {
	Trial  Trial
	Shrunk *Shrunk
	// ShrunkFile is where the smallest schedule was stored.
	ShrunkFile string
	// Replay is the command line that replays the smallest schedule (or
	// the schedule, when not shrunk).
	Replay string
}

// WriteSchedule prints a schedule before its run: where it came from and
// its faults, one a line, in --fault form.
func WriteSchedule(w io.Writer, s Schedule, topology string) error {
	from := "read from a file"
	if s.Drawn {
		from = fmt.Sprintf("seed %d", s.Seed)
	}
	_, err := fmt.Fprintf(w, "chaos schedule (%s, %s, window %s): %s\n", from, topology, s.Window, faultsText(len(s.Faults)))
	for _, f := range s.Faults {
		if _, err := fmt.Fprintf(w, "  %s\n", f); err != nil {
			return err
		}
	}
	return err
}

func faultsText(n int) string {
	if n == 1 {
		return "1 fault"
	}
	return fmt.Sprintf("%d faults", n)
}

// WriteTable prints the outcome: the run's check, then the shrink's tries
// and the smallest schedule.
func WriteTable(w io.Writer, o Outcome) error {
	var b strings.Builder
	t := o.Trial
	fmt.Fprintf(&b, "run %s: %s\n", t.Result.ID, verdictLine(t.Report))
	fmt.Fprintf(&b, "schedule stored in %s\n", t.ScheduleFile)
	if s := o.Shrunk; s != nil {
		fmt.Fprintf(&b, "\nshrink: %d tries\n", len(s.Tries))
		for _, tr := range s.Tries {
			word := "safe"
			if tr.Unsafe {
				word = "UNSAFE, kept"
			}
			fmt.Fprintf(&b, "  %2d  %-60s %s, window %s: %s\n", tr.N, tr.Move, faultsText(len(tr.Schedule.Faults)), tr.Schedule.Window, word)
		}
		how := "minimal: no schedule one move smaller reproduced in one try each"
		if !s.Minimal {
			how = "not minimal: " + s.Stopped
		}
		fmt.Fprintf(&b, "smallest: %s, window %s (%s)\n", faultsText(len(s.Smallest.Faults)), s.Smallest.Window, how)
		if len(s.Smallest.Faults) == 0 {
			b.WriteString("  no fault at all: the lock broke without one\n")
		}
		for _, f := range s.Smallest.Faults {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		fmt.Fprintf(&b, "stored in %s\n", o.ShrunkFile)
	}
	if o.Replay != "" {
		fmt.Fprintf(&b, "replay: %s\n", o.Replay)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// verdictLine is the check's word and counts in one line.
func verdictLine(r *check.Report) string {
	if r == nil {
		return "not checked (interrupted)"
	}
	c := r.Counts
	return fmt.Sprintf("%s (double grants %d, overruns %d, stale writes accepted %d, fencing rejected %d, possible double grants %d)",
		r.Word(), c.DoubleGrants, c.Overruns, c.StaleAccepted, c.FencingRejected, c.Possible)
}

// outcomeJSON is the outcome as --format json writes it.
type outcomeJSON struct {
	Seed         *uint64       `json:"seed"`
	Window       string        `json:"window"`
	Faults       []string      `json:"faults"`
	RunID        string        `json:"run_id"`
	ScheduleFile string        `json:"schedule_file"`
	Verdict      string        `json:"verdict"`
	Unsafe       bool          `json:"unsafe"`
	Counts       *check.Counts `json:"counts"`
	Shrink       *shrinkJSON   `json:"shrink,omitempty"`
	Replay       string        `json:"replay,omitempty"`
}

type shrinkJSON struct {
	Tries   int      `json:"tries"`
	Minimal bool     `json:"minimal"`
	Stopped string   `json:"stopped,omitempty"`
	Window  string   `json:"window"`
	Faults  []string `json:"faults"`
	File    string   `json:"file"`
}

// WriteJSON writes the outcome as one JSON object.
func WriteJSON(w io.Writer, o Outcome) error {
	t := o.Trial
	out := outcomeJSON{Window: t.Schedule.Window.String(), Faults: t.Schedule.Specs(), RunID: t.Result.ID,
		ScheduleFile: t.ScheduleFile, Verdict: "not checked", Replay: o.Replay}
	if t.Schedule.Drawn {
		seed := t.Schedule.Seed
		out.Seed = &seed
	}
	if t.Report != nil {
		out.Verdict, out.Unsafe, out.Counts = t.Report.Word(), t.Unsafe(), &t.Report.Counts
	}
	if s := o.Shrunk; s != nil {
		out.Shrink = &shrinkJSON{Tries: len(s.Tries), Minimal: s.Minimal, Stopped: s.Stopped, Window: s.Smallest.Window.String(),
			Faults: s.Smallest.Specs(), File: o.ShrunkFile}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
