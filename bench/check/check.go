package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/results"
)

// Options tune a check.
type Options struct {
	// Drift overrides the history's clock-drift allowance when set (>= 0).
	Drift time.Duration
	// DriftSet says whether Drift was given.
	DriftSet bool
	// Timeout bounds Porcupine's search on each key, all its segments
	// together (0: none): a key whose search runs out of it is unknown.
	Timeout time.Duration
	// Visualize keeps the illegal segments' events for Visualize.
	Visualize bool

	// flushEvery overrides how many events are read between two moves of
	// the watermark (tests move it after every few).
	flushEvery int
	// crossCheck has Porcupine search every segment too, to hold the
	// replay's verdict to its search (Report.mismatch counts the segments
	// they disagree on).
	crossCheck bool
}

// Counts are a history's incidents by cause, over the events of the window
// (as the run counts them).
type Counts struct {
	DoubleGrants    int64 `json:"double_grants"`
	Overruns        int64 `json:"overruns"`
	StaleAccepted   int64 `json:"stale_writes_accepted"`
	FencingRejected int64 `json:"fencing_rejected"`
	// Possible counts acquisitions that may have been granted inside
	// another's lease, by the lock's calls, where the order cannot be
	// told; not counted as double grants.
	Possible int64 `json:"possible_double_grants"`
	// LateWrites counts writes made after the writer's lease had ended:
	// past its validity, or past the end the lock reported for it (a
	// session that ended unasked), though reported after the write. The
	// run counts them as expired during work; fencing or a newer holder
	// decides whether one did harm.
	LateWrites int64 `json:"writes_after_lease"`
}

// Overlaps is the sum of both causes.
func (c Counts) Overlaps() int64 { return c.DoubleGrants + c.Overruns }

// Unsafe reports whether the lock broke or the resource was corrupted: a
// double grant, a stale write accepted, or, where the lock has no fencing
// tokens, an overrun (nothing stops the overrunning holder's work). With
// fencing an overrun is reported but is not unsafe by itself: the
// resource rejects the stale holder's write, and one it accepted counts.
func (c Counts) Unsafe(fencing bool) bool {
	return c.DoubleGrants+c.StaleAccepted > 0 || (!fencing && c.Overruns > 0)
}

func (c *Counts) add(cause Cause, o history.Outcome) {
	switch {
	case cause == CauseDoubleGrant:
		c.DoubleGrants++
	case cause == CauseOverrun:
		c.Overruns++
	case cause == CauseStaleAccepted:
		c.StaleAccepted++
	case cause == CausePossible:
		c.Possible++
	case o == history.OutFencingRejected:
		c.FencingRejected++
	}
}

// Violation is one event that broke a key, with the events that make it one.
type Violation struct {
	Cause Cause
	// Event is the offending enter or write, or for a double grant only
	// the lock's calls show, the acquire.
	Event *history.Event
	// Inside are the enter (and latest renewal) events of the holders that
	// were inside at an overlapping entry.
	Inside []*history.Event
	// InWindow says whether the run counted it.
	InWindow bool
	// ByCalls: the lock's own calls show it (an acquire returned inside
	// another token's lease), whatever the resource saw.
	ByCalls bool
}

// Disagreement is an event whose outcome the run recorded differently from
// the model's: a bug in lockbench's resource or in this checker.
type Disagreement struct {
	Event    *history.Event
	Model    history.Outcome
	Recorded history.Outcome
	// CallsValid, when set, is the validity the holder's own acquire and
	// renewals gave, which the event's recorded valid contradicts (the
	// outcomes then are both ok).
	CallsValid int64
}

// Key is one partition of the history: a key, and the generator whose
// in-process resource saw it (-1: a shared resource saw every generator).
type Key struct {
	Generator int `json:"generator"`
	Key       int `json:"key"`
}

func (k Key) String() string {
	if k.Generator < 0 {
		return fmt.Sprintf("key %d", k.Key)
	}
	return fmt.Sprintf("key %d (generator %d)", k.Key, k.Generator)
}

// KeyReport is what the check found on one key.
type KeyReport struct {
	Key    Key
	Counts Counts
	// Violations are the first events that broke the key (listKept of
	// them), in the window or not: those the resource saw, in its order,
	// then acquisitions whose holder never entered, in the history's.
	// ViolationsFound counts them all.
	Violations      []Violation
	ViolationsFound int
	// Disagreements are the first events whose recorded outcome or
	// validity the model's contradicts; DisagreementsFound counts them all.
	Disagreements      []Disagreement
	DisagreementsFound int
	// Porcupine is Porcupine's verdict on the key: Unknown when its search
	// ran out of its budget on a segment and found none illegal.
	Porcupine porcupine.CheckResult

	// byCalls are the first double grants only the lock's calls show, and
	// byCallsFound counts them all.
	byCalls      []Violation
	byCallsFound int
}

// listKept is how many violations, disagreements and double grants by
// the lock's calls a key keeps to name: more than any report lists. A
// broken lock makes one per acquisition, and a check that kept them all
// would grow with the history.
const listKept = 20

// Report is a whole check.
type Report struct {
	Header history.Header
	// Counts are over the window's events, as the run's result counts them.
	Counts Counts
	// Outside counts the violations outside the window (warm-up, drain).
	Outside Counts
	// Keys are the keys with a violation or a disagreement, in key order.
	Keys []*KeyReport
	// Unknown are the keys whose Porcupine search ran out of its budget
	// (Options.Timeout) without finding them illegal: neither safe nor
	// unsafe, in key order.
	Unknown []Key
	// Checked is how many keys and resource events were checked.
	CheckedKeys, CheckedEvents int
	// Porcupine is the verdict over every key: Illegal when any key is,
	// else Unknown when any key is.
	Porcupine porcupine.CheckResult
	// Complete is false when the history had no trailer (cut short).
	Complete bool
	// Trailer is the history's last line, nil when it was cut short.
	Trailer *history.Trailer
	Faults  []history.Fault
	// Drift is the clock-drift allowance used.
	Drift time.Duration
	// Timeout is the Porcupine budget per key used (0: none).
	Timeout time.Duration

	model porcupine.Model
	// illegal are the first segments Porcupine found illegal, kept for
	// Visualize when asked (Options.Visualize); illegalFound counts all.
	illegal      []segment
	illegalFound int
	// reread says the files' events were not in each worker's order, and
	// the check read the whole history into memory instead of streaming it.
	reread bool
	// mismatch counts the segments whose replay verdict Porcupine's search
	// contradicted (Options.crossCheck).
	mismatch int
}

// segment is one Porcupine partition: a stretch of one key's events.
type segment struct {
	key *KeyReport
	ops []porcupine.Operation
}

// Unsafe reports whether the window's history broke the lock or accepted
// a stale write (see Counts.Unsafe).
func (r *Report) Unsafe() bool { return r.Counts.Unsafe(r.Header.Fencing) }

// Undecided reports whether the history is not unsafe but some key's
// Porcupine search ran out of its budget: the check cannot call it safe.
func (r *Report) Undecided() bool { return !r.Unsafe() && len(r.Unknown) > 0 }

// model is the lease-lock model as Porcupine takes it. An operation's
// input is a resource event (*history.Event), or the state a segment
// resumes from (*state): pointers, so that making an operation allocates
// nothing.
func model(drift int64) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return &state{} },
		StepContext: func(_ context.Context, st, in, _ any) (bool, any) {
			if resume, ok := in.(*state); ok {
				return true, resume
			}
			res := step(st.(*state), in.(*history.Event), drift)
			return res.cause == Safe, res.next
		},
		Equal: func(a, b any) bool { return a.(*state).equal(b.(*state)) },
		DescribeOperation: func(in, _ any) string {
			if resume, ok := in.(*state); ok {
				return "resume: " + resume.String()
			}
			return describe(in.(*history.Event))
		},
		DescribeState: func(st any) string { return st.(*state).String() },
	}
}

// describe is one event in a line: who, what, when, with which lease.
func describe(e *history.Event) string {
	s := fmt.Sprintf("g%d/w%d %s → %s at %s", e.Generator, e.Worker, e.Op, e.Out, fmtNS(e.Return))
	switch e.Op {
	case history.OpAcquire:
		s += fmt.Sprintf(", called %s, valid to %s", fmtNS(e.Call), fmtNS(e.Valid))
	case history.OpEnter:
		s += fmt.Sprintf(", granted %s, valid to %s", fmtNS(e.Granted), fmtNS(e.Valid))
	case history.OpRenewed:
		s += fmt.Sprintf(", valid to %s", fmtNS(e.Valid))
	case history.OpWrite:
		s += fmt.Sprintf(", written at %s, valid to %s", fmtNS(e.Call), fmtNS(e.Valid))
	}
	if e.Fence != 0 {
		s += fmt.Sprintf(", fence %d", e.Fence)
	}
	if e.Token != "" {
		s += ", token " + short(e.Token)
	}
	if e.Seq == 0 {
		return s
	}
	return s + fmt.Sprintf(" (seq %d)", e.Seq)
}

func short(tok string) string {
	if len(tok) > 8 {
		return tok[:8]
	}
	return tok
}

// Agree compares the check's counts with the incidents the run itself
// counted (double grants, overruns, stale writes accepted and rejected):
// they must be equal. A difference names the keys and events where the
// run's recorded verdict and the model's differ.
func (r *Report) Agree(inc results.Incidents) error {
	type pair struct {
		name      string
		run, mine int64
	}
	var diffs []string
	for _, p := range []pair{
		{"double grants", inc.DoubleGrants, r.Counts.DoubleGrants},
		{"overruns", inc.Overruns, r.Counts.Overruns},
		{"stale writes accepted", inc.StaleWritesAccepted, r.Counts.StaleAccepted},
		{"stale writes rejected (fencing)", inc.FencingRejected, r.Counts.FencingRejected},
		{"possible double grants", inc.PossibleDoubleGrants, r.Counts.Possible},
		{"writes after the lease (expired during work)", inc.ExpiredDuringWork, r.Counts.LateWrites},
	} {
		if p.run != p.mine {
			diffs = append(diffs, fmt.Sprintf("%s: run %d, check %d", p.name, p.run, p.mine))
		}
	}
	if inc.Overlaps != inc.DoubleGrants+inc.Overruns {
		diffs = append(diffs, fmt.Sprintf("the run's overlaps %d are not double grants %d + overruns %d", inc.Overlaps, inc.DoubleGrants, inc.Overruns))
	}
	var events []string
	for _, kr := range r.Keys {
		for _, d := range kr.Disagreements {
			switch {
			case len(events) >= 10:
			case d.CallsValid != 0:
				events = append(events, fmt.Sprintf("%s: recorded valid to %s, the holder's calls say %s: %s", kr.Key, fmtNS(d.Event.Valid),
					fmtNS(d.CallsValid), describe(d.Event)))
			default:
				events = append(events, fmt.Sprintf("%s: the run recorded %s, the model says %s: %s", kr.Key, d.Recorded, d.Model, describe(d.Event)))
			}
		}
	}
	if len(diffs) == 0 && len(events) == 0 {
		return nil
	}
	if len(events) == 0 {
		events = append(events, "no event's verdict differs: the window's membership of events differs")
	}
	return fmt.Errorf("check and run disagree: %s\n  %s", strings.Join(diffs, "; "), strings.Join(events, "\n  "))
}
