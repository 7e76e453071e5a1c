package failovermap

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/pool"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/compose"
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
// the same way (a runner that stores, results to --resume from, progress),
// and for successive failovers a runner on a topology kept up between them.
type Deps struct {
	advise.Deps
	// On, when set, is the runner of one failover on topo, a topology the
	// run neither brings up nor closes (plan.Batch's Topology): the cells
	// that can (Cell.Successive) then run their failovers one after
	// another on one topology. Nil: every failover brings up its own.
	On func(topo *compose.Topology) sweep.Runner
	// Up brings up the topology successive failovers share; nil:
	// compose.Up with local processes.
	Up func(ctx context.Context, spec compose.Spec) (*compose.Topology, error)
}

// Map is the failover map: the plan and each cell's failovers.
type Map struct {
	Plan  Plan         `json:"plan"`
	Cells []CellResult `json:"cells"`
	// Elapsed is the wall time of the runs, to set against Plan.Budget.
	Elapsed time.Duration `json:"elapsed"`
	// Interrupted is true when Ctrl-C stopped the runs.
	Interrupted bool `json:"interrupted"`
	// BringUps counts the topologies successive failovers were run on;
	// Refused says why a topology was not handed to the next failover
	// (its state after a failover was not clean), once each.
	BringUps int      `json:"bring_ups"`
	Refused  []string `json:"refused,omitempty"`
	// Measured counts the failovers run (not reused); PerMinute is them
	// over Elapsed, nil when none ran.
	Measured  int      `json:"measured"`
	PerMinute *float64 `json:"failovers_per_minute"`
}

// Label names one failover's stored result; --resume finds it by this name
// and by its configuration.
func Label(c Cell, n int) string { return fmt.Sprintf("failover-map / %s / failover %d", c, n) }

// Run runs the plan's failovers round by round (every cell's first, then
// every cell's second…), so that a run cut short by Ctrl-C or the budget
// leaves each cell something; p.Parallel failovers of a round run at once
// (pool.Round), each on its own servers, and are recorded in cell order. A
// stored result of the same label and configuration stands for a failover
// (--resume). One that would end past advise.HardShare × the budget is
// skipped; one running at that limit is cut. Then, while the budget lasts,
// a cell with fewer conclusive failovers than planned (a kill that fired
// late on a stalled machine, nobody inside) gets more, up to as many
// again: the plan asks for conclusive failovers.
func Run(ctx context.Context, p Plan, deps Deps) Map {
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	b := &batch{p: p, deps: deps, now: now, start: now(), byCell: make([][]Failover, len(p.Cells)),
		total: p.PerCell * len(p.Cells)}
	// One rig per slot of the pool: a slot runs one failover at a time,
	// so successive failovers on a rig still follow one another.
	for range p.width() {
		b.rigs = append(b.rigs, &rig{deps: deps, spec: p.spec})
	}
	hard := time.Duration(float64(p.Budget) * advise.HardShare)
	runCtx, cancel := context.WithDeadline(ctx, b.start.Add(hard))
	defer cancel()
	defer func() {
		for _, g := range b.rigs {
			g.close()
		}
	}()
	every := make([]int, len(p.Cells))
	for i := range every {
		every[i] = i
	}
	for range p.PerCell {
		b.round(ctx, runCtx, every, hard, false)
	}
	for range p.PerCell {
		var short []int
		for i := range p.Cells {
			if conclusive(b.byCell[i]) < p.PerCell {
				short = append(short, i)
			}
		}
		if len(short) == 0 {
			break
		}
		b.total += len(short)
		if !b.round(ctx, runCtx, short, hard, true) {
			b.total = b.done
			break
		}
	}
	m := Map{Plan: p, Interrupted: b.interrupted}
	for i, c := range p.Cells {
		m.Cells = append(m.Cells, summarise(c, p.PerCell, b.byCell[i]))
	}
	m.Elapsed = now().Sub(b.start)
	for _, g := range b.rigs {
		m.BringUps += g.bringUps
		for _, why := range g.refused {
			if !slices.Contains(m.Refused, why) {
				m.Refused = append(m.Refused, why)
			}
		}
	}
	for _, fs := range b.byCell {
		for _, f := range fs {
			if f.Status == statusMeasured {
				m.Measured++
			}
		}
	}
	if m.Measured > 0 && m.Elapsed > 0 {
		pm := float64(m.Measured) / m.Elapsed.Minutes()
		m.PerMinute = &pm
	}
	return m
}

// batch is one Run's failovers as they go.
type batch struct {
	p              Plan
	deps           Deps
	now            func() time.Time
	start          time.Time
	rigs           []*rig
	byCell         [][]Failover
	done, total    int
	spent, planned time.Duration
	interrupted    bool
}

// pending is one failover of a round: its cell, its run flags, and what
// became of it where it was settled without running (reused, skipped).
type pending struct {
	cell    int
	n       int
	v       plan.Values
	settled bool
	f       Failover
	took    time.Duration
}

// round runs (or reuses, or skips) the next failover of each cell listed.
// A top-up round (topUp) runs a failover only where it ends within the
// budget, and leaves out the rest once one does not, and those Ctrl-C
// stopped; it reports false when it left any out. A planned round records
// those Ctrl-C stopped as skipped.
func (b *batch) round(ctx, runCtx context.Context, cells []int, hard time.Duration, topUp bool) bool {
	p := b.p
	jobs := make([]pending, len(cells))
	for k, i := range cells {
		n := len(b.byCell[i]) + 1
		jobs[k] = pending{cell: i, n: n, v: p.failoverValues(p.Cells[i], n)}
	}
	over := false
	outcomes := pool.Round[Failover]{
		Size: p.Parallel,
		Start: func(k int) bool {
			c := p.Cells[jobs[k].cell]
			if topUp && (over || b.now().Sub(b.start)+scaled(c.Estimate(p.spec), b.spent, b.planned) > p.Budget) {
				over = true
				return false
			}
			return b.begin(&jobs[k], hard)
		},
		Run: func(ctx context.Context, slot, k int) (Failover, error) {
			t0 := b.now()
			f := b.rigs[slot].failover(ctx, runCtx, p.Cells[jobs[k].cell], p, jobs[k].v)
			jobs[k].took = b.now().Sub(t0)
			return f, nil
		},
		Done: func(k int, _ Failover, _ error) {
			b.spent, b.planned = b.spent+jobs[k].took, b.planned+p.Cells[jobs[k].cell].Estimate(p.spec)
			b.interrupted = b.interrupted || ctx.Err() != nil
			b.done++
		},
	}.Go(ctx, len(jobs))
	for k, out := range outcomes {
		j := jobs[k]
		switch {
		case j.settled:
			b.byCell[j.cell] = append(b.byCell[j.cell], j.f)
		case out.Ran:
			b.byCell[j.cell] = append(b.byCell[j.cell], out.Value)
		case topUp:
			// Left out: past the budget, or after Ctrl-C.
		default:
			b.interrupted = true
			b.done++
			b.byCell[j.cell] = append(b.byCell[j.cell], Failover{Status: statusSkipped, Detail: "not run: interrupted before it started"})
		}
	}
	return !over && ctx.Err() == nil
}

// begin settles failover j where it needs no run (reused, or past the
// hard limit) and reports whether it is to run; it tells the progress of
// one that is.
func (b *batch) begin(j *pending, hard time.Duration) bool {
	p, c := b.p, b.p.Cells[j.cell]
	elapsed := b.now().Sub(b.start)
	if r := advise.MatchLabelled(b.deps.Stored, j.v); r != nil {
		j.f = readFailover(c, p.spec, r)
		j.f.Status, j.settled = statusReused, true
		b.done++
		return false
	}
	if est := scaled(c.Estimate(p.spec), b.spent, b.planned); elapsed+est > hard {
		j.f.Status, j.f.Detail = statusSkipped, fmt.Sprintf("not run: at %s it would end past %s (%.1f × the budget); --resume runs it",
			elapsed.Round(time.Second), hard.Round(time.Second), advise.HardShare)
		j.settled = true
		b.done++
		return false
	}
	if b.deps.Progress != nil {
		b.deps.Progress(advise.Progress{Done: b.done, Total: b.total, Label: Label(c, j.n), Elapsed: elapsed,
			ETA: eta(p, b.total-b.done, b.spent, b.planned)})
	}
	return true
}

// conclusive counts the failovers measured or reused that were conclusive.
func conclusive(fs []Failover) int {
	n := 0
	for _, f := range fs {
		if (f.Status == statusMeasured || f.Status == statusReused) && f.Conclusive {
			n++
		}
	}
	return n
}

// rig keeps the topology successive failovers share: brought up for the
// first, restored and verified clean before each next one, brought up
// afresh when it is not.
type rig struct {
	deps Deps
	spec compose.Spec
	topo *compose.Topology
	// last is the last failover run on topo ("" when none), and lastKill
	// no earlier than its kill.
	last     string
	lastKill time.Time
	// nth counts the failovers on topo.
	nth      int
	bringUps int
	refused  []string
}

// failover runs one failover of c: on the shared topology where the cell
// takes one, else through deps.Run (a fresh topology).
func (g *rig) failover(ctx, runCtx context.Context, c Cell, p Plan, v plan.Values) Failover {
	if g.deps.On == nil || !c.Successive(p.spec) {
		return measure(ctx, runCtx, g.deps.Run, c, p, v)
	}
	if err := g.ready(runCtx); err != nil {
		if runCtx.Err() != nil {
			return cutShort(ctx)
		}
		return Failover{Status: statusFailed, Detail: err.Error()}
	}
	g.nth++
	f := measure(ctx, runCtx, g.deps.On(g.topo), c, p, v)
	f.OnTopology = g.nth
	if f.RunID == "" || f.Status != statusMeasured {
		// What the run left is unknown: the next failover gets a fresh one.
		g.close()
		return f
	}
	t := timingOf(c, p.spec)
	g.last, g.lastKill = f.RunID, time.Now().Add(-(t.Window - t.KillAt))
	return f
}

// ready has topo up and clean for the next failover: the last one's dead
// primary restored as a replica and the state verified, or a fresh
// topology where that failed.
func (g *rig) ready(ctx context.Context) error {
	if g.topo != nil && g.last != "" {
		err := g.topo.RestoreReplica(ctx, g.lastKill)
		if err == nil {
			err = g.topo.VerifyClean(ctx, plan.KeyPrefix(g.last))
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			if why := fmt.Sprintf("after %s: %v", g.last, err); !slices.Contains(g.refused, why) {
				g.refused = append(g.refused, why)
			}
			g.close()
		}
	}
	if g.topo != nil {
		return nil
	}
	up := g.deps.Up
	if up == nil {
		up = func(ctx context.Context, spec compose.Spec) (*compose.Topology, error) {
			return compose.Up(ctx, spec, compose.UpOptions{})
		}
	}
	topo, err := up(ctx, g.spec)
	if err != nil {
		return fmt.Errorf("bring up %s: %w", g.spec, err)
	}
	g.topo, g.last, g.lastKill, g.nth = topo, "", time.Time{}, 0
	g.bringUps++
	return nil
}

// close stops the shared topology, if one is up.
func (g *rig) close() {
	if g.topo != nil {
		_ = g.topo.Close()
		g.topo = nil
	}
}

// measure runs one failover and reads it.
func measure(ctx, runCtx context.Context, run sweep.Runner, c Cell, p Plan, v plan.Values) Failover {
	r, err := run(runCtx, v.Clone(), "failover-map", 0)
	switch {
	case err != nil && runCtx.Err() != nil:
		return cutShort(ctx)
	case err != nil:
		return Failover{Status: statusFailed, Detail: err.Error()}
	case r.Partial:
		return Failover{RunID: r.ID, Status: statusInterrupted, Detail: "interrupted in its window: its partial result is stored, not used"}
	}
	f := readFailover(c, p.spec, r)
	f.Status = statusMeasured
	return f
}

// cutShort is a failover stopped before its window: by Ctrl-C (ctx), or
// by the budget's hard limit.
func cutShort(ctx context.Context) Failover {
	what := "interrupted"
	if ctx.Err() == nil {
		what = fmt.Sprintf("cut at %.1f × the budget", advise.HardShare)
	}
	return Failover{Status: statusInterrupted, Detail: what + " before its window: nothing measured"}
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
	// p.Estimate is already the wall time of failovers side by side.
	return scaled(each*time.Duration(left), spent, planned)
}
