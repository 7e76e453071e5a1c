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

// Cell is one case on one lock.
type Cell struct {
	Case string `json:"case"`
	Lock string `json:"lock"`
	// Verdict is the cell's word: caught, overran, fenced, kept (in the
	// case's words), undecided, inconclusive, n/a or not measured.
	Verdict string `json:"verdict"`
	// Decision is the k-of-n rule's: the trials whose holder wrote after
	// losing its lease over the conclusive trials, what the word may say,
	// and for an undecided cell the trials that would decide it.
	Decision verdict.TrialDecision `json:"decision"`
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
	// Level is the share of trials a word of safety bounds the harm under.
	Level float64 `json:"-"`
	// Interrupted says Ctrl-C stopped the runs: the cells hold what was
	// measured.
	Interrupted bool `json:"-"`
}

// Cell returns the cell of case i, lock j.
func (m Matrix) Cell(i, j int) Cell { return m.Cells[i][j] }

// Verdict words of cells without runs.
const (
	VerdictNA          = "n/a"
	VerdictNotMeasured = "not measured"
	VerdictAbsent      = "absent"
)

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

// runPart is what one run of a cell adds to it: its stored run, its
// trials, its incidents and what lockbench check said of it.
type runPart struct {
	ref                            RunRef
	trials                         []Trial
	fencingRejected, staleAccepted int64
	agreement                      string
}

// runValues are the flags of the n-th run (from 1) of c on l, labelled
// (Label): a run of the matrix, here or in a pod of an Indexed Job, is
// stored under them, and --resume finds it by them.
func runValues(c Case, l Lock, n int) plan.Values {
	v := c.Flags(l)
	v.Set("label", Label(c, l, n))
	return v
}

// runOne runs c on l once (or reuses a stored run of the same label and
// configuration: --resume) and reads its trials, incidents and check; it
// touches no cell, so that runs of one matrix may go side by side.
func runOne(ctx context.Context, c Case, l Lock, n int, o Options, run Runner) (runPart, error) {
	v := runValues(c, l, n)
	r := o.Reusable(v)
	if r == nil || r.History == "" {
		var err error
		if r, err = run(ctx, v); err != nil {
			return runPart{}, err
		}
	}
	if r.History == "" {
		return runPart{}, fmt.Errorf("run %s kept no history", r.ID)
	}
	h, err := history.ReadFile(r.History)
	if err != nil {
		return runPart{}, err
	}
	part := runPart{ref: RunRef{ID: r.ID, History: r.History}, trials: Classify(c, r.ID, h),
		fencingRejected: r.Incidents.FencingRejected, staleAccepted: r.Incidents.StaleWritesAccepted, agreement: "agrees"}
	if rep, err := check.Check(h, check.Options{}); err != nil {
		part.agreement = "check failed: " + err.Error()
	} else if err := rep.Agree(r.Incidents); err != nil {
		part.agreement = fmt.Sprintf("run %s: %v", r.ID, err)
	}
	return part, nil
}

// add adds one run's part to the cell; the first disagreement of check
// stays.
func (c *Cell) add(p runPart) {
	c.Runs = append(c.Runs, p.ref)
	c.FencingRejected += p.fencingRejected
	c.StaleAccepted += p.staleAccepted
	c.Trials = append(c.Trials, p.trials...)
	if c.Check == "" || c.Check == "agrees" {
		c.Check = p.agreement
	}
}

// judge sums the trials into the cell's verdict and bounds by the one
// k-of-n rule (verdict.DecideTrials): the harm is a trial whose holder
// wrote after losing its lease (overran, or fenced where the token stopped
// the write); a word of harm (overran, then fenced) needs one such trial, a
// word of safety (caught, kept) the 95% upper bound on their share within
// level, else the cell is undecided; inconclusive when no trial had
// exposure. Verdict and counts are in cs's words.
func (c *Cell) judge(cs Case, level float64) {
	worst := Inconclusive
	var delays []int64
	c.Conclusive, c.Outcomes = 0, map[string]int{}
	for _, t := range c.Trials {
		if t.Exposure == 0 {
			continue
		}
		c.Conclusive++
		c.Outcomes[cs.word(t.Outcome)]++
		worst = max(worst, t.Outcome)
		delays = append(delays, t.DelaysNS...)
	}
	c.Delays = spreadOf(delays)
	harm := c.Outcomes[cs.word(Overran)] + c.Outcomes[cs.word(Fenced)]
	c.Decision = verdict.DecideTrials(harm, c.Conclusive, level)
	c.Verdict = c.Decision.Word(cs.word(worst), cs.word(worst))
	c.OverranLower, c.OverranUpper = nil, nil
	if c.Conclusive == 0 {
		c.Verdict = cs.word(Inconclusive)
		return
	}
	n := int64(c.Conclusive)
	over := int64(c.Outcomes[cs.word(Overran)])
	lower, upper := 1-verdict.UpperBound(n-over, n), verdict.UpperBound(over, n)
	c.OverranLower, c.OverranUpper = &lower, &upper
}

// Undecided says whether more trials could decide the cell.
func (c Cell) Undecided() bool { return c.Decision.Class == verdict.Undecided }

// Short is the cell's word with its count, as the matrix shows it:
// "overran 2/6", "caught 30/30", "undecided 0/3 (≤63%)".
func (c Cell) Short() string {
	switch c.Verdict {
	case VerdictNA, VerdictNotMeasured, VerdictAbsent, Inconclusive.String():
		return c.Verdict
	}
	if c.Decision.Class == verdict.Undecided {
		return c.Decision.Short("", "", 0)
	}
	return fmt.Sprintf("%s %d/%d", c.Verdict, c.Outcomes[c.Verdict], c.Conclusive)
}
