package bench

import (
	"sync"
	"time"

	"github.com/lockbench/lockbench/lockimpl/clock"
)

// Resource is the protected resource every critical section writes to, kept in
// process so that safety is checked exactly: it sees every enter, write and
// exit of every holder of every key, in real order.
type Resource struct {
	shards [resourceShards]resourceShard
	// untimed leaves Stamp.At zero: only a history reads it, and three
	// clock reads per critical section are a measurable share of a
	// pipelined run's CPU.
	untimed bool
}

const resourceShards = 64

type resourceShard struct {
	mu   sync.Mutex
	keys map[int]*keyState
}

// keyState is what the resource knows of one key.
type keyState struct {
	// inside are the holders in the critical section now: one, or more in
	// an overlap.
	inside []holder
	// epoch numbers entries in order; lastWritten is the newest entry that wrote.
	epoch, lastWritten uint64
	// seq numbers every event of the key in the resource's order.
	seq uint64
	// highestFence is the highest fencing token a write carried.
	highestFence int64
	// abandonedAt is when a crashed holder walked away; zero when none pending.
	abandonedAt time.Time
}

// holder is one holder inside: its entry and its lease's validity as it last
// told the resource.
type holder struct {
	epoch      uint64
	validUntil time.Time
}

// NewResource returns an empty protected resource.
func NewResource() *Resource {
	r := &Resource{}
	r.init()
	return r
}

// newUntimedResource returns an empty protected resource whose stamps
// carry no time (Stamp.At zero), for a run that keeps no history.
func newUntimedResource() *Resource {
	r := &Resource{untimed: true}
	r.init()
	return r
}

func (r *Resource) init() {
	for i := range r.shards {
		r.shards[i].keys = map[int]*keyState{}
	}
}

func (r *Resource) lock(key int) (*resourceShard, *keyState) {
	s := &r.shards[uint(key)%resourceShards]
	s.mu.Lock()
	k := s.keys[key]
	if k == nil {
		k = &keyState{}
		s.keys[key] = k
	}
	return s, k
}

// stamp numbers the key's next event and, unless r is untimed, reads the
// clock under the key's lock, so the history's times follow the resource's
// order.
func (r *Resource) stamp(k *keyState) Stamp {
	k.seq++
	if r.untimed {
		return Stamp{Seq: k.seq}
	}
	return Stamp{Seq: k.seq, At: clock.Stamp()}
}

// Entry is one holder's stay in a key's critical section.
type Entry struct {
	key   int
	epoch uint64
}

// NewEntry is the entry of key with the epoch a resource kept in a server
// gave it (bench/resource), 0 for an entry without one.
func NewEntry(key int, epoch uint64) Entry { return Entry{key: key, epoch: epoch} }

// Key is the entry's key index.
func (e Entry) Key() int { return e.key }

// Epoch is the entry's number among the key's entries.
func (e Entry) Epoch() uint64 { return e.epoch }

// Grant is the lease a holder enters with.
type Grant struct {
	// At is when the acquisition returned: the latest the lock can have
	// granted it.
	At time.Time
	// ValidUntil is the lease's validity end as the client computed it.
	ValidUntil time.Time
	// Drift is the clock-drift allowance (see history.DriftAllowance).
	Drift time.Duration
}

// Stamp places a resource event in its key's order: Seq counts the key's
// events, At is the clock read under the resource's order (zero from a
// resource that keeps no time, in a run without a history).
type Stamp struct {
	Seq uint64
	At  time.Time
}

// Overlap says whether an entry found another holder inside, and why.
type Overlap uint8

const (
	// NoOverlap: the key was free.
	NoOverlap Overlap = iota
	// DoubleGrant: the lock granted this lease while an earlier holder
	// inside still had a valid lease (less the drift allowance): the lock
	// is broken, a longer TTL does not help.
	DoubleGrant
	// Overrun: every holder inside had outlived its lease when this one
	// was granted: the earlier holder worked past its own lease.
	Overrun
)

// classify says why a holder granted at g found others inside: a double
// grant when any of them still had a valid lease at g.At.
func classify(inside []holder, g Grant) Overlap {
	if len(inside) == 0 {
		return NoOverlap
	}
	for _, h := range inside {
		if g.At.Before(h.validUntil.Add(-g.Drift)) {
			return DoubleGrant
		}
	}
	return Overrun
}

// Enter records a holder entering key's critical section with the lease g.
// overlap says whether another holder was still inside (two owners at once)
// and why; blocked is how long the key sat abandoned by a crashed holder
// before this entry, or 0.
func (r *Resource) Enter(key int, g Grant) (e Entry, overlap Overlap, blocked time.Duration, st Stamp) {
	s, k := r.lock(key)
	defer s.mu.Unlock()
	overlap = classify(k.inside, g)
	k.epoch++
	k.inside = append(k.inside, holder{epoch: k.epoch, validUntil: g.ValidUntil})
	if !k.abandonedAt.IsZero() {
		blocked = g.At.Sub(k.abandonedAt)
		k.abandonedAt = time.Time{}
	}
	return Entry{key: key, epoch: k.epoch}, overlap, blocked, r.stamp(k)
}

// Renewed records that e's holder renewed its lease until validUntil.
func (r *Resource) Renewed(e Entry, validUntil time.Time) Stamp {
	s, k := r.lock(e.key)
	defer s.mu.Unlock()
	for i := range k.inside {
		if k.inside[i].epoch == e.epoch {
			k.inside[i].validUntil = validUntil
		}
	}
	return r.stamp(k)
}

// WriteVerdict is what the resource did with a write.
type WriteVerdict uint8

const (
	// WriteAccepted is an ordinary, safe write.
	WriteAccepted WriteVerdict = iota
	// WriteFencingRejected is a write whose fencing token was lower than one
	// already written: fencing stopped a stale writer.
	WriteFencingRejected
	// WriteStaleAccepted is an unfenced write by a holder whose lease had expired,
	// after a newer holder wrote: silent corruption.
	WriteStaleAccepted
	// WriteConflict is an optimistic write (lockimpl.Optimistic) that found
	// the version moved since its read: refused, and counted as contention.
	WriteConflict
)

// Write is the protected write at the end of a critical section. fence is the
// lease's fencing token (0 for locks without one); expired says whether the
// lease's validity had run out by now.
func (r *Resource) Write(e Entry, fence int64, expired bool) (WriteVerdict, Stamp) {
	s, k := r.lock(e.key)
	defer s.mu.Unlock()
	return k.write(e, fence, expired), r.stamp(k)
}

func (k *keyState) write(e Entry, fence int64, expired bool) WriteVerdict {
	if fence > 0 {
		if fence < k.highestFence {
			return WriteFencingRejected
		}
		k.highestFence = fence
		k.lastWritten = max(k.lastWritten, e.epoch)
		return WriteAccepted
	}
	stale := expired && k.lastWritten > e.epoch
	k.lastWritten = max(k.lastWritten, e.epoch)
	if stale {
		return WriteStaleAccepted
	}
	return WriteAccepted
}

// leave takes e's holder out of the key; the caller holds the lock.
func (k *keyState) leave(e Entry) {
	for i := range k.inside {
		if k.inside[i].epoch == e.epoch {
			k.inside = append(k.inside[:i], k.inside[i+1:]...)
			return
		}
	}
}

// Exit records the holder leaving the critical section.
func (r *Resource) Exit(e Entry) Stamp {
	s, k := r.lock(e.key)
	defer s.mu.Unlock()
	k.leave(e)
	return r.stamp(k)
}

// Abandon records a crashed holder leaving the critical section without
// releasing its lease; the next Enter measures how long the key was blocked.
func (r *Resource) Abandon(e Entry, now time.Time) Stamp {
	s, k := r.lock(e.key)
	defer s.mu.Unlock()
	k.leave(e)
	k.abandonedAt = now
	return r.stamp(k)
}
