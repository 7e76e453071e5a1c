package bench

import (
	"time"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/lockimpl"
)

// A session lock's leases (lockimpl.SessionLocker: zk) end with its
// client's session, which the service can end unasked; the client learns
// it only when it reconnects, often after a holder already wrote. The run
// asks the lock right before each write and, for the worker's last write,
// again before each of its later critical sections and as it stops: an end
// the lock reports is recorded as the lock's own event (history.OpLost),
// and a write after it counts as one after its lease, as an expired
// lease's does (expired during work, its overrun timed). The holder is not
// stopped: the lock tells it nothing.

// writtenLease is a worker's last write of a lease that was still valid
// by its validity when written.
type writtenLease struct {
	lease    lockimpl.Lease
	key      int
	at       time.Time
	recorded bool
	// pending is false once the lease's end is settled (or for none).
	pending bool
}

// noteLeaseEnd asks, right before the write, whether the lease ended with
// its session before its validity; if so the lease is cut short there and
// the end recorded, so that the write is judged as an expired lease's.
func (s *section) noteLeaseEnd() {
	if s.sessions == nil {
		return
	}
	end, ok := s.sessions.LeaseEnded(s.lease)
	if !ok {
		return
	}
	end = onLeaseClock(s.lease, end)
	if !end.Before(s.lease.ValidUntil()) {
		return
	}
	s.lease.Validity = end.Sub(s.lease.Start)
	s.recordLeaseEnd(s.key, s.lease, end, s.recorded)
}

// rememberWrite keeps the section's write, made at at within its lease's
// validity, for the lock to report its session's end later.
func (s *section) rememberWrite(at time.Time) {
	if s.sessions == nil {
		return
	}
	if s.written == nil {
		s.written = &writtenLease{}
	}
	*s.written = writtenLease{lease: s.lease, key: s.key, at: at, recorded: s.recorded, pending: true}
}

// givenBack settles the section's written lease: released, it can no
// longer end with its session.
func (s *section) givenBack() {
	if s.written != nil && s.written.pending && s.written.lease.Token == s.lease.Token {
		s.written.pending = false
	}
}

// settleLeaseEnd asks whether the worker's last written lease ended with
// its session before its validity; if so the end is recorded and a write
// after it counted as late. Until the lock knows, the lease stays pending.
func (w *worker) settleLeaseEnd() {
	wl := w.written
	if wl == nil || !wl.pending {
		return
	}
	end, ok := w.sessions.LeaseEnded(wl.lease)
	if !ok {
		return
	}
	end = onLeaseClock(wl.lease, end)
	wl.pending = false
	if !end.Before(wl.lease.ValidUntil()) {
		return
	}
	w.recordLeaseEnd(wl.key, wl.lease, end, wl.recorded)
	if !wl.at.After(end) || !wl.recorded {
		return
	}
	w.rec.latency(opOverrun, wl.at.Sub(end), false)
	w.rec.count(func(c *counters) { c.Incidents.ExpiredDuringWork++ })
}

// onLeaseClock is end on lease's own clock: the lease's start plus the
// time between them. A lock may report the end in wall time only (the
// ctx-lock adapter keeps it as Unix nanoseconds); the history times the
// lease's validity on the monotonic clock its start carries, and the two
// clocks drift apart by nanoseconds while the wall clock is slewed, so the
// lost event and the write cut short by it would name two instants and
// check would read the write's validity as disagreeing with the lock's
// report (seen on rueidislock, 20 ns apart).
func onLeaseClock(lease lockimpl.Lease, end time.Time) time.Time {
	return lease.Start.Add(end.Sub(lease.Start))
}

// recordLeaseEnd records the lock's report that lease ended at end, heard
// now, in the lock's-calls ledger and the history.
func (w *worker) recordLeaseEnd(key int, lease lockimpl.Lease, end time.Time, recorded bool) {
	heard := w.calls.ended(key, lease.Token, end)
	if w.hist != nil {
		w.hist.Add(history.Event{Key: key, Op: history.OpLost, Out: history.OutLost, Window: recorded, Call: w.hist.Since(end),
			Return: w.hist.Since(heard), Token: lease.Token, Fence: lease.Fence, Valid: w.hist.Since(end)})
	}
}
