package bench

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// op indexes the per-operation histograms.
type op int

const (
	opAcquire op = iota
	opAcquireFailed
	opTimeToAcquire
	opRelease
	opReleaseFailed
	opRenew
	opRenewFailed
	opHold
	opBlocked
	opOverrun
	opResource
	numOps
)

var opResultNames = [numOps]string{results.OpAcquire, results.OpAcquireFailed, results.OpTimeToAcquire,
	results.OpRelease, results.OpReleaseFailed, results.OpRenew, results.OpRenewFailed, results.OpHold, results.OpBlocked, results.OpOverrun, results.OpResource}

// failedOp is where the failures of an operation go: a fast "connection
// refused" recorded beside the answered attempts would make them look faster.
var failedOp = [numOps]op{opAcquire: opAcquireFailed, opRelease: opReleaseFailed, opRenew: opRenewFailed}

// counters are a shard's event counts: the catalogue's counter figures
// (results.CounterFigures), kept in the result's own Counts so that adding a
// counter to the catalogue needs nothing here, and the failures by kind.
type counters struct {
	results.Counts
	// errs are every operation's failures by kind; acquireErrs the acquire
	// tries' alone, the breakdown of acquire_failed.
	errs, acquireErrs map[string]int64
}

// add folds o into c, counter by counter as the catalogue lists them.
func (c *counters) add(o *counters) {
	c.Counts.Add(&o.Counts)
	c.errs = addKinds(c.errs, o.errs)
	c.acquireErrs = addKinds(c.acquireErrs, o.acquireErrs)
}

// addKinds adds the counts by kind of from into into, made on first use.
func addKinds(into, from map[string]int64) map[string]int64 {
	for k, v := range from {
		if into == nil {
			into = map[string]int64{}
		}
		into[k] += v
	}
	return into
}

// interval is what a worker saw since the last per-second tick: the acquire
// latencies themselves (folded into the run's histogram at each tick, so an
// attempt is recorded once), and the counters' values at the last tick.
type interval struct {
	acquire                               *hdr.Histogram
	acquired, attempts, errors, incidents int64
	// firstAcq and lastAcq are when this second's first and last
	// acquisitions were recorded (Unix ns; 0 for none), so the series can
	// place the gaps between acquisitions (see results.LongestGap).
	firstAcq, lastAcq int64
}

// recorder is one shard of the run's recorder: one histogram per operation
// (made on first use), the counters and the per-second interval, shared by
// the workers that map to it under a mutex. Shards are few (see
// recorderShards), merged only at the end as hdrhistogram advises, so the
// lock is rarely contended and neither memory nor the tick grows with the
// number of workers. Whether an event belongs to the measured window is the
// worker's decision: the recorder records what it is given.
type recorder struct {
	mu    sync.Mutex
	hists [numOps]*hdr.Histogram
	c     counters
	iv    interval
	// slowest is the shard's slowest acquisition so far, which /metrics
	// shows as an exemplar (zero before the first).
	slowest Slowest
}

// Slowest is one acquisition, the slowest seen: how long the worker waited
// for it, which worker and when it got the lock. /metrics attaches it to
// the time-to-acquire histogram as an exemplar, so a dashboard's p99 leads
// to a worker of a run.
type Slowest struct {
	// TimeToAcquire is the wait, retries included.
	TimeToAcquire time.Duration
	// Worker is the worker's index in its generator.
	Worker int
	// At is when it acquired.
	At time.Time
}

func newRecorder() *recorder {
	return &recorder{iv: interval{acquire: results.NewHistogram()}}
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

// hist returns op o's histogram, made on first use: most runs record only a
// few of the operations, and each histogram is ~190 KB.
func (r *recorder) hist(o op) *hdr.Histogram {
	h := r.hists[o]
	if h == nil {
		h = results.NewHistogram()
		r.hists[o] = h
	}
	return h
}

// latency records one operation's duration; a failed one goes to the
// operation's failure histogram. Acquire attempts go through attempt.
func (r *recorder) latency(o op, d time.Duration, failed bool) {
	us := toMicros(d)
	if failed && failedOp[o] != 0 {
		o = failedOp[o]
	}
	r.mu.Lock()
	_ = r.hist(o).RecordValue(us)
	r.mu.Unlock()
}

// attempt records one acquire attempt: its latency and its outcome, under
// one lock, since this is the hottest call of a run. Answered attempts
// (acquired, contended) feed the per-second series; failed ones their own
// histogram.
func (r *recorder) attempt(d time.Duration, out lockimpl.Outcome) {
	us := toMicros(d)
	r.mu.Lock()
	r.c.Contention.Attempts++
	switch out {
	case lockimpl.Failed:
		_ = r.hist(opAcquireFailed).RecordValue(us)
	case lockimpl.Contended:
		r.c.Contention.Contended++
		_ = r.iv.acquire.RecordValue(us)
	default:
		_ = r.iv.acquire.RecordValue(us)
	}
	r.mu.Unlock()
}

// acquired records worker's successful acquisition, made at at, and its
// time to acquire.
func (r *recorder) acquired(worker int, at time.Time, timeToAcquire time.Duration) {
	us := toMicros(timeToAcquire)
	now := at.UnixNano()
	r.mu.Lock()
	_ = r.hist(opTimeToAcquire).RecordValue(us)
	if timeToAcquire > r.slowest.TimeToAcquire {
		r.slowest = Slowest{TimeToAcquire: timeToAcquire, Worker: worker, At: at}
	}
	r.c.Contention.Acquired++
	if r.iv.firstAcq == 0 {
		r.iv.firstAcq = now
	}
	r.iv.lastAcq = max(r.iv.lastAcq, now)
	r.mu.Unlock()
}

// dropped records an open-loop request of the window that never started: its
// time to acquire is at least from its intended start to the window's end.
func (r *recorder) dropped(lowerBound time.Duration) {
	us := toMicros(lowerBound)
	r.mu.Lock()
	_ = r.hist(opTimeToAcquire).RecordValue(us)
	r.c.Counters.Dropped++
	r.mu.Unlock()
}

// count applies f to the counters.
func (r *recorder) count(f func(c *counters)) {
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

// acquireErrorKind counts a failed acquire try by kind, among every
// operation's and among the acquire tries' own.
func (r *recorder) acquireErrorKind(kind string) {
	r.count(func(c *counters) {
		if c.errs == nil {
			c.errs, c.acquireErrs = map[string]int64{}, map[string]int64{}
		} else if c.acquireErrs == nil {
			c.acquireErrs = map[string]int64{}
		}
		c.errs[kind]++
		c.acquireErrs[kind]++
	})
}

// drainInterval hands the tick this worker's last second and starts a new one.
// tickCounts are what a shard recorded since the last tick.
type tickCounts struct {
	acquired, attempts, errors, incidents int64
	// firstAcq and lastAcq are when the first and last acquisitions were
	// recorded (Unix ns, 0 for none).
	firstAcq, lastAcq int64
}

func (r *recorder) drainInterval(into *hdr.Histogram) tickCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	into.Merge(r.iv.acquire)
	r.foldInterval()
	var errs int64
	for _, v := range r.c.errs {
		errs += v
	}
	t := tickCounts{firstAcq: r.iv.firstAcq, lastAcq: r.iv.lastAcq}
	r.iv.firstAcq, r.iv.lastAcq = 0, 0
	acquired, attempts := r.c.Contention.Acquired, r.c.Contention.Attempts
	t.acquired, r.iv.acquired = acquired-r.iv.acquired, acquired
	t.attempts, r.iv.attempts = attempts-r.iv.attempts, attempts
	t.errors, r.iv.errors = errs-r.iv.errors, errs
	inc := r.c.Incidents.Total()
	t.incidents, r.iv.incidents = inc-r.iv.incidents, inc
	return t
}

// foldInterval moves the interval's acquire latencies into the run's
// histogram; the caller holds mu.
func (r *recorder) foldInterval() {
	if r.iv.acquire.TotalCount() == 0 {
		return
	}
	r.hist(opAcquire).Merge(r.iv.acquire)
	r.iv.acquire.Reset()
}
