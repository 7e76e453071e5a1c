package failovermap

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/results"
)

// A failover's statuses are advise's: one budgeted batch of runs, one set of
// words for how each ended.
var (
	statusMeasured    = string(advise.Measured)
	statusReused      = string(advise.Reused)
	statusFailed      = string(advise.Failed)
	statusSkipped     = string(advise.Skipped)
	statusInterrupted = string(advise.Interrupted)
)

// Deps are what Run needs from outside: advise's, since the batch is run
// the same way (a runner that stores, results to --resume from, progress).
type Deps = advise.Deps

// Map is the failover map: the plan and each cell's failovers.
type Map struct {
	Plan  Plan         `json:"plan"`
	Cells []CellResult `json:"cells"`
	// Elapsed is the wall time of the runs, to set against Plan.Budget.
	Elapsed time.Duration `json:"elapsed"`
	// Interrupted is true when Ctrl-C stopped the runs.
	Interrupted bool `json:"interrupted"`
}

// Label names one failover's stored result; --resume finds it by this name
// and by its configuration.
func Label(c Cell, n int) string { return fmt.Sprintf("failover-map / %s / failover %d", c, n) }

// Run runs the plan's failovers round by round (every cell's first, then
// every cell's second…), so that a run cut short by Ctrl-C or the budget
// leaves each cell something. A stored result of the same label and
// configuration stands for a failover (--resume). One that would end past
// advise.HardShare × the budget is skipped; one running at that limit is cut.
func Run(ctx context.Context, p Plan, deps Deps) Map {
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	hard := time.Duration(float64(p.Budget) * advise.HardShare)
	runCtx, cancel := context.WithDeadline(ctx, start.Add(hard))
	defer cancel()
	m := Map{Plan: p}
	byCell := make([][]Failover, len(p.Cells))
	total := p.PerCell * len(p.Cells)
	var spent, planned time.Duration
	done := 0
	for round := range p.PerCell {
		for i, c := range p.Cells {
			v := c.Values(p.spec, p.Axes.WaitTimeout)
			v.Set("label", Label(c, round+1))
			v.Set("out", p.Out)
			est := scaled(c.Estimate(p.spec), spent, planned)
			elapsed := now().Sub(start)
			var f Failover
			switch r := reusable(deps.Stored, v); {
			case ctx.Err() != nil:
				f.Status, f.Detail = statusSkipped, "not run: interrupted before it started"
				m.Interrupted = true
			case r != nil:
				f = readFailover(c, p.spec, r)
				f.Status = statusReused
			case elapsed+est > hard:
				f.Status, f.Detail = statusSkipped, fmt.Sprintf("not run: at %s it would end past %s (%.1f × the budget); --resume runs it",
					elapsed.Round(time.Second), hard.Round(time.Second), advise.HardShare)
			default:
				if deps.Progress != nil {
					deps.Progress(advise.Progress{Done: done, Total: total, Label: Label(c, round+1), Elapsed: elapsed,
						ETA: eta(p, total-done, spent, planned)})
				}
				t0 := now()
				f = measure(ctx, runCtx, deps.Run, c, p, v)
				spent, planned = spent+now().Sub(t0), planned+c.Estimate(p.spec)
				m.Interrupted = m.Interrupted || ctx.Err() != nil
			}
			done++
			byCell[i] = append(byCell[i], f)
		}
	}
	for i, c := range p.Cells {
		m.Cells = append(m.Cells, summarise(c, p.PerCell, byCell[i]))
	}
	m.Elapsed = now().Sub(start)
	return m
}

// reusable is a stored complete result of the failover v describes: its
// label, and its configuration as advise matches it.
func reusable(stored []*results.Result, v plan.Values) *results.Result {
	label := v.Get("label")
	var same []*results.Result
	for _, r := range stored {
		if r.Label == label {
			same = append(same, r)
		}
	}
	return advise.Match(same, v)
}

// measure runs one failover and reads it.
func measure(ctx, runCtx context.Context, run sweep.Runner, c Cell, p Plan, v plan.Values) Failover {
	r, err := run(runCtx, v.Clone(), "failover-map", 0)
	switch {
	case err != nil && runCtx.Err() != nil:
		what := "interrupted"
		if ctx.Err() == nil {
			what = fmt.Sprintf("cut at %.1f × the budget", advise.HardShare)
		}
		return Failover{Status: statusInterrupted, Detail: what + " before its window: nothing measured"}
	case err != nil:
		return Failover{Status: statusFailed, Detail: err.Error()}
	case r.Partial:
		return Failover{RunID: r.ID, Status: statusInterrupted, Detail: "interrupted in its window: its partial result is stored, not used"}
	}
	f := readFailover(c, p.spec, r)
	f.Status = statusMeasured
	return f
}

// scaled is an estimate corrected by how the runs so far compared with
// theirs (never below it: a fast start proves little).
func scaled(est, spent, planned time.Duration) time.Duration {
	if planned <= 0 || spent <= planned {
		return est
	}
	return time.Duration(float64(est) * float64(spent) / float64(planned))
}

// eta is the time the failovers left should take: their mean estimate,
// scaled by the pace so far.
func eta(p Plan, left int, spent, planned time.Duration) time.Duration {
	if len(p.Cells) == 0 {
		return 0
	}
	perRound := p.Estimate / time.Duration(max(p.PerCell, 1))
	each := perRound / time.Duration(len(p.Cells))
	return scaled(each*time.Duration(left), spent, planned)
}
