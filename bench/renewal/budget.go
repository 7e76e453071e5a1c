package renewal

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/pool"
)

// Options are how Run spends its trials (advise's, as scenario's).
type Options = advise.TrialOptions

// Label names the n-th run (from 1) of case c on lock l; --resume finds a
// stored run by it and by its configuration.
func Label(c Case, l Lock, n int) string {
	return fmt.Sprintf("renewal-check / %s / %s / run %d", c.Name, l.Name, n)
}

// RunEstimate is what one run of c on l is expected to take: its window
// and the start of its servers.
func RunEstimate(c Case, l Lock) time.Duration {
	if c.on(l).recipe == nil {
		// A probe: calls on the lock, after its servers' start.
		return serverStart
	}
	v := c.Flags(l)
	d, _ := time.ParseDuration(v.Get("duration"))
	return d + serverStart
}

// serverStart is about what starting and stopping a run's servers takes
// on a loaded 2-core machine.
const serverStart = 2 * time.Second

// PlannedRun is one of the runs Run plans before any budget: the N-th run
// (from 1) of Case on Lock.
type PlannedRun struct {
	// Case is the row's case as it runs on Lock (a session or
	// self-extending lock's form of it).
	Case Case
	Lock Lock
	// N numbers the run among its cell's, from 1 (its Label's).
	N int
	// i, j place the cell in the matrix.
	i, j int
}

// Values are the run's flags, labelled as Run stores it: a pod of an
// Indexed Job that runs them stores the run that --resume then finds.
func (p PlannedRun) Values() plan.Values { return runValues(p.Case, p.Lock, p.N) }

// PlannedRuns are the runs Run plans for trials a cell, before any budget,
// in the order it starts them: cell by cell (case by case, each on lock
// after lock), each cell's runs one after another. Probes are not among
// them: they call the lock from the process that runs the matrix. Run
// takes its planned round from here, so index k of an Indexed Job (runs
// elsewhere, collected, then --resume) is the run Run would start k-th.
func PlannedRuns(cases []Case, locks []Lock, trials int) []PlannedRun {
	var out []PlannedRun
	for i, c := range cases {
		for j, l := range locks {
			if ok, _ := c.Applies(l); !ok || c.probe != nil {
				continue
			}
			on := c.on(l)
			for n := range runsFor(on, trials) {
				out = append(out, PlannedRun{Case: on, Lock: l, N: n + 1, i: i, j: j})
			}
		}
	}
	return out
}

// slot is one applicable non-probe cell and the runs it has had.
type slot struct {
	i, j int
	c    Case
	l    Lock
	runs int
}

// Run runs every applicable cell: first the planned trials (ceil(trials /
// firings per run) runs each; a case without faults: trials runs; probes
// of a lock share one start of its servers), then, within o.Budget, one
// more run at a time of each cell the rule leaves undecided, round by
// round, until every cell is decided or the budget ends. Ctrl-C keeps
// what was measured: the matrix comes back with Interrupted set.
func Run(ctx context.Context, cases []Case, locks []Lock, o Options, run Runner) (Matrix, error) {
	now := o.Clock()
	start := now()
	m := Matrix{Cases: cases, Locks: locks, Level: o.LevelOrDefault()}
	m.Cells = make([][]Cell, len(cases))
	var slots []*slot
	slotOf := map[[2]int]*slot{}
	probing := map[string][]Case{}
	for i, c := range cases {
		m.Cells[i] = make([]Cell, len(locks))
		for j, l := range locks {
			cell := Cell{Case: c.Name, Lock: l.Name, Runs: []RunRef{}, Trials: []Trial{}, Outcomes: map[string]int{}}
			if ok, why := c.Applies(l); !ok {
				cell.Verdict, cell.Why = emptyVerdict(c.on(l), l), why
			} else if c.probe != nil {
				probing[l.Name] = append(probing[l.Name], c)
			} else {
				s := &slot{i: i, j: j, c: c, l: l}
				slots, slotOf[[2]int{i, j}] = append(slots, s), s
			}
			m.Cells[i][j] = cell
		}
	}
	// The planned runs, cell by cell, each under its planned number.
	var planned []runAt
	for _, p := range PlannedRuns(cases, locks, o.Trials) {
		planned = append(planned, runAt{s: slotOf[[2]int{p.i, p.j}], n: p.N})
	}
	b := budget{o: o, now: now, start: start}
	total := len(planned) + len(probing)
	done := 0
	tell := func(label string, left int) {
		if o.Progress != nil {
			o.Progress(advise.Progress{Done: done, Total: total, Label: label, Elapsed: now().Sub(start), ETA: b.eta(left)})
		}
	}
	probed, err := b.probeRound(ctx, locks, probing, tell, &done, total)
	if err != nil {
		return m, err
	}
	for i, c := range cases {
		for j, l := range locks {
			if c.probe != nil && m.Cells[i][j].Verdict == "" {
				m.Cells[i][j].Trials = append(m.Cells[i][j].Trials, probed[c.Name+" on "+l.Name]...)
			}
		}
	}
	if err := b.runRound(ctx, planned, &m, run, tell, func() int { return total - done }, &done); err != nil {
		return m, err
	}
	// Then the undecided probes (calls on the lock, cheap: all the trials
	// that would decide them in one start of its servers), and the
	// undecided cells, a run each per round, while the budget lasts.
	if o.Budget > 0 {
		if err := b.moreProbes(ctx, &m, locks, tell); err != nil {
			return m, err
		}
	}
	for o.Budget > 0 && ctx.Err() == nil {
		var undecided []runAt
		for _, s := range slots {
			cell := &m.Cells[s.i][s.j]
			cell.judge(s.c, m.Level)
			if cell.Undecided() && b.fits(RunEstimate(s.c, s.l)) {
				undecided = append(undecided, runAt{s: s})
			}
		}
		if len(undecided) == 0 {
			break
		}
		total += len(undecided)
		left := len(undecided)
		if err := b.runRound(ctx, undecided, &m, run, tell, func() int { return left }, &done); err != nil {
			return m, err
		}
	}
	for i, c := range cases {
		for j := range locks {
			if cell := &m.Cells[i][j]; cell.Verdict == "" {
				cell.judge(c, m.Level)
			}
		}
	}
	m.Interrupted = ctx.Err() != nil
	return m, nil
}

// budget tracks the wall time the runs took against Options.Budget.
type budget struct {
	o     Options
	now   func() time.Time
	start time.Time
	// spent is the measured runs' wall time; planned their estimates: the
	// ratio scales the next estimate to this machine.
	spent, planned time.Duration
	runs           int
}

// fits says whether a run estimated at est ends within the budget (always,
// without one).
func (b *budget) fits(est time.Duration) bool {
	if b.o.Budget <= 0 {
		return true
	}
	return b.now().Sub(b.start)+b.scaled(est) <= b.o.Budget
}

// scaled is est as this machine has run estimates so far.
func (b *budget) scaled(est time.Duration) time.Duration {
	if b.planned <= 0 {
		return est
	}
	return time.Duration(float64(est) * float64(b.spent) / float64(b.planned))
}

// eta is left runs at the mean measured run's time, o.Parallel at once.
func (b *budget) eta(left int) time.Duration {
	if b.runs == 0 {
		return 0
	}
	return b.spent / time.Duration(b.runs) * time.Duration(left) / time.Duration(max(1, b.o.Parallel))
}

// runAt is a run of a slot's cell: the n-th (its planned number), or the
// next after those it had (n 0: a run a budget adds).
type runAt struct {
	s *slot
	n int
}

// runRound runs the runs listed (a slot may repeat), o.Parallel at once
// (pool.Round): a run that would end past the budget is skipped; what
// Ctrl-C cut short is kept unstored. The runs are added to their cells in
// the order listed, whichever finished first. left is the runs left, for
// the ETA; done counts the runs begun or skipped.
func (b *budget) runRound(ctx context.Context, runs []runAt, m *Matrix, run Runner, tell func(string, int), left func() int, done *int) error {
	type job struct {
		n    int
		took time.Duration
	}
	slots := make([]*slot, len(runs))
	for k, r := range runs {
		slots[k] = r.s
	}
	jobs := make([]job, len(slots))
	outcomes := pool.Round[runPart]{
		Size: b.o.Parallel,
		Start: func(k int) bool {
			s := slots[k]
			if !b.fits(RunEstimate(s.c, s.l)) {
				*done++
				return false
			}
			// A planned run keeps its number though one before it was
			// skipped: its label is the one its pod stored it under.
			n := runs[k].n
			if n == 0 {
				n = s.runs + 1
			}
			s.runs = max(s.runs, n)
			jobs[k].n = n
			tell(fmt.Sprintf("%s on %s, run %d", s.c.Name, s.l.Name, n), left())
			return true
		},
		Run: func(ctx context.Context, _, k int) (runPart, error) {
			s := slots[k]
			t0 := b.now()
			p, err := runOne(ctx, s.c.on(s.l), s.l, jobs[k].n, b.o, run)
			jobs[k].took = b.now().Sub(t0)
			if err != nil && ctx.Err() == nil {
				return p, fmt.Errorf("renewal-check %s on %s: %w", s.c.Name, s.l.Name, err)
			}
			return p, err
		},
		Done: func(k int, _ runPart, _ error) {
			s := slots[k]
			b.spent, b.planned, b.runs = b.spent+jobs[k].took, b.planned+RunEstimate(s.c, s.l), b.runs+1
			*done++
		},
	}.Go(ctx, len(slots))
	for k, out := range outcomes {
		if out.Ran && out.Err == nil {
			m.Cells[slots[k].i][slots[k].j].add(out.Value)
		}
	}
	if err := pool.FirstErr(outcomes); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// probeRound runs the probes of each lock that has probe cases, o.Parallel
// locks at once, each in one start of its servers; the trials come back
// by "case on lock". Ctrl-C keeps the locks probed.
func (b *budget) probeRound(ctx context.Context, locks []Lock, probing map[string][]Case, tell func(string, int), done *int, total int) (map[string][]Trial, error) {
	var probe []Lock
	for _, l := range locks {
		if len(probing[l.Name]) > 0 {
			probe = append(probe, l)
		}
	}
	outcomes := pool.Round[map[string][]Trial]{
		Size: b.o.Parallel,
		Start: func(k int) bool {
			tell("probes on "+probe[k].Name, total-*done)
			*done++
			return true
		},
		Run: func(ctx context.Context, _, k int) (map[string][]Trial, error) {
			l := probe[k]
			into := map[string][]Trial{}
			if err := probeVia(ctx, probing[l.Name], l, b.o.Trials, into); err != nil {
				if ctx.Err() != nil {
					return nil, nil
				}
				return nil, fmt.Errorf("renewal-check probes on %s: %w", l.Name, err)
			}
			return into, nil
		},
	}.Go(ctx, len(probe))
	probed := map[string][]Trial{}
	for _, out := range outcomes {
		for name, trials := range out.Value {
			probed[name] = append(probed[name], trials...)
		}
	}
	return probed, pool.FirstErr(outcomes)
}

// moreProbes probes each lock once more with the trials that would decide
// its undecided probe cases (the most any of them needs), where the budget
// allows a start of its servers and the calls.
func (b *budget) moreProbes(ctx context.Context, m *Matrix, locks []Lock, tell func(string, int)) error {
	for j, l := range locks {
		var cases []Case
		var idx []int
		more := 0
		for i, c := range m.Cases {
			cell := &m.Cells[i][j]
			if c.probe == nil || cell.Verdict == VerdictNA || cell.Verdict == VerdictAbsent || cell.Verdict == VerdictNotMeasured {
				continue
			}
			cell.judge(c, m.Level)
			if cell.Undecided() {
				cases, idx, more = append(cases, c), append(idx, i), max(more, cell.Decision.More)
			}
		}
		// A probe's trial is a few TTLs of calls; its servers' start the rest.
		est := serverStart + time.Duration(more*len(cases))*3*l.TTL
		if len(cases) == 0 || ctx.Err() != nil || !b.fits(est) {
			continue
		}
		tell(fmt.Sprintf("probes on %s, %d more trials", l.Name, more), 1)
		probed := map[string][]Trial{}
		t0 := b.now()
		err := probeVia(ctx, cases, l, more, probed)
		b.spent, b.planned, b.runs = b.spent+b.now().Sub(t0), b.planned+est, b.runs+1
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("renewal-check probes on %s: %w", l.Name, err)
		}
		for k, c := range cases {
			cell := &m.Cells[idx[k]][j]
			cell.Trials = append(cell.Trials, probed[c.Name+" on "+l.Name]...)
			cell.judge(c, m.Level)
		}
	}
	return nil
}

// PlanEstimate is the planned runs' wall time: what --budget must at least
// allow for every cell to have its trials.
func PlanEstimate(cases []Case, locks []Lock, trials int) (runs int, est time.Duration) {
	probed := map[string]bool{}
	for _, l := range locks {
		for _, c := range cases {
			switch ok, _ := c.Applies(l); {
			case !ok:
			case c.probe != nil:
				if !probed[l.Name] {
					probed[l.Name] = true
					runs++
					est += serverStart
				}
			default:
				n := runsFor(c.on(l), trials)
				runs += n
				est += time.Duration(n) * RunEstimate(c, l)
			}
		}
	}
	return runs, est
}
