package bench

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Measurement is what one Run recorded in its window, merged over workers.
type Measurement struct {
	// WindowStart is when the measured window began (after the warm-up).
	WindowStart time.Time
	// Elapsed is the window's wall length.
	Elapsed time.Duration
	// Partial is true when the run was interrupted.
	Partial bool
	// BeforeWindow is true when the run was interrupted during its warm-up:
	// nothing was measured.
	BeforeWindow bool
	// StartOffset is how late this process began after Options.StartAt.
	StartOffset time.Duration
	// Abandoned are the leases crashed holders left, still held when the run
	// ended unless they expired: a run sharing its keys with other
	// generators releases exactly these rather than every key of the run.
	Abandoned []lockimpl.Lease
	// Scheduled is the open-loop requests intended inside the window.
	Scheduled int64
	// Series has one point per second.
	Series []results.SeriesPoint

	hists    [numOps]*hdr.Histogram
	counters counters
	// perWorker is each worker's acquisitions; worstP99US the highest of
	// the workers' time-to-acquire p99s.
	perWorker  []int64
	worstP99US float64
}

func (r *run) measurement(windowStart time.Time, elapsed time.Duration, partial bool) *Measurement {
	m := &Measurement{WindowStart: windowStart, Elapsed: elapsed, Partial: partial, Series: r.series.points,
		BeforeWindow: partial && elapsed == 0}
	for i := range m.hists {
		m.hists[i] = results.NewHistogram()
	}
	return m
}

// merge folds the recorder shards and every worker's own figures into m;
// called once all workers stopped.
func (m *Measurement) merge(recs []*recorder, stats []workerStats) {
	for _, rec := range recs {
		rec.mu.Lock()
		rec.foldInterval()
		for i, h := range rec.hists {
			if h != nil {
				m.hists[i].Merge(h)
			}
		}
		m.counters.add(&rec.c)
		rec.mu.Unlock()
	}
	m.perWorker = make([]int64, len(stats))
	for i := range stats {
		m.Abandoned = append(m.Abandoned, stats[i].abandoned...)
		m.perWorker[i] = stats[i].acquired
		m.worstP99US = max(m.worstP99US, float64(stats[i].tta.quantile(0.99)))
	}
}

// Fill writes the measurement into a result: window, ops, throughput,
// contention, counters, incidents, errors and series.
func (m *Measurement) Fill(r *results.Result) error {
	c := &m.counters
	r.StartedAt = m.WindowStart.UTC()
	r.DurationS = m.Elapsed.Seconds()
	r.Partial = m.Partial
	r.Ops = map[string]results.OpSummary{}
	for i, h := range m.hists {
		// An operation's errors are its failures: those of acquire are in
		// acquire_failed, and every row of acquire_failed is one.
		var failures int64
		switch f := failedOp[i]; {
		case f != 0:
			failures = m.hists[f].TotalCount()
		case results.IsFailedOp(opResultNames[i]):
			failures = h.TotalCount()
		}
		s, err := results.Summarize(h, failures)
		if err != nil {
			return fmt.Errorf("summarize %s: %w", opResultNames[i], err)
		}
		r.Ops[opResultNames[i]] = s
	}
	secs := m.Elapsed.Seconds()
	if secs > 0 {
		r.Throughput = results.Throughput{AcquiredPerS: float64(c.Contention.Acquired) / secs, AttemptsPerS: float64(c.Contention.Attempts) / secs}
	}
	// Every counter of the catalogue, as recorded: nothing here lists them.
	r.Counts = c.Counts
	r.Counters.Scheduled = m.Scheduled
	r.Contention = r.Contention.WithRatios()
	r.Errors = map[string]int64{}
	for k, v := range c.errs {
		r.Errors[k] = v
	}
	r.AcquireErrors = map[string]int64{}
	for k, v := range c.acquireErrs {
		r.AcquireErrors[k] = v
	}
	r.Series = m.Series
	r.Fairness = results.NewFairness(m.perWorker, m.worstP99US)
	return nil
}
