package bench

import (
	"sync/atomic"
	"time"
)

// Exposure is what a fault could break at the instant it fired: the holders
// inside their critical sections and the leases still valid. A fault that
// fires with neither could not have shown a double grant, whatever the lock.
type Exposure struct {
	// Inside counts holders in their critical sections.
	Inside int
	// ValidLeases counts leases held whose validity had not run out.
	ValidLeases int
	// Keys counts the distinct keys held by those inside.
	Keys int
}

// holding is one worker's current lease, as the exposure reading sees it:
// written only by its worker, read by Exposure at a fault. Zero when the
// worker holds nothing.
type holding struct {
	// validUntil is the lease's validity end in unix ns; 0 for none.
	validUntil atomic.Int64
	// key is the key's index plus one while the worker is inside; 0 outside.
	key atomic.Int64
}

// hold marks the worker inside key with a lease valid until v.
func (h *holding) hold(key int, v time.Time) {
	h.validUntil.Store(v.UnixNano())
	h.key.Store(int64(key) + 1)
}

// renewed moves the held lease's validity end.
func (h *holding) renewed(v time.Time) { h.validUntil.Store(v.UnixNano()) }

// left marks the worker out of its critical section; its lease stays held
// until released.
func (h *holding) left() { h.key.Store(0) }

// released marks the lease given back (or walked away from).
func (h *holding) released() { h.validUntil.Store(0) }

// exposure reads every worker's holding at now.
func exposure(hs []holding, now time.Time) Exposure {
	var e Exposure
	keys := map[int64]bool{}
	for i := range hs {
		if k := hs[i].key.Load(); k != 0 {
			e.Inside++
			keys[k] = true
		}
		if v := hs[i].validUntil.Load(); v != 0 && now.UnixNano() < v {
			e.ValidLeases++
		}
	}
	e.Keys = len(keys)
	return e
}

// Exposure reads the run's exposure now; ok is false before the run started.
func (l *Live) Exposure() (e Exposure, ok bool) {
	r := l.current()
	if r == nil {
		return Exposure{}, false
	}
	return exposure(r.holdings, time.Now()), true
}
