// Package chaos draws seeded schedules of faults that fit a topology,
// applies them over one run whose history is checked at the end, and
// shrinks a schedule that broke the lock to a smallest one that still does:
// Jepsen's nemesis and generator, over lockbench's fault registry. A
// schedule is a list of the fault values --fault reads, so a schedule file
// is a run's --fault flags, one a line.
package chaos

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// Schedule is the faults of one chaos run and the window they fall in.
type Schedule struct {
	// Seed is the seed it was drawn from; 0 with Drawn false for a
	// schedule read from a file or shrunk.
	Seed uint64
	// Drawn says it was drawn from Seed (and replays with --seed Seed).
	Drawn bool
	// Window is the run's measured window (--duration).
	Window time.Duration
	// Faults are in the order of their at=.
	Faults []compose.FaultSpec
}

// maxScheduleFaults bounds a schedule, drawn or read: more faults than
// this in one run would be a mistake rather than a plan.
const maxScheduleFaults = 10_000

// maxWindow bounds a schedule's window.
const maxWindow = 24 * time.Hour

// Format renders s as a schedule file: comment lines saying where it came
// from, a window line, and one fault a line in --fault form. Parse reads it
// back to the same schedule (less the comments).
func (s Schedule) Format(topology string) string {
	var b strings.Builder
	b.WriteString("# lockbench chaos schedule: one fault a line, as --fault reads it\n")
	if topology != "" {
		fmt.Fprintf(&b, "# topology %s\n", topology)
	}
	if s.Drawn {
		fmt.Fprintf(&b, "seed %d\n", s.Seed)
	}
	fmt.Fprintf(&b, "window %s\n", s.Window)
	for _, f := range s.Faults {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Parse reads a schedule file: blank lines and lines starting with # are
// skipped; "window DURATION" (once, required) is the run's window;
// "seed N" (at most once) records the seed it was drawn from; every other
// line is a fault in --fault form, inside the window. Its errors are one
// line naming the line and what is accepted.
func Parse(text string) (Schedule, error) {
	var s Schedule
	var haveWindow bool
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(format string, args ...any) (Schedule, error) {
			return Schedule{}, fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, args...))
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "window":
			d, err := time.ParseDuration(rest)
			switch {
			case haveWindow:
				return bad("window given twice")
			case err != nil || d < 100*time.Millisecond || d > maxWindow:
				return bad("window %q: want a duration from 100ms to %s, e.g. window 30s", rest, maxWindow)
			}
			s.Window, haveWindow = d, true
		case "seed":
			seed, err := strconv.ParseUint(rest, 10, 64)
			switch {
			case s.Drawn:
				return bad("seed given twice")
			case err != nil:
				return bad("seed %q: want a whole number from 0 to 2^64-1", rest)
			}
			s.Seed, s.Drawn = seed, true
		default:
			f, err := compose.ParseFault(line)
			if err != nil {
				return bad("%v", err)
			}
			if len(s.Faults) == maxScheduleFaults {
				return bad("more than %d faults", maxScheduleFaults)
			}
			s.Faults = append(s.Faults, f)
		}
	}
	if err := sc.Err(); err != nil {
		return Schedule{}, fmt.Errorf("reading the schedule: %w", err)
	}
	if !haveWindow {
		return Schedule{}, fmt.Errorf("no window line; a schedule says its run's window, e.g. window 30s")
	}
	for _, f := range s.Faults {
		if f.At >= s.Window {
			return Schedule{}, fmt.Errorf("fault %q: at=%s is not inside the window %s", f.String(), f.At, s.Window)
		}
	}
	s.sort()
	return s, nil
}

// sort orders the faults by at=, keeping the order of faults at one time.
func (s *Schedule) sort() {
	slices.SortStableFunc(s.Faults, func(a, b compose.FaultSpec) int { return int(a.At - b.At) })
}

// Specs are the faults in --fault form.
func (s Schedule) Specs() []string {
	out := make([]string, len(s.Faults))
	for i, f := range s.Faults {
		out[i] = f.String()
	}
	return out
}

// Struck is how long faults are in effect over the schedule, added up: a
// measure of its size after the number of faults.
func (s Schedule) Struck() time.Duration {
	var d time.Duration
	for _, f := range s.Faults {
		d += f.For
	}
	return d
}

// clone is s with its own fault slice.
func (s Schedule) clone() Schedule {
	s.Faults = slices.Clone(s.Faults)
	return s
}
