package renewal

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/history"
)

// Outcome is how one lease, or one trial, came out.
type Outcome uint8

// The outcomes, in order of gravity: a trial takes its worst lease's.
const (
	// Inconclusive: no lease was lost while held (no exposure).
	Inconclusive Outcome = iota
	// Kept: the lock kept the lease through the fault (a quorum, a
	// store that persists), and said so on the next renewal.
	Kept
	// Caught: the holder was told (a renewal lost, or failing past the
	// validity) and stopped before its next write.
	Caught
	// Fenced: the holder wrote after losing its lease, and the resource
	// rejected the write by its fencing token.
	Fenced
	// Overran: the holder wrote after losing its lease (or the lock
	// extended a lease that had expired), and nothing stopped it.
	Overran
)

var outcomeNames = [...]string{Inconclusive: "inconclusive", Kept: "kept", Caught: "caught", Fenced: "fenced", Overran: "overran"}

// String names the outcome as tables and JSON show it.
func (o Outcome) String() string { return outcomeNames[o] }

// MarshalText writes the name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Trial is one chance for the hazard: a fault firing, or a lease lost on
// its own (a holder's stall).
type Trial struct {
	// Run is the run whose history it is in.
	Run string `json:"run"`
	// AtNS is when it happened, from the history's origin.
	AtNS int64 `json:"at_ns"`
	// Exposure is how many leases were held and lost there; 0 makes the
	// trial inconclusive.
	Exposure int `json:"exposure"`
	// Outcome is the worst of its leases'.
	Outcome Outcome `json:"outcome"`
	// Leases count its exposed leases by outcome.
	Leases map[string]int `json:"leases"`
	// DelaysNS are, for each caught lease, how long after the loss its
	// holder was told.
	DelaysNS []int64 `json:"detection_delays_ns,omitempty"`
	// OverrunNS are, for each lease that wrote late, how long after the
	// loss the write came.
	OverrunNS []int64 `json:"overrun_ns,omitempty"`
	// Observed is what a probe's trial saw (the server's remaining TTL,
	// the renewal's outcome), or why it had no exposure.
	Observed string `json:"observed,omitempty"`
}

// lease is one acquisition's events, in call order.
type lease struct {
	token  string
	key    int
	gotAt  int64 // the acquisition's return
	events []*history.Event
}

// leases groups a history's lock and resource events by owner token.
func leases(h *history.History) []*lease {
	byToken := map[string]*lease{}
	var order []*lease
	for i := range h.Events {
		e := &h.Events[i]
		if e.Token == "" {
			continue
		}
		l := byToken[e.Token]
		if l == nil {
			l = &lease{token: e.Token, key: e.Key, gotAt: -1}
			byToken[e.Token] = l
			order = append(order, l)
		}
		if e.Op == history.OpAcquire && e.Out == history.OutOK {
			l.gotAt = e.Return
		}
		l.events = append(l.events, e)
	}
	for _, l := range order {
		slices.SortStableFunc(l.events, func(a, b *history.Event) int { return cmpInt(a.Call, b.Call) })
	}
	return slices.DeleteFunc(order, func(l *lease) bool { return l.gotAt < 0 })
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ended is when the holder left the critical section (its exit, or its
// write if it has no exit), or -1 if neither is in the history.
func (l *lease) ended() int64 {
	end := int64(-1)
	for _, e := range l.events {
		if e.Op == history.OpExit || e.Op == history.OpAbandon {
			return e.Return
		}
		if e.Op == history.OpWrite {
			end = e.Call
		}
	}
	return end
}

// heldAt says whether the lease was granted before t and still inside.
func (l *lease) heldAt(t int64) bool {
	end := l.ended()
	return l.gotAt <= t && (end < 0 || end > t)
}

// validAt is the lease's validity end as its holder knew it at t: that of
// its acquisition or latest renewal returned by then.
func (l *lease) validAt(t int64) int64 {
	valid := int64(0)
	for _, e := range l.events {
		if e.Return > t {
			break
		}
		if (e.Op == history.OpAcquire || e.Op == history.OpRenew) && e.Out == history.OutOK {
			valid = e.Valid
		}
	}
	return valid
}

// leaseVerdict is one lease's outcome: delay is the detection delay of a caught
// lease, or the lateness of a write after the loss.
type leaseVerdict struct {
	out   Outcome
	delay int64
}

// lastRenewBefore is the last renewal the holder made before t, nil if none.
func (l *lease) lastRenewBefore(t int64) *history.Event {
	var last *history.Event
	for _, e := range l.events {
		if e.Op == history.OpRenew && e.Call < t {
			last = e
		}
	}
	return last
}

// written is a late write's outcome: fenced when the resource rejected it.
func written(e *history.Event, late int64) leaseVerdict {
	if e.Out == history.OutFencingRejected {
		return leaseVerdict{out: Fenced, delay: late}
	}
	return leaseVerdict{out: Overran, delay: late}
}

// aborted is the verdict of a holder that left without writing: caught if
// its last renewal told it the lease was lost or could not be renewed,
// inconclusive otherwise (the run ended under it).
func (l *lease) aborted(exit, lostAt int64) leaseVerdict {
	r := l.lastRenewBefore(exit + 1)
	if r == nil || (r.Out != history.OutLost && r.Out != history.OutFailed) {
		return leaseVerdict{}
	}
	return leaseVerdict{out: Caught, delay: max(0, r.Return-lostAt)}
}

// atExpiry judges a lease held from `from` whose renewals may stop: it is
// lost at its validity; a write after that overran, a holder that left
// without writing was caught, and a renewal that succeeded though called
// past the validity (by more than margin) brought an expired lease back.
func (l *lease) atExpiry(from, margin int64) leaseVerdict { return l.pastValidity(from, margin, false) }

// resurrected judges a lease held at from for expired-extend: the first
// renewal the server answered after the lease's validity decides. Lost,
// returned past the validity, is caught; ok, though called past the
// validity by more than margin, brought an expired lease back (overran).
// An ok called before the validity and answered after is not judged: the
// server may have run it in time. A holder that gave up on a failed
// renewal never asked the question (inconclusive); one that wrote after
// its validity without asking overran.
func (l *lease) resurrected(from, margin int64) leaseVerdict {
	return l.pastValidity(from, margin, true)
}

// pastValidity walks the lease's events from `from`, its validity moving
// with each renewal, for atExpiry and resurrected (asked: only a renewal
// answered past the validity decides, not a holder leaving).
func (l *lease) pastValidity(from, margin int64, asked bool) leaseVerdict {
	valid := l.validAt(from)
	for _, e := range l.events {
		if e.Call < from {
			continue
		}
		switch e.Op {
		case history.OpRenew:
			switch {
			case asked && e.Out == history.OutLost && e.Return > valid:
				return leaseVerdict{out: Caught, delay: e.Return - valid}
			case e.Out == history.OutOK && e.Call > valid+margin:
				return leaseVerdict{out: Overran, delay: e.Call - valid}
			case e.Out == history.OutOK:
				valid = e.Valid
			}
		case history.OpWrite:
			if e.Call >= valid {
				return written(e, e.Call-valid)
			}
			return leaseVerdict{}
		case history.OpExit:
			if asked || e.Return < valid {
				return leaseVerdict{}
			}
			return l.aborted(e.Return, valid)
		}
	}
	return leaseVerdict{}
}

// atFault judges a lease held when a server that forgets fired at from and
// came back at back: the lease is known lost when a later call of its
// holder found it gone, or another holder entered its key while it was
// inside; it survived when a renewal after the server came back succeeded
// and nobody else entered. A write after the loss overran; a holder told
// before writing was caught.
func (l *lease) atFault(from, back int64, others []*lease) leaseVerdict {
	end := l.ended()
	intruded := int64(-1)
	for _, o := range others {
		if o == l || o.key != l.key || o.gotAt < from || (end >= 0 && o.gotAt > end) {
			continue
		}
		if intruded < 0 || o.gotAt < intruded {
			intruded = o.gotAt
		}
	}
	told := int64(-1)
	confirmed := false
	for _, e := range l.events {
		if e.Call < from {
			continue
		}
		switch e.Op {
		case history.OpRenew, history.OpRelease:
			if e.Out == history.OutLost && told < 0 {
				told = e.Return
			}
			if e.Op == history.OpRenew && e.Out == history.OutOK && e.Call >= back {
				confirmed = true
			}
		case history.OpWrite:
			if valid := l.validAt(e.Call); e.Call >= valid {
				return written(e, e.Call-valid)
			}
			if intruded >= 0 && intruded < e.Call || !confirmed && l.lostLater(e.Call) {
				return written(e, e.Call-from)
			}
			if confirmed {
				return leaseVerdict{out: Kept}
			}
			return leaseVerdict{}
		case history.OpExit:
			if told >= 0 {
				return leaseVerdict{out: Caught, delay: told - from}
			}
			return l.aborted(e.Return, from)
		}
	}
	return leaseVerdict{}
}

// atSessionEnd judges a lease held when its session was ended at from
// (see sessionEndAt): the lease is gone then. A write after that overran (or was fenced); a
// holder that left without writing was caught if a call of its own had
// found the lease gone, or a renewal failing past the validity told it.
func (l *lease) atSessionEnd(from int64) leaseVerdict {
	for _, e := range l.events {
		if e.Call < from {
			continue
		}
		switch e.Op {
		case history.OpWrite:
			return written(e, e.Call-from)
		case history.OpExit:
			return l.aborted(e.Return, from)
		}
	}
	return leaseVerdict{}
}

// reportedEnd is the end its lock reported for the lease (history.OpLost:
// its session ended), or -1 for none.
func (l *lease) reportedEnd() int64 {
	for _, e := range l.events {
		if e.Op == history.OpLost {
			return e.Valid
		}
	}
	return -1
}

// sessionEndAt is when a session lock's lease ended at firing f: the end
// its lock reported where that falls in f's span (see owns), else f's
// start. The report can precede the fault's stamp (the client's
// disconnection comes before the stamp, taken once the fault was done) or
// follow it (the client learns of the expiry only on reconnecting). Check
// and the run's incidents judge by the report, and so does the cell.
func (l *lease) sessionEndAt(f firing) int64 {
	if end := l.reportedEnd(); f.owns(end) {
		return end
	}
	return f.start
}

// lostLater says whether a call of the holder after t found the lease gone.
func (l *lease) lostLater(t int64) bool {
	for _, e := range l.events {
		if e.Call > t && (e.Op == history.OpRenew || e.Op == history.OpRelease) && e.Out == history.OutLost {
			return true
		}
	}
	return false
}

// firing is one fault firing: faults started together (one per node).
// from and until bound the span whose reported session ends are this
// firing's: halfway from the firing before it to halfway to the one
// after, so that an end reported late or early is the nearer firing's.
type firing struct{ start, end, from, until int64 }

// owns says whether a session end reported at t is this firing's.
func (f firing) owns(t int64) bool { return t >= 0 && t > f.from && t <= f.until }

// firings groups a history's faults into firings: the faults one recipe
// scheduled at the same instant (its at= value: one per node) are one
// firing, however late each was applied on a loaded machine.
func firings(h *history.History) []firing {
	byAt := map[string]int{}
	var out []firing
	for _, f := range h.Faults {
		at, _, _ := strings.Cut(f.Spec, " ")
		end := max(f.EndNS, f.StartNS)
		if i, ok := byAt[at]; ok {
			out[i].start, out[i].end = min(out[i].start, f.StartNS), max(out[i].end, end)
			continue
		}
		byAt[at] = len(out)
		out = append(out, firing{start: f.StartNS, end: end})
	}
	slices.SortFunc(out, func(a, b firing) int { return cmpInt(a.start, b.start) })
	for i := range out {
		out[i].from, out[i].until = math.MinInt64, math.MaxInt64
		if i > 0 {
			out[i].from = out[i-1].end + (out[i].start-out[i-1].end)/2
		}
		if i+1 < len(out) {
			out[i].until = out[i].end + (out[i+1].start-out[i].end)/2
		}
	}
	return out
}

// Classify turns one run's history into the case's trials: one per fault
// firing, or, for a case without faults, one per lease lost on its own.
func Classify(c Case, run string, h *history.History) []Trial {
	ttl := time.Duration(h.Header.TTLNS)
	// A renewal called this long past the validity is past the server's
	// expiry too, whatever the round trip and the clocks' drift.
	margin := int64(ttl/10) + h.Header.DriftNS
	ls := leases(h)
	if c.Faults == 0 {
		var out []Trial
		for _, l := range ls {
			if v := l.atExpiry(l.gotAt, margin); v.out != Inconclusive {
				out = append(out, trialOf(run, l.gotAt, []leaseVerdict{v}))
			}
		}
		return out
	}
	var out []Trial
	for _, f := range firings(h) {
		var vs []leaseVerdict
		for _, l := range ls {
			lostAt := f.start
			if c.Loss == LossSessionEnded {
				lostAt = l.sessionEndAt(f)
			}
			if !l.heldAt(lostAt) {
				continue
			}
			var v leaseVerdict
			switch c.Loss {
			case LossAtFault:
				v = l.atFault(f.start, f.end, ls)
			case LossResurrect:
				v = l.resurrected(f.start, margin)
			case LossSessionEnded:
				v = l.atSessionEnd(lostAt)
			default:
				v = l.atExpiry(f.start, margin)
			}
			if v.out != Inconclusive {
				vs = append(vs, v)
			}
		}
		out = append(out, trialOf(run, f.start, vs))
	}
	return out
}

// trialOf sums a trial's lease verdicts.
func trialOf(run string, at int64, vs []leaseVerdict) Trial {
	t := Trial{Run: run, AtNS: at, Exposure: len(vs), Leases: map[string]int{}}
	for _, v := range vs {
		t.Outcome = max(t.Outcome, v.out)
		t.Leases[v.out.String()]++
		switch v.out {
		case Caught:
			t.DelaysNS = append(t.DelaysNS, v.delay)
		case Overran, Fenced:
			t.OverrunNS = append(t.OverrunNS, v.delay)
		}
	}
	return t
}
