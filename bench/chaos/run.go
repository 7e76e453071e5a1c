package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/bench/check"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// Runner executes one run of the given flags and returns its stored result
// (plan.Batch.RunValues without its group).
type Runner func(ctx context.Context, v plan.Values) (*results.Result, error)

// Trial is one run of a schedule, checked.
type Trial struct {
	Schedule Schedule
	Result   *results.Result
	// Report is the check of the run's history; nil when the run was
	// interrupted before its history was whole.
	Report *check.Report
	// ScheduleFile is where the schedule was stored, beside the result.
	ScheduleFile string
}

// Unsafe says the checked history broke the lock.
func (t Trial) Unsafe() bool { return t.Report != nil && t.Report.Unsafe() }

// Values are the run flags of schedule s on top of base: its faults, its
// window, a history per run (in base's --history DIR/, else beside the
// results), and a tag naming the seed it was drawn from.
func Values(base plan.Values, s Schedule) plan.Values {
	v := base.Clone()
	v.Set("fault", s.Specs()...)
	if len(s.Faults) == 0 {
		delete(v, "fault")
	}
	v.Set("duration", s.Window.String())
	if h := v.Get("history"); h == "" || h == plan.HistoryOff {
		v.Set("history", strings.TrimSuffix(outDir(v), "/")+"/")
	}
	tag := "chaos=schedule"
	if s.Drawn {
		tag = "chaos=seed-" + strconv.FormatUint(s.Seed, 10)
	}
	v.Set("tag", append(v["tag"], tag)...)
	return v
}

// outDir is where the run's result goes.
func outDir(v plan.Values) string {
	if d := v.Get("out"); d != "" {
		return d
	}
	return "./runs"
}

// Check refuses a schedule whose faults or window the run flags base
// cannot take (a fault that does not fit the topology, a window too short),
// with the flag's one line, before anything starts.
func Check(base plan.Values, s Schedule) error {
	v := Values(base, s)
	if err := os.MkdirAll(outDir(v), 0o755); err != nil {
		return fmt.Errorf("results dir %s: %w", outDir(v), err)
	}
	_, err := plan.Expand(v)
	return err
}

// Run applies s over one run of base and checks its history (streamed, so
// a long run's history is read in bounded memory), and stores s beside the
// result as ID.schedule. Faults are applied and healed by the run itself
// (compose.Topology.Schedule): every fault is undone when the run ends, on
// success, error and interruption.
func Run(ctx context.Context, base plan.Values, s Schedule, run Runner) (Trial, error) {
	v := Values(base, s)
	if err := os.MkdirAll(outDir(v), 0o755); err != nil {
		return Trial{}, fmt.Errorf("results dir %s: %w", outDir(v), err)
	}
	t := Trial{Schedule: s}
	r, err := run(ctx, v)
	if err != nil {
		return t, err
	}
	t.Result = r
	t.ScheduleFile = filepath.Join(outDir(v), r.ID+".schedule")
	if err := os.WriteFile(t.ScheduleFile, []byte(s.Format(v.Get("topology"))), 0o644); err != nil {
		return t, fmt.Errorf("storing the schedule: %w", err)
	}
	if r.Partial {
		return t, ctx.Err()
	}
	if r.History == "" {
		return t, errors.New("the run kept no history to check")
	}
	rep, err := check.CheckFiles([]string{r.History}, check.Options{})
	if err != nil {
		return t, fmt.Errorf("checking %s: %w", r.History, err)
	}
	t.Report = rep
	return t, nil
}

// Choices are the faults a schedule may draw for the run pl: those of kinds
// (every kind that heals when empty) that fit its topology from where its
// servers come.
func Choices(pl plan.Plan, kinds []compose.FaultKind) ([]compose.FaultSpec, error) {
	provider := pl.Provider
	if len(pl.URLs) > 0 {
		provider = compose.ProviderExternal
	}
	return compose.ChaosChoices(pl.Topology, provider, kinds)
}
