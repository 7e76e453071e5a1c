// Package check checks a run's history against a lease-lock model, key by
// key, with Porcupine: it counts the run's safety incidents by cause (double
// grants, overruns, stale writes accepted and rejected) on its own, from the
// history's times and tokens alone, names the keys that broke mutual
// exclusion with the events that broke it, and draws Porcupine's
// visualization of them.
//
// The model. A key is a lease lock guarding a register (the protected
// resource). Its events, in the resource's own order (the per-key sequence
// number), step the model:
//
//   - enter(holder, granted, valid): legal when nobody is inside. Otherwise it
//     is a double grant when some holder inside still had a valid lease at
//     the grant (granted < valid − drift: the lock granted the key twice), and
//     an overrun when every holder inside had outlived its lease (the earlier
//     holder worked past it; the grant itself was legal).
//   - renewed(holder, valid): the holder's lease now ends at valid.
//   - write(holder, fence, at, valid): with a fencing token, rejected when a
//     higher token was written (legal: fencing stopped a stale writer);
//     without one, a stale write accepted (illegal) when the holder's lease
//     had expired (at > valid) and a newer holder already wrote.
//   - exit, abandon(holder): the holder leaves.
//
// drift is the clock-drift allowance: server and client clocks may disagree
// on a lease's end by that much (default: the run's own, 1% of the TTL plus
// 2 ms, written in the history's header).
package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/bench/history"
)

// holderRef is one holder inside a key, as the model knows it.
type holderRef struct {
	g, w  int
	token string
	epoch uint64
	valid int64
	// enter is the holder's enter event, renewed its latest renewal: the
	// events a violation names.
	enter, renewed *history.Event
}

// state is a key's model state. Step never changes a state: it makes a new one.
type state struct {
	inside       []holderRef
	epoch        uint64
	lastWritten  uint64
	highestFence int64
}

func (s *state) clone() *state {
	c := *s
	c.inside = slices.Clone(s.inside)
	return &c
}

func (s *state) equal(o *state) bool {
	if s.epoch != o.epoch || s.lastWritten != o.lastWritten || s.highestFence != o.highestFence || len(s.inside) != len(o.inside) {
		return false
	}
	for i := range s.inside {
		a, b := s.inside[i], o.inside[i]
		if a.g != b.g || a.w != b.w || a.token != b.token || a.epoch != b.epoch || a.valid != b.valid {
			return false
		}
	}
	return true
}

func (s *state) find(e *history.Event) int {
	for i, h := range s.inside {
		if h.g == e.Generator && h.w == e.Worker && h.token == e.Token {
			return i
		}
	}
	return -1
}

func (s *state) String() string {
	var hs []string
	for _, h := range s.inside {
		hs = append(hs, fmt.Sprintf("g%d/w%d #%d valid to %s", h.g, h.w, h.epoch, fmtNS(h.valid)))
	}
	inside := "nobody inside"
	if len(hs) > 0 {
		inside = "inside: " + strings.Join(hs, "; ")
	}
	return fmt.Sprintf("%s | entries %d, last written #%d, highest fence %d", inside, s.epoch, s.lastWritten, s.highestFence)
}

// Cause is what a violation broke.
type Cause uint8

// The causes a step can find.
const (
	// Safe: the step broke nothing.
	Safe Cause = iota
	// CauseDoubleGrant: a holder entered while another inside had a valid lease.
	CauseDoubleGrant
	// CauseOverrun: a holder entered while another inside had outlived its lease.
	CauseOverrun
	// CauseStaleAccepted: an expired holder's unfenced write came after a
	// newer holder's and was accepted, or a write whose fencing token was
	// lower than one already written was accepted.
	CauseStaleAccepted
	// CausePossible: by the lock's calls, the holder may have been granted
	// inside another's lease, but the order cannot be told from the times.
	CausePossible
)

func (c Cause) String() string {
	return [...]string{"safe", "double grant", "overrun", "stale write accepted", "possible double grant"}[c]
}

// stepResult is what one event did to a key.
type stepResult struct {
	next *state
	// cause is the violation the event made, Safe if none.
	cause Cause
	// outcome is the model's own outcome for the event (to compare with the
	// one the run recorded).
	outcome history.Outcome
	// others are the holders inside at an overlapping entry.
	others []holderRef
	// byCalls is the acquire whose calls made the cause, when they did.
	byCalls *history.Event
}

// step applies one resource event to s, which it leaves as it was: the
// model as Porcupine takes it, whose states are values.
func step(s *state, e *history.Event, drift int64) stepResult { return stepOn(s.clone(), e, drift) }

// stepOn applies one resource event to n in place and returns n as the
// next state: the checker's own replay, which keeps one state per key and
// would otherwise make two allocations an event. The holders of an
// overlapping entry (others) share n's array, so they are read before
// n's next step.
func stepOn(n *state, e *history.Event, drift int64) stepResult {
	r := stepResult{next: n, outcome: history.OutOK}
	switch e.Op {
	case history.OpEnter:
		if len(n.inside) > 0 {
			r.cause, r.outcome, r.others = CauseOverrun, history.OutOverrun, n.inside
			for _, h := range n.inside {
				if e.Granted < h.valid-drift {
					r.cause, r.outcome = CauseDoubleGrant, history.OutDoubleGrant
				}
			}
		}
		n.epoch++
		n.inside = append(n.inside, holderRef{g: e.Generator, w: e.Worker, token: e.Token, epoch: n.epoch, valid: e.Valid, enter: e})
	case history.OpRenewed:
		if i := n.find(e); i >= 0 {
			n.inside[i].valid, n.inside[i].renewed = e.Valid, e
		}
	case history.OpWrite:
		var epoch uint64
		if i := n.find(e); i >= 0 {
			epoch = n.inside[i].epoch
		}
		r.outcome = n.write(epoch, e)
		if r.outcome == history.OutStaleAccepted {
			r.cause = CauseStaleAccepted
		}
		if r.outcome == history.OutFencingRejected && e.Out == history.OutOK {
			// The resource accepted a write fencing should have refused:
			// a stale write accepted, whatever the run recorded.
			r.cause, r.outcome = CauseStaleAccepted, history.OutStaleAccepted
		}
	case history.OpExit, history.OpAbandon:
		if i := n.find(e); i >= 0 {
			n.inside = slices.Delete(n.inside, i, i+1)
		}
	}
	return r
}

// write is the register's verdict on a write by the entry epoch.
func (s *state) write(epoch uint64, e *history.Event) history.Outcome {
	if e.Fence > 0 {
		if e.Fence < s.highestFence {
			return history.OutFencingRejected
		}
		s.highestFence = e.Fence
		s.lastWritten = max(s.lastWritten, epoch)
		return history.OutOK
	}
	// A lease without a TTL (a PostgreSQL advisory lock: valid as long as
	// its session, recorded as valid beyond any run) may have ended unseen;
	// the resource judges its write as an expired one's, and so does this.
	expired := e.Call > e.Valid || e.Valid > noExpiry
	stale := expired && s.lastWritten > epoch
	s.lastWritten = max(s.lastWritten, epoch)
	if stale {
		return history.OutStaleAccepted
	}
	return history.OutOK
}

// noExpiry is past any validity a lease with a TTL can have in a history.
const noExpiry = math.MaxInt64 / 2

// fmtNS renders a time from the origin in seconds.
func fmtNS(ns int64) string { return fmt.Sprintf("%.6fs", float64(ns)/1e9) }
