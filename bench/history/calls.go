package history

import (
	"cmp"
	"slices"
)

// The lock's-calls rule. The protected resource sees two holders inside at
// once only if both reach it; the lock's own calls show a double grant even
// where the second holder entered after the first had left: an acquire that
// returned while another token's lease on the same key was granted, not yet
// released and still valid (less the drift allowance) was granted by the
// service twice. The run applies the rule as its calls return (bench) and
// lockbench check applies it to the history's calls (bench/check): both feed
// a CallLedger the same calls in the same order, so they count alike.
//
// For an acquisition B of a key, against each other lease A of the key:
//   - A returned before B was called (A.ret ≤ B.call): B is a certain double
//     grant when B returned before A's release was called and before A's
//     validity (from A's acquire and the renewals that returned by B's
//     call) less the drift. A release called before B returned may have
//     landed first: that is the ordinary hand-over to a waiter, not counted.
//   - A was still in flight when B was called (the two acquires overlapped):
//     which was granted first cannot be told from the times, but if both
//     were unreleased and valid when B returned, both held the key at once
//     from then on whichever came first: a certain double grant. Where A
//     was unreleased and valid when B was called but its validity (less
//     the drift) ended while B was in flight, the order decides: had B been
//     granted first, A was granted inside B's lease; had A, B came after
//     A's lease ended. That pair is a possible double grant, counted apart.
//
// Times are nanoseconds on one clock (a history's origin, or the run's).

// CallVerdict is the rule's verdict on one acquisition.
type CallVerdict struct {
	// Certain: the acquisition returned inside another token's lease.
	Certain bool
	// Possible: it may have, but the order cannot be told from the times.
	Possible bool
	// Against is the other lease's token (the first found, certain first).
	Against string
}

// callLease is one lease of a key as its calls tell it.
type callLease struct {
	token     string
	call, ret int64
	// valid is the acquire's validity end; renewals are the ok renewals,
	// in the order they returned.
	valid    int64
	renewals []validFrom
	// ended is the lock's report that the lease ended unasked (OpLost):
	// from ended.ret on, the lease is valid until ended.valid at the most.
	ended validFrom
	// relCall and relRet are the release's call and return, when seen.
	relCall, relRet         int64
	releasing, releasedBack bool
}

// validFrom says that from ret on, the lease was valid until valid.
type validFrom struct{ ret, valid int64 }

// validBy is the lease's validity end as known by time t: the acquire's,
// extended by every renewal that returned by then, and cut short by the
// lock's report of its end if that came by then.
func (l *callLease) validBy(t int64) int64 {
	v := l.valid
	for _, r := range l.renewals {
		if r.ret > t {
			break
		}
		v = max(v, r.valid)
	}
	if l.ended.ret != 0 && l.ended.ret <= t {
		v = min(v, l.ended.valid)
	}
	return v
}

// unreleasedAt reports whether the release had not been called by t.
func (l *callLease) unreleasedAt(t int64) bool { return !l.releasing || t < l.relCall }

// CallLedger applies the rule to one key. Feed it every call of the key in
// the order of the times it is given: acquisitions as they return, ok
// renewals as they return, releases as they are called and as they return.
//
// The leases are held by value, in the order they were acquired, and found
// by token from the newest: a key holds few (the run prunes it), the lease a
// call concerns is nearly always among the last, and a run calls the ledger
// four times per acquisition, so a map per key and an allocation per lease
// cost more than the scan (measured: a fifth of a pipelined run's CPU went
// to the ledger with them).
type CallLedger struct {
	drift  int64
	leases []callLease
	// unreleased counts the leases whose release has not been called: fed
	// in time order, only they can be unreleased when an acquisition
	// returns, so with none Acquired has nothing to judge against.
	unreleased int
}

// NewCallLedger returns an empty ledger for one key with the clock-drift
// allowance drift.
func NewCallLedger(drift int64) *CallLedger {
	return &CallLedger{drift: drift}
}

// Acquired records an acquisition of token, called at call and returned at
// ret with a lease valid until valid, and judges it against the key's other
// leases.
func (c *CallLedger) Acquired(token string, call, ret, valid int64) CallVerdict {
	var v CallVerdict
	if c.unreleased == 0 {
		// Every lease's release was called by now (at or before ret, the
		// calls coming in time order): none is judged, and the scan is
		// skipped. With a key per acquisition this is nearly every call.
		c.leases = append(c.leases, callLease{token: token, call: call, ret: ret, valid: valid})
		c.unreleased++
		return v
	}
	for i := range c.leases {
		a := &c.leases[i]
		// Both cases need a lease not yet released when this one returned;
		// most of a key's leases were, and the field test is far cheaper
		// than comparing tokens (it was a twelfth of a pipelined run's CPU).
		if !a.unreleasedAt(ret) || a.token == token {
			continue
		}
		switch {
		case a.ret <= call && ret < a.validBy(call)-c.drift:
			if !v.Certain {
				v = CallVerdict{Certain: true, Against: a.token}
			}
		case a.ret > call && ret < valid-c.drift && ret < a.validBy(ret)-c.drift:
			// In flight together, both valid and unreleased after the later
			// return: both held the key at once, whatever the order.
			if !v.Certain {
				v = CallVerdict{Certain: true, Against: a.token}
			}
		case a.ret > call && ret < valid-c.drift && call < a.validBy(call)-c.drift:
			if !v.Certain && !v.Possible {
				v = CallVerdict{Possible: true, Against: a.token}
			}
		}
	}
	c.leases = append(c.leases, callLease{token: token, call: call, ret: ret, valid: valid})
	c.unreleased++
	return v
}

// lease is token's lease not yet released, newest first (a token acquired
// twice is the later acquisition's), or nil when the ledger holds none.
// Leases whose release returned are passed over without comparing tokens:
// every call that looks a lease up (renewed, ended, releasing, released)
// changes nothing on them that a later acquisition is judged by, and a
// key's leases are mostly those.
func (c *CallLedger) lease(token string) *callLease {
	for i := len(c.leases) - 1; i >= 0; i-- {
		if l := &c.leases[i]; !l.releasedBack && l.token == token {
			return l
		}
	}
	return nil
}

// Renewed records an ok renewal of token that returned at ret, valid until valid.
func (c *CallLedger) Renewed(token string, ret, valid int64) {
	if l := c.lease(token); l != nil {
		l.renewals = append(l.renewals, validFrom{ret: ret, valid: valid})
	}
}

// Ended records the lock's report, heard at ret, that token's lease ended
// unasked at end (its session ended): from ret on it is judged as a lease
// valid until end.
func (c *CallLedger) Ended(token string, ret, end int64) {
	if l := c.lease(token); l != nil && l.ended.ret == 0 {
		l.ended = validFrom{ret: ret, valid: end}
	}
}

// Releasing records that token's release was called at call.
func (c *CallLedger) Releasing(token string, call int64) {
	if l := c.lease(token); l != nil && !l.releasing {
		l.releasing, l.relCall = true, call
		c.unreleased--
	}
}

// Released records that token's release returned at ret (whatever it answered).
func (c *CallLedger) Released(token string, ret int64) {
	if l := c.lease(token); l != nil && l.releasing && !l.releasedBack {
		l.releasedBack, l.relRet = true, ret
	}
}

// Prune forgets the leases whose release returned at or before watermark:
// no acquisition called at or after it can be judged against them.
func (c *CallLedger) Prune(watermark int64) {
	c.leases = slices.DeleteFunc(c.leases, func(l callLease) bool {
		return l.releasedBack && l.relRet <= watermark
	})
}

// Len is how many leases the ledger holds.
func (c *CallLedger) Len() int { return len(c.leases) }

// CallsOfKey replays one key's lock calls (acquire, renew, release and lost
// events of any worker) through a ledger, in the order the run fed its own, and
// returns the verdict on each ok acquisition, by the event's index in evs.
func CallsOfKey(evs []*Event, drift int64) map[*Event]CallVerdict {
	type step struct {
		at   int64
		kind int // 0 acquire, 1 renewed, 2 release call, 3 release return, 4 ended
		e    *Event
	}
	var steps []step
	for _, e := range evs {
		switch {
		case e.Op == OpAcquire && e.Out == OutOK:
			steps = append(steps, step{e.Return, 0, e})
		case e.Op == OpRenew && e.Out == OutOK:
			steps = append(steps, step{e.Return, 1, e})
		case e.Op == OpRelease:
			steps = append(steps, step{e.Call, 2, e}, step{e.Return, 3, e})
		case e.Op == OpLost:
			steps = append(steps, step{e.Return, 4, e})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })
	l := NewCallLedger(drift)
	out := map[*Event]CallVerdict{}
	for _, s := range steps {
		switch s.kind {
		case 0:
			out[s.e] = l.Acquired(s.e.Token, s.e.Call, s.e.Return, s.e.Valid)
		case 1:
			l.Renewed(s.e.Token, s.e.Return, s.e.Valid)
		case 2:
			l.Releasing(s.e.Token, s.e.Call)
		case 3:
			l.Released(s.e.Token, s.e.Return)
		case 4:
			l.Ended(s.e.Token, s.e.Return, s.e.Valid)
		}
	}
	return out
}
