package bench

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// Live lets a reader (the Prometheus endpoint of --metrics-addr) see a run's
// figures while it runs. Reading costs the workers nothing: a snapshot takes
// each recorder shard's lock once, as the per-second tick does.
type Live struct {
	mu  sync.Mutex
	run *run
}

// NewLive returns a Live to pass in Options; it shows nothing until the run
// starts.
func NewLive() *Live { return &Live{} }

func (l *Live) attach(r *run) {
	l.mu.Lock()
	l.run = r
	l.mu.Unlock()
}

// LiveSnapshot is what a run recorded in its window so far.
type LiveSnapshot struct {
	// Counts are by catalogue name (contention.attempts, incidents.overlaps…).
	Counts map[string]int64
	// Errors are failures by kind.
	Errors map[string]int64
	// Ops are each operation's latencies so far, in µs.
	Ops map[string]*hdr.Histogram
}

// Snapshot reads the run's figures so far; ok is false before it started.
func (l *Live) Snapshot() (s LiveSnapshot, ok bool) {
	l.mu.Lock()
	r := l.run
	l.mu.Unlock()
	if r == nil {
		return LiveSnapshot{}, false
	}
	var c counters
	ops := map[string]*hdr.Histogram{}
	for _, rec := range r.recs {
		rec.mu.Lock()
		c.add(&rec.c)
		for i, h := range rec.hists {
			if h != nil {
				into(ops, opResultNames[i]).Merge(h)
			}
		}
		if rec.iv.acquire.TotalCount() > 0 {
			into(ops, results.OpAcquire).Merge(rec.iv.acquire)
		}
		rec.mu.Unlock()
	}
	s = LiveSnapshot{Ops: ops, Errors: c.errs, Counts: map[string]int64{
		"contention.attempts": c.attempts, "contention.acquired": c.acquired, "contention.contended": c.contended,
		"contention.gave_up": c.gaveUp, "counters.released": c.released, "counters.renewed": c.renewed,
		"counters.crashed": c.crashed, "counters.served": c.served, "counters.dropped": c.dropped, "counters.late": c.late,
		"incidents.expired_during_work": c.expired, "incidents.release_lost": c.releaseLost, "incidents.renew_lost": c.renewLost,
		"incidents.work_aborted": c.aborted, "incidents.overlaps": c.overlaps, "incidents.double_grants": c.doubleGrants, "incidents.overruns": c.overruns,
		"incidents.fencing_rejected":      c.fencingRejected,
		"incidents.stale_writes_accepted": c.staleAccepted,
	}}
	return s, true
}

func into(ops map[string]*hdr.Histogram, op string) *hdr.Histogram {
	h := ops[op]
	if h == nil {
		h = results.NewHistogram()
		ops[op] = h
	}
	return h
}
