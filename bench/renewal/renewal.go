// Package renewal is `lockbench renewal-check`: a matrix of short cases,
// each a way renewal fails that users of lock libraries reported, against
// every lock that renews. Each cell runs the case's recipe through the
// ordinary runner with a history, reads from the history whether each
// holder that lost its lease was told before its next write, and has
// `lockbench check` confirm the run's own incidents.
package renewal

import (
	"context"
	"fmt"
	"slices"

	"github.com/lockbench/lockbench/bench/check"
	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// Runner executes one run of the given flags, with a history, stores its
// result and returns it.
type Runner func(ctx context.Context, v plan.Values) (*results.Result, error)

// Progress is told before each run.
type Progress func(done, total int, label string)

// Cell is one case on one lock.
type Cell struct {
	Case string `json:"case"`
	Lock string `json:"lock"`
	// Verdict is the cell's word: caught, overran, fenced, survived,
	// inconclusive, n/a or not measured.
	Verdict string `json:"verdict"`
	// Why says why a cell has no runs.
	Why string `json:"why,omitempty"`
	// Runs are the stored results, with their histories.
	Runs []RunRef `json:"runs"`
	// Trials are every trial of the runs, inconclusive ones included.
	Trials []Trial `json:"trials"`
	// Conclusive counts the trials with exposure; the counts by outcome
	// are over them.
	Conclusive int            `json:"conclusive_trials"`
	Outcomes   map[string]int `json:"trials_by_outcome"`
	// OverranLower and OverranUpper are one-sided 95% bounds on the share
	// of trials that overran (null without conclusive trials).
	OverranLower *float64 `json:"overran_share_lower_95"`
	OverranUpper *float64 `json:"overran_share_upper_95"`
	// Delays summarises the detection delays of caught leases (ms).
	Delays *Spread `json:"detection_delay_ms"`
	// FencingRejected and StaleAccepted sum the runs' incidents: stale
	// writes the fence stopped, counted apart, and those it did not.
	FencingRejected int64 `json:"fencing_rejected"`
	StaleAccepted   int64 `json:"stale_writes_accepted"`
	// Check is "agrees" when lockbench check agreed with every run's
	// incidents, else what differed.
	Check string `json:"check,omitempty"`
}

// RunRef names a stored run and its history.
type RunRef struct {
	ID      string `json:"id"`
	History string `json:"history"`
}

// Spread is a distribution's summary, in milliseconds.
type Spread struct {
	N   int     `json:"n"`
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	Max float64 `json:"max"`
	// All are the values, in order.
	All []float64 `json:"all"`
}

// spreadOf summarises nanoseconds in milliseconds; nil for none.
func spreadOf(ns []int64) *Spread {
	if len(ns) == 0 {
		return nil
	}
	ms := make([]float64, len(ns))
	for i, v := range ns {
		ms[i] = float64(v) / 1e6
	}
	slices.Sort(ms)
	return &Spread{N: len(ms), Min: ms[0], P50: results.Median(ms), Max: ms[len(ms)-1], All: ms}
}

// Matrix is the whole check.
type Matrix struct {
	Cases []Case `json:"-"`
	Locks []Lock `json:"-"`
	// Cells are by case, then lock.
	Cells [][]Cell `json:"-"`
}

// Cell returns the cell of case i, lock j.
func (m Matrix) Cell(i, j int) Cell { return m.Cells[i][j] }

// Verdict words of cells without runs.
const (
	VerdictNA          = "n/a"
	VerdictNotMeasured = "not measured"
	VerdictAbsent      = "absent"
)

// Run runs every applicable cell: ceil(trials / firings per run) runs
// each (a case without faults: trials runs); the probe cases of a lock
// share one start of its servers, before the runs.
func Run(ctx context.Context, cases []Case, locks []Lock, trials int, run Runner, progress Progress) (Matrix, error) {
	m := Matrix{Cases: cases, Locks: locks}
	total, done := 0, 0
	probing := map[string][]Case{}
	for _, l := range locks {
		for _, c := range cases {
			switch ok, _ := c.Applies(l); {
			case !ok:
			case c.probe != nil:
				probing[l.Name] = append(probing[l.Name], c)
			default:
				total += runsFor(c.on(l), trials)
			}
		}
	}
	total += len(probing)
	probed := map[string][]Trial{}
	for _, l := range locks {
		if len(probing[l.Name]) == 0 {
			continue
		}
		if progress != nil {
			progress(done, total, "probes on "+l.Name)
		}
		done++
		if err := probeVia(ctx, probing[l.Name], l, trials, probed); err != nil {
			return m, fmt.Errorf("renewal-check probes on %s: %w", l.Name, err)
		}
	}
	for _, c := range cases {
		row := make([]Cell, 0, len(locks))
		for _, l := range locks {
			cell := Cell{Case: c.Name, Lock: l.Name, Runs: []RunRef{}, Trials: []Trial{}, Outcomes: map[string]int{}}
			if ok, why := c.Applies(l); !ok {
				cell.Verdict, cell.Why = emptyVerdict(c.on(l), l), why
				row = append(row, cell)
				continue
			}
			if c.probe != nil {
				cell.Trials = append(cell.Trials, probed[c.Name+" on "+l.Name]...)
			}
			// On a session lock the case runs as its analogue.
			onLock := c.on(l)
			for range runsFor(onLock, trials) {
				if progress != nil {
					progress(done, total, c.Name+" on "+l.Name)
				}
				done++
				if err := runOne(ctx, onLock, l, run, &cell); err != nil {
					return m, fmt.Errorf("renewal-check %s on %s: %w", c.Name, l.Name, err)
				}
			}
			cell.judge(c)
			row = append(row, cell)
		}
		m.Cells = append(m.Cells, row)
	}
	return m, nil
}

// emptyVerdict is the word of a cell without runs.
func emptyVerdict(c Case, l Lock) string {
	switch {
	case l.Absent != "":
		return VerdictAbsent
	case c.NotApplicable != "":
		return VerdictNA
	}
	return VerdictNotMeasured
}

// runsFor is how many runs give at least trials trials of c (a probe
// has none).
func runsFor(c Case, trials int) int {
	if c.probe != nil {
		return 0
	}
	if c.Faults == 0 {
		return max(1, (trials+faultsPerRun-1)/faultsPerRun)
	}
	return (trials + c.Faults - 1) / c.Faults
}

// runOne runs c on l once and adds its trials, incidents and check to cell.
func runOne(ctx context.Context, c Case, l Lock, run Runner, cell *Cell) error {
	r, err := run(ctx, c.Flags(l))
	if err != nil {
		return err
	}
	if r.History == "" {
		return fmt.Errorf("run %s kept no history", r.ID)
	}
	cell.Runs = append(cell.Runs, RunRef{ID: r.ID, History: r.History})
	cell.FencingRejected += r.Incidents.FencingRejected
	cell.StaleAccepted += r.Incidents.StaleWritesAccepted
	h, err := history.ReadFile(r.History)
	if err != nil {
		return err
	}
	cell.Trials = append(cell.Trials, Classify(c, r.ID, h)...)
	agreement := "agrees"
	if rep, err := check.Check(h, check.Options{}); err != nil {
		agreement = "check failed: " + err.Error()
	} else if err := rep.Agree(r.Incidents); err != nil {
		agreement = fmt.Sprintf("run %s: %v", r.ID, err)
	}
	if cell.Check == "" || cell.Check == "agrees" {
		cell.Check = agreement
	}
	return nil
}

// judge sums the trials into the cell's verdict and bounds: overran if any
// conclusive trial overran, then fenced, caught, survived; inconclusive
// when no trial had exposure. Verdict and counts are in cs's words.
func (c *Cell) judge(cs Case) {
	worst := Inconclusive
	var delays []int64
	for _, t := range c.Trials {
		if t.Exposure == 0 {
			continue
		}
		c.Conclusive++
		c.Outcomes[cs.word(t.Outcome)]++
		worst = max(worst, t.Outcome)
		delays = append(delays, t.DelaysNS...)
	}
	c.Verdict = cs.word(worst)
	c.Delays = spreadOf(delays)
	if c.Conclusive == 0 {
		return
	}
	n := int64(c.Conclusive)
	over := int64(c.Outcomes[cs.word(Overran)])
	lower, upper := 1-verdict.UpperBound(n-over, n), verdict.UpperBound(over, n)
	c.OverranLower, c.OverranUpper = &lower, &upper
}

// Short is the cell's word with its count, as the matrix shows it.
func (c Cell) Short() string {
	switch c.Verdict {
	case VerdictNA, VerdictNotMeasured, VerdictAbsent, Inconclusive.String():
		return c.Verdict
	}
	return fmt.Sprintf("%s %d/%d", c.Verdict, c.Outcomes[c.Verdict], c.Conclusive)
}
