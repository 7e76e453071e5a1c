package plan

import (
	"context"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// Batch is the one path from plans to stored results: it executes plans one
// after another, stores each result in its plan's --out directory and hands
// the results back. run, sweep, capacity, tune-ttl, lock-cost and the
// commands built on their cells (scenario, renewal-check, failover-map,
// advise) all execute through it, so a run is stored and reported the same
// way whichever command made it.
type Batch struct {
	// Build is lockbench's version, recorded in every result.
	Build string
	// Log gets each run's step lines and where its result was stored, for a
	// plan that is not --quiet; nil for none.
	Log io.Writer
	// Progress gets the live line of a plan that is not --quiet; nil for
	// none (the caller leaves it nil where no terminal shows it).
	Progress io.Writer
	// Warn gets the line saying a run had no success, even for a --quiet
	// plan, since every figure of such a run is of failures; nil for none.
	Warn io.Writer
	// Stored is told of each result once it is stored in dir; nil for none.
	Stored func(dir string, r *results.Result)
	// Topology, when set, is lent to every run instead of each bringing
	// its own up (see Env.Topology).
	Topology *compose.Topology
}

// Run executes each plan count times (the repeats of one plan share a group
// id, so results show and compare treat them as one configuration) and
// stores every result. It stops after a partial (interrupted) result. An
// error comes with the results stored before it.
func (b Batch) Run(ctx context.Context, plans []Plan, count int) ([]*results.Result, error) {
	var done []*results.Result
	for _, rp := range repeat(plans, count) {
		r, err := b.execute(ctx, rp.Plan, rp.group, rp.repeat)
		if err != nil {
			return done, err
		}
		done = append(done, r)
		if r.Partial {
			break
		}
	}
	return done, nil
}

// RunValues executes one run of values quietly (a cell of a grid, a step of
// a ramp, a trial) and stores its result; group and repeat place it among
// repeats of its configuration ("" and 0 for a lone run). Its signature is
// the runner sweep, scenario and advise take.
func (b Batch) RunValues(ctx context.Context, v Values, group string, repeat int) (*results.Result, error) {
	v.Set("quiet", "true")
	plans, err := Expand(v)
	if err != nil {
		return nil, err
	}
	return b.execute(ctx, plans[0], group, repeat)
}

// execute runs one plan and stores its result.
func (b Batch) execute(ctx context.Context, pl Plan, group string, repeat int) (*results.Result, error) {
	env := Env{Group: group, Repeat: repeat, Build: b.Build, Topology: b.Topology, Warn: b.Warn}
	if !pl.Quiet {
		env.Log, env.Progress = b.Log, b.Progress
	}
	r, err := Execute(ctx, pl, env)
	if err != nil {
		return nil, err
	}
	path, err := results.Write(pl.OutDir, r)
	if err != nil {
		return nil, err
	}
	if b.Stored != nil {
		b.Stored(pl.OutDir, r)
	}
	env.logf("result stored in %s", path)
	if line := results.NoSuccessLine(r); line != "" && b.Warn != nil {
		fmt.Fprintln(b.Warn, line)
	}
	return r, nil
}

// MaxRepeats bounds --count, the runs of one configuration (and a sweep
// file's count:): more would be a mistake rather than a plan.
const MaxRepeats = 1000

// CheckRepeats refuses a --count out of 1 to MaxRepeats.
func CheckRepeats(n int) error {
	if n < 1 || n > MaxRepeats {
		return badInput("count", "--count %d: %s", n, RepeatsHelp())
	}
	return nil
}

// RepeatsHelp says what --count accepts, for other spellings of it (a sweep
// file's count:).
func RepeatsHelp() string { return fmt.Sprintf("want a whole number from 1 to %d", MaxRepeats) }

// repeated is a plan with its place in a group of repeats.
type repeated struct {
	Plan
	group  string
	repeat int
}

// repeat lists each plan count times; repeats of one plan share a group id.
func repeat(plans []Plan, count int) []repeated {
	var out []repeated
	for _, p := range plans {
		group := ""
		if count > 1 {
			group = "g-" + NewRunID()
		}
		for i := range count {
			out = append(out, repeated{Plan: p, group: group, repeat: i})
		}
	}
	return out
}
