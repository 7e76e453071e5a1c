package check

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	// Timeout bounds Porcupine's search (0: none).
	Timeout time.Duration
	Visualize bool
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
	// Events is the key's resource events, in the resource's order.
	Events []*history.Event
	// Violations are every event that broke the key, in the window or not.
	Violations    []Violation
	Disagreements []Disagreement
	// Porcupine is Porcupine's verdict on the key.
	Porcupine porcupine.CheckResult

	acquires map[string]*history.Event
	// ends are the lock's reports that a lease ended unasked, by token.
	ends map[string]*history.Event
}

// late says whether write e came after its lease ended: past the validity
// it was judged by, or past the end the lock reported for the lease, even
// where the lock learnt the end only after the write (a session's end).
func (kr *KeyReport) late(e *history.Event) bool {
	if end := kr.ends[e.Token]; end != nil && e.Call > end.Valid {
		return true
	}
	return e.Call > e.Valid
}

// Report is a whole check.
type Report struct {
	Header history.Header
	// Counts are over the window's events, as the run's result counts them.
	Counts Counts
	// Outside counts the violations outside the window (warm-up, drain).
	Outside Counts
	// Keys are the keys with a violation or a disagreement, in key order.
	Keys []*KeyReport
	// Checked is how many keys and resource events were checked.
	CheckedKeys, CheckedEvents int
	// Porcupine is the verdict over every key: Illegal when any key is.
	Porcupine porcupine.CheckResult
	// Complete is false when the history had no trailer (cut short).
	Complete bool
	// Trailer is the history's last line, nil when it was cut short.
	Trailer *history.Trailer
	Faults  []history.Fault
	// Drift is the clock-drift allowance used.
	Drift time.Duration

	model    porcupine.Model
	segments []segment
	// illegal are the segments Porcupine found illegal.
	illegal []segment
}

// segment is one Porcupine partition: a stretch of one key's events.
type segment struct {
	key *KeyReport
	ops []porcupine.Operation
}

// Unsafe reports whether the window's history broke the lock or accepted
// a stale write (see Counts.Unsafe).
func (r *Report) Unsafe() bool { return r.Counts.Unsafe(r.Header.Fencing) }

// Check replays h key by key and checks every key with Porcupine.
func Check(h *history.History, opts Options) (*Report, error) {
	drift := time.Duration(h.Header.DriftNS)
	if opts.DriftSet {
		drift = opts.Drift
	}
	r := &Report{Header: h.Header, Complete: h.Trailer != nil, Trailer: h.Trailer, Faults: h.Faults, Drift: drift, Porcupine: porcupine.Ok}
	parts, calls := partition(h)
	keys := make([]Key, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	for k := range calls {
		if _, ok := parts[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b Key) int { return cmp.Or(cmp.Compare(a.Generator, b.Generator), cmp.Compare(a.Key, b.Key)) })
	r.model = model(int64(drift))
	for _, k := range keys {
		kr := replay(k, parts[k], calls[k], int64(drift))
		r.CheckedKeys++
		r.CheckedEvents += len(kr.Events)
		r.Counts.DoubleGrants += kr.Counts.DoubleGrants
		r.Counts.Overruns += kr.Counts.Overruns
		r.Counts.StaleAccepted += kr.Counts.StaleAccepted
		r.Counts.FencingRejected += kr.Counts.FencingRejected
		r.Counts.Possible += kr.Counts.Possible
		r.Counts.LateWrites += kr.Counts.LateWrites
		for _, v := range kr.Violations {
			if !v.InWindow {
				r.Outside.add(v.Cause, 0)
			}
		}
		for _, ops := range segments(kr.Events) {
			r.segments = append(r.segments, segment{key: kr, ops: ops})
		}
		kr.Porcupine = porcupine.Ok
		if len(kr.Violations) > 0 || len(kr.Disagreements) > 0 {
			r.Keys = append(r.Keys, kr)
		}
	}
	if err := r.porcupine(opts.Timeout); err != nil {
		return nil, err
	}
	return r, nil
}

// partition groups the resource events by key: by generator and key when
// each generator kept its resource in process, by key when they shared one.
// calls are the lock's calls of each key, grouped the same way (a run
// judges its own calls, so run and check agree).
func partition(h *history.History) (parts, calls map[Key][]*history.Event) {
	shared := h.Header.Resource != "" && h.Header.Resource != "in-process"
	parts, calls = map[Key][]*history.Event{}, map[Key][]*history.Event{}
	for i := range h.Events {
		e := &h.Events[i]
		k := Key{Generator: e.Generator, Key: e.Key}
		if shared {
			k.Generator = -1
		}
		if !e.Op.Resource() {
			calls[k] = append(calls[k], e)
			continue
		}
		if e.Seq == 0 {
			continue
		}
		parts[k] = append(parts[k], e)
	}
	for _, evs := range parts {
		slices.SortStableFunc(evs, func(a, b *history.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return parts, calls
}

// replay steps one key's events through the model, counting and naming
// what broke.
func replay(k Key, evs, calls []*history.Event, drift int64) *KeyReport {
	kr := &KeyReport{Key: k}
	evs = kr.validityFromCalls(evs, calls)
	kr.Events = evs
	byCalls := history.CallsOfKey(calls, drift)
	acquires := acquiresByToken(calls)
	s := &state{}
	for _, e := range evs {
		res := step(s, e, drift)
		if e.Op == history.OpEnter {
			res = kr.judgeGrant(res, e, acquires[e.Token], byCalls)
		}
		if e.Window {
			kr.Counts.add(res.cause, res.outcome)
			if e.Op == history.OpWrite && kr.late(e) {
				kr.Counts.LateWrites++
			}
		}
		if res.cause != Safe {
			v := Violation{Cause: res.cause, Event: e, InWindow: e.Window, ByCalls: res.byCalls != nil}
			for _, h := range res.others {
				if h.enter == nil {
					continue
				}
				v.Inside = append(v.Inside, h.enter)
				if h.renewed != nil {
					v.Inside = append(v.Inside, h.renewed)
				}
			}
			kr.Violations = append(kr.Violations, v)
		}
		if e.Out != history.OutFailed && res.outcome != e.Out && (e.Op == history.OpEnter || e.Op == history.OpWrite) {
			kr.Disagreements = append(kr.Disagreements, Disagreement{Event: e, Model: res.outcome, Recorded: e.Out})
		}
		s = res.next
	}
	kr.grantsWithoutEntry(evs, calls, byCalls, acquires)
	return kr
}

// acquiresByToken maps each token to its ok acquire.
func acquiresByToken(calls []*history.Event) map[string]*history.Event {
	out := map[string]*history.Event{}
	for _, e := range calls {
		if e.Op == history.OpAcquire && e.Out == history.OutOK && e.Token != "" {
			out[e.Token] = e
		}
	}
	return out
}

// judgeGrant adds the lock's-calls verdict on the acquisition behind an
// enter, as the run does: a grant inside another token's lease is a double
// grant even where the resource saw nobody inside, or only an overrun; one
// that only may have been is counted apart.
func (kr *KeyReport) judgeGrant(res stepResult, enter, acq *history.Event, byCalls map[*history.Event]history.CallVerdict) stepResult {
	if acq == nil {
		return res
	}
	v := byCalls[acq]
	switch {
	case res.cause == CauseDoubleGrant:
	case v.Certain:
		res.cause, res.byCalls = CauseDoubleGrant, acq
		res.others = []holderRef{{enter: acq}, {enter: kr.acquires[v.Against]}}
	case res.cause == CauseOverrun:
	case v.Possible:
		res.cause, res.byCalls = CausePossible, acq
		res.others = []holderRef{{enter: acq}, {enter: kr.acquires[v.Against]}}
	}
	return res
}

// grantsWithoutEntry judges the acquisitions whose holder never entered the
// resource (its events lost or cut short) by the lock's calls alone.
func (kr *KeyReport) grantsWithoutEntry(evs, calls []*history.Event, byCalls map[*history.Event]history.CallVerdict,
	acquires map[string]*history.Event) {
	entered := map[string]bool{}
	for _, e := range evs {
		if e.Op == history.OpEnter {
			entered[e.Token] = true
		}
	}
	for _, a := range calls {
		v, ok := byCalls[a]
		if !ok || entered[a.Token] || !(v.Certain || v.Possible) {
			continue
		}
		cause := CauseDoubleGrant
		if !v.Certain {
			cause = CausePossible
		}
		if a.Window {
			kr.Counts.add(cause, 0)
		}
		kr.Violations = append(kr.Violations, Violation{Cause: cause, Event: a, Inside: nonNil(acquires[v.Against]), InWindow: a.Window, ByCalls: true})
	}
}

func nonNil(e *history.Event) []*history.Event {
	if e == nil {
		return nil
	}
	return []*history.Event{e}
}

// validityFromCalls takes each holder's validity from its own calls: an
// enter's from its acquire, a renewal notice's from the ok renewal that
// told it, a write's from the lock's report that the lease ended before it
// (OpLost), joined by token. An event whose recorded validity disagrees is
// reported, and the model goes by the calls.
func (kr *KeyReport) validityFromCalls(evs, calls []*history.Event) []*history.Event {
	kr.acquires = acquiresByToken(calls)
	renewals := map[string][]*history.Event{}
	kr.ends = map[string]*history.Event{}
	for _, e := range calls {
		switch {
		case e.Op == history.OpRenew && e.Out == history.OutOK:
			renewals[e.Token] = append(renewals[e.Token], e)
		case e.Op == history.OpLost && kr.ends[e.Token] == nil:
			kr.ends[e.Token] = e
		}
	}
	out := make([]*history.Event, len(evs))
	for i, e := range evs {
		out[i] = e
		var from *history.Event
		switch e.Op {
		case history.OpEnter:
			from = kr.acquires[e.Token]
		case history.OpRenewed:
			// The latest ok renewal that returned before the notice.
			for _, r := range renewals[e.Token] {
				if r.Return <= e.Return && (from == nil || r.Return >= from.Return) {
					from = r
				}
			}
		}
		want, ok := int64(0), from != nil
		if ok {
			want = from.Valid
		}
		if end := kr.ends[e.Token]; e.Op == history.OpWrite && end != nil && end.Return <= e.Call && end.Valid < e.Valid {
			// The lock reported the lease ended before the write: the
			// write is judged by that end, as the run judged it.
			want, ok = end.Valid, true
		}
		if ok && want != e.Valid {
			fixed := *e
			fixed.Valid = want
			out[i] = &fixed
			kr.Disagreements = append(kr.Disagreements, Disagreement{Event: e, Model: e.Out, Recorded: e.Out, CallsValid: want})
		}
	}
	return out
}

// segmentOps is how many events one Porcupine partition holds: Porcupine
// keeps a bitset of the partition per step, so a hot key's hundred thousand
// events are checked as segments, each resuming from the state the last one
// ended in.
const segmentOps = 1000

// segments cuts a key's events into Porcupine partitions. Each but the
// first starts with a resume operation that sets the model's state; the events are points in
// the resource's order (a strictly increasing time per key), so Porcupine's
// search is the model's replay.
func segments(evs []*history.Event) [][]porcupine.Operation {
	var out [][]porcupine.Operation
	s := &state{}
	var last int64
	clientIDs := map[[2]int]int{}
	var cur []porcupine.Operation
	for i, e := range evs {
		if i%segmentOps == 0 {
			if cur != nil {
				out = append(out, cur)
			}
			cur = []porcupine.Operation{}
			clientIDs = map[[2]int]int{}
			if i > 0 {
				// A later segment starts from where the one before ended.
				t := max(e.Return-1, last+1)
				cur = append(cur, porcupine.Operation{ClientId: 0, Input: input{resume: s}, Call: t, Return: t})
				clientIDs[[2]int{-1, -1}] = 0
				last = t
			}
		}
		t := max(e.Return, last+1)
		last = t
		id, ok := clientIDs[[2]int{e.Generator, e.Worker}]
		if !ok {
			id = len(clientIDs)
			clientIDs[[2]int{e.Generator, e.Worker}] = id
		}
		cur = append(cur, porcupine.Operation{ClientId: id, Input: input{ev: e}, Output: e.Out, Call: t, Return: t})
		s = step(s, e, 0).next
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// porcupine checks every segment; a key's verdict is its worst segment's.
func (r *Report) porcupine(timeout time.Duration) error {
	for _, seg := range r.segments {
		got := porcupine.CheckOperationsTimeout(r.model, seg.ops, timeout)
		if got == porcupine.Ok {
			continue
		}
		if got == porcupine.Illegal || seg.key.Porcupine == porcupine.Ok {
			seg.key.Porcupine = got
		}
		if r.Porcupine != porcupine.Illegal {
			r.Porcupine = got
		}
		if got == porcupine.Illegal {
			r.illegal = append(r.illegal, seg)
		}
	}
	return nil
}

// input is a Porcupine operation's input: a resource event, or the state a
// segment resumes from.
type input struct {
	ev     *history.Event
	resume *state
}

// model is the lease-lock model as Porcupine takes it.
func model(drift int64) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return &state{} },
		StepContext: func(_ context.Context, st, in, _ any) (bool, any) {
			i := in.(input)
			if i.resume != nil {
				return true, i.resume
			}
			res := step(st.(*state), i.ev, drift)
			return res.cause == Safe, res.next
		},
		Equal: func(a, b any) bool { return a.(*state).equal(b.(*state)) },
		DescribeOperation: func(in, out any) string {
			i := in.(input)
			if i.resume != nil {
				return "resume: " + i.resume.String()
			}
			return describe(i.ev)
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
