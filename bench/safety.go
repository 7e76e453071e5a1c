package bench

import (
	"sync"
	"time"
)

// Resource is the protected resource every critical section writes to, kept in
// process so that safety is checked exactly: it sees every enter, write and
// exit of every holder of every key, in real order.
type Resource struct {
	shards [resourceShards]resourceShard
}

const resourceShards = 64

type resourceShard struct {
	mu   sync.Mutex
	keys map[int]*keyState
}

// keyState is what the resource knows of one key.
type keyState struct {
	inside int
	// epoch numbers entries in order; lastWritten is the newest entry that wrote.
	epoch, lastWritten uint64
	// highestFence is the highest fencing token a write carried.
	highestFence int64
	// abandonedAt is when a crashed holder walked away; zero when none pending.
	abandonedAt time.Time
}

// NewResource returns an empty protected resource.
func NewResource() *Resource {
	r := &Resource{}
	for i := range r.shards {
		r.shards[i].keys = map[int]*keyState{}
	}
	return r
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

// Entry is one holder's stay in a key's critical section.
type Entry struct {
	key   int
	epoch uint64
}

// Enter records a holder entering key's critical section at now. overlap is
// true when another holder is still inside (two owners at once); blocked is how
// long the key sat abandoned by a crashed holder before this entry, or 0.
func (r *Resource) Enter(key int, now time.Time) (e Entry, overlap bool, blocked time.Duration) {
	s, k := r.lock(key)
	defer s.mu.Unlock()
	overlap = k.inside > 0
	k.inside++
	k.epoch++
	if !k.abandonedAt.IsZero() {
		blocked = now.Sub(k.abandonedAt)
		k.abandonedAt = time.Time{}
	}
	return Entry{key: key, epoch: k.epoch}, overlap, blocked
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
func (r *Resource) Write(e Entry, fence int64, expired bool) WriteVerdict {
	s, k := r.lock(e.key)
	defer s.mu.Unlock()
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

// Exit records the holder leaving the critical section.
func (r *Resource) Exit(e Entry) {
	s, k := r.lock(e.key)
	k.inside--
	s.mu.Unlock()
}

// Abandon records a crashed holder leaving the critical section without
// releasing its lease; the next Enter measures how long the key was blocked.
func (r *Resource) Abandon(e Entry, now time.Time) {
	s, k := r.lock(e.key)
	k.inside--
	k.abandonedAt = now
	s.mu.Unlock()
}
