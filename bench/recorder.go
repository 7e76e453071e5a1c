package bench

import (
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// op indexes the per-operation histograms.
type op int

const (
	opAcquire op = iota
	opTimeToAcquire
	opRelease
	opRenew
	opHold
	opBlocked
	numOps
)

var opResultNames = [numOps]string{results.OpAcquire, results.OpTimeToAcquire, results.OpRelease, results.OpRenew, results.OpHold, results.OpBlocked}

// counters are a worker's event counts; the recorder owns them.
type counters struct {
	attempts, acquired, contended, gaveUp     int64
	released, releaseLost, renewed, renewLost int64
	expired, aborted, crashed, paused, writes int64
	overlaps, fencingRejected, staleAccepted  int64
	late, unreplicated                        int64
	opErrors                                  [numOps]int64
	errs                                      map[string]int64
}

func (c *counters) incidents() int64 {
	return c.expired + c.releaseLost + c.renewLost + c.aborted + c.overlaps + c.fencingRejected + c.staleAccepted
}

func (c *counters) add(o *counters) {
	c.attempts += o.attempts
	c.acquired += o.acquired
	c.contended += o.contended
	c.gaveUp += o.gaveUp
	c.released += o.released
	c.releaseLost += o.releaseLost
	c.renewed += o.renewed
	c.renewLost += o.renewLost
	c.expired += o.expired
	c.aborted += o.aborted
	c.crashed += o.crashed
	c.paused += o.paused
	c.writes += o.writes
	c.overlaps += o.overlaps
	c.fencingRejected += o.fencingRejected
	c.staleAccepted += o.staleAccepted
	c.late += o.late
	c.unreplicated += o.unreplicated
	for i := range c.opErrors {
		c.opErrors[i] += o.opErrors[i]
	}
	for k, v := range o.errs {
		if c.errs == nil {
			c.errs = map[string]int64{}
		}
		c.errs[k] += v
	}
}

// interval is what a worker saw since the last per-second tick: the acquire
// latencies themselves (folded into the run's histogram at each tick, so an
// attempt is recorded once), and the counters' values at the last tick.
type interval struct {
	acquire                               *hdr.Histogram
	acquired, attempts, errors, incidents int64
}

// recorder is one worker's recorder: one histogram per operation, merged with
// the others only at the end (hdrhistogram's advice), so workers never share a
// hot cache line. The mutex is uncontended but for the once-a-second tick.
type recorder struct {
	on    *atomic.Bool
	mu    sync.Mutex
	hists [numOps]*hdr.Histogram
	c     counters
	iv    interval
}

func newRecorder(on *atomic.Bool) *recorder {
	r := &recorder{on: on, iv: interval{acquire: results.NewHistogram()}}
	for i := range r.hists {
		r.hists[i] = results.NewHistogram()
	}
	return r
}

func toMicros(d time.Duration) int64 {
	us := d.Microseconds()
	if us > results.HistMaxUS {
		return results.HistMaxUS
	}
	if us < 0 {
		return 0
	}
	return us
}

// latency records one operation's duration; failed operations count as errors
// too. Acquire attempts go through attempt, which also feeds the series.
func (r *recorder) latency(o op, d time.Duration, failed bool) {
	if !r.on.Load() {
		return
	}
	us := toMicros(d)
	r.mu.Lock()
	_ = r.hists[o].RecordValue(us)
	if failed {
		r.c.opErrors[o]++
	}
	r.mu.Unlock()
}

// attempt records one acquire attempt: its latency and its outcome, under
// one lock, since this is the hottest call of a run.
func (r *recorder) attempt(d time.Duration, out lockimpl.Outcome) {
	if !r.on.Load() {
		return
	}
	us := toMicros(d)
	r.mu.Lock()
	_ = r.iv.acquire.RecordValue(us)
	r.c.attempts++
	switch out {
	case lockimpl.Contended:
		r.c.contended++
	case lockimpl.Failed:
		r.c.opErrors[opAcquire]++
	}
	r.mu.Unlock()
}

// acquired records a successful acquisition and its time to acquire.
func (r *recorder) acquired(timeToAcquire time.Duration) {
	if !r.on.Load() {
		return
	}
	us := toMicros(timeToAcquire)
	r.mu.Lock()
	_ = r.hists[opTimeToAcquire].RecordValue(us)
	r.c.acquired++
	r.mu.Unlock()
}

// count applies f to the counters while recording is on.
func (r *recorder) count(f func(c *counters)) {
	if !r.on.Load() {
		return
	}
	r.mu.Lock()
	f(&r.c)
	r.mu.Unlock()
}

// errorKind counts a failure by kind.
func (r *recorder) errorKind(kind string) {
	r.count(func(c *counters) {
		if c.errs == nil {
			c.errs = map[string]int64{}
		}
		c.errs[kind]++
	})
}

// drainInterval hands the tick this worker's last second and starts a new one.
func (r *recorder) drainInterval(into *hdr.Histogram) (acquired, attempts, errors, incidents int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	into.Merge(r.iv.acquire)
	r.foldInterval()
	var errs int64
	for _, v := range r.c.errs {
		errs += v
	}
	acquired, r.iv.acquired = r.c.acquired-r.iv.acquired, r.c.acquired
	attempts, r.iv.attempts = r.c.attempts-r.iv.attempts, r.c.attempts
	errors, r.iv.errors = errs-r.iv.errors, errs
	inc := r.c.incidents()
	incidents, r.iv.incidents = inc-r.iv.incidents, inc
	return acquired, attempts, errors, incidents
}

// foldInterval moves the interval's acquire latencies into the run's
// histogram; the caller holds mu.
func (r *recorder) foldInterval() {
	r.hists[opAcquire].Merge(r.iv.acquire)
	r.iv.acquire.Reset()
}
