package bench

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/lockimpl/clock"
)

// callLedgers applies the lock's-calls rule (history.CallLedger) to every
// key as the run goes: an acquisition that returned inside another token's
// unreleased, valid lease is a double grant by the service even if the
// resource never saw both holders inside. Every time the rule compares is
// read under the key's lock, so the ledger sees each key's calls in the
// order of their times, as lockbench check replays them from the history.
type callLedgers struct {
	shards [resourceShards]callShard
	drift  int64
	// origin is time 0 of the ledger's clock: the history's when there is
	// one, so both hold the same numbers.
	origin time.Time
	// acquiring holds a lower bound of each worker's acquisition start (ns
	// from origin) while it acquires, 0 otherwise: the earliest bounds the
	// calls still to come (see watermark).
	acquiring []atomic.Int64
}

type callShard struct {
	mu   sync.Mutex
	keys map[int]*history.CallLedger
	// releases counts the shard's releases, to sweep it every sweepEvery.
	releases int
}

// pruneAbove is how many leases a key keeps before released ones are
// forgotten.
const pruneAbove = 16

// sweepEvery is how many releases a shard sees between sweeps that forget
// released leases of every key and the keys left empty: with a key per
// acquisition (--keys unique) no key ever reaches pruneAbove.
const sweepEvery = 256

func newCallLedgers(drift time.Duration, origin time.Time, workers int) *callLedgers {
	c := &callLedgers{drift: int64(drift), origin: origin, acquiring: make([]atomic.Int64, workers)}
	for i := range c.shards {
		c.shards[i].keys = map[int]*history.CallLedger{}
	}
	return c
}

func (c *callLedgers) ns(t time.Time) int64 { return int64(t.Sub(c.origin)) }

// lock takes key's ledger.
func (c *callLedgers) lock(key int) (*callShard, *history.CallLedger) {
	s := &c.shards[uint(key)%resourceShards]
	s.mu.Lock()
	l := s.keys[key]
	if l == nil {
		l = history.NewCallLedger(c.drift)
		s.keys[key] = l
	}
	return s, l
}

// keyLedger is one key's ledger and the shard whose lock guards it. A
// section keeps its key's from the acquisition to the release's return,
// sparing the map lookups: the ledger stays in the map that long, since it
// holds the section's lease until then and only an empty ledger is swept.
type keyLedger struct {
	shard  *callShard
	ledger *history.CallLedger
}

// acquiringFrom marks worker id as acquiring, from a time read before
// this call (the worker's own, so no clock is read here). A watermark that
// missed the mark was taken before it, so before the acquisition's first
// call: whatever it pruned was released before that call and cannot be
// judged against it.
func (c *callLedgers) acquiringFrom(id int, from time.Time) {
	c.acquiring[id].Store(max(1, c.ns(from)))
}

// acquired records worker id's acquisition of key, called at call, and
// returns when it returned (read under the key's lock) with the verdict
// and the key's ledger, for the lease's release.
func (c *callLedgers) acquired(id, key int, token string, call time.Time, valid time.Time) (time.Time, history.CallVerdict, keyLedger) {
	s, l := c.lock(key)
	defer s.mu.Unlock()
	ret := clock.Stamp()
	c.acquiring[id].Store(0)
	v := l.Acquired(token, c.ns(call), c.ns(ret), c.ns(valid))
	if l.Len() > pruneAbove {
		l.Prune(c.watermark(ret))
	}
	return ret, v, keyLedger{shard: s, ledger: l}
}

// notAcquiring marks worker id done acquiring without a lease.
func (c *callLedgers) notAcquiring(id int) { c.acquiring[id].Store(0) }

// watermark is the earliest start of the acquisitions still in flight (or
// now): a lease released before it can no longer be judged against.
func (c *callLedgers) watermark(now time.Time) int64 {
	mark := c.ns(now)
	for i := range c.acquiring {
		if v := c.acquiring[i].Load(); v != 0 {
			mark = min(mark, v)
		}
	}
	return mark
}

// stamped reads the clock under key's lock and tells the key's ledger
// the instant: every time the rule compares is read in the key's order.
func (c *callLedgers) stamped(key int, tell func(s *callShard, l *history.CallLedger, at time.Time)) time.Time {
	s, l := c.lock(key)
	defer s.mu.Unlock()
	return stampLocked(keyLedger{shard: s, ledger: l}, tell)
}

// stampedIn is stamped on a key's ledger already at hand.
func (c *callLedgers) stampedIn(k keyLedger, tell func(s *callShard, l *history.CallLedger, at time.Time)) time.Time {
	k.shard.mu.Lock()
	defer k.shard.mu.Unlock()
	return stampLocked(k, tell)
}

// stampLocked reads the clock and tells k's ledger, its shard's lock held.
func stampLocked(k keyLedger, tell func(s *callShard, l *history.CallLedger, at time.Time)) time.Time {
	at := clock.Stamp()
	tell(k.shard, k.ledger, at)
	return at
}

// renewed records an ok renewal of key's token valid until valid, and
// returns when it returned.
func (c *callLedgers) renewed(key int, token string, valid time.Time) time.Time {
	return c.stamped(key, func(_ *callShard, l *history.CallLedger, at time.Time) { l.Renewed(token, c.ns(at), c.ns(valid)) })
}

// ended records the lock's report that key's token's lease ended at end
// (its session ended unasked), and returns when it was heard.
func (c *callLedgers) ended(key int, token string, end time.Time) time.Time {
	return c.stamped(key, func(_ *callShard, l *history.CallLedger, at time.Time) { l.Ended(token, c.ns(at), c.ns(end)) })
}

// releasing records that token is being released from k's key, and
// returns when.
func (c *callLedgers) releasing(k keyLedger, token string) time.Time {
	return c.stampedIn(k, func(_ *callShard, l *history.CallLedger, at time.Time) { l.Releasing(token, c.ns(at)) })
}

// released records that the release returned, and returns when; every
// sweepEvery releases it sweeps the shard.
func (c *callLedgers) released(k keyLedger, token string) time.Time {
	return c.stampedIn(k, func(s *callShard, l *history.CallLedger, at time.Time) {
		l.Released(token, c.ns(at))
		if s.releases++; s.releases%sweepEvery == 0 {
			c.sweep(s, at)
		}
	})
}

// sweep forgets the shard's leases released before the watermark, and
// the keys left empty.
func (c *callLedgers) sweep(s *callShard, now time.Time) {
	mark := c.watermark(now)
	for k, l := range s.keys {
		if l.Prune(mark); l.Len() == 0 {
			delete(s.keys, k)
		}
	}
}
