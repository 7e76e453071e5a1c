package bench

import (
	"math/bits"

	"github.com/lockbench/lockbench/lockimpl"
)

// workerStats is what one worker alone writes and only the end of the run
// reads: its acquisitions and a compact histogram of its times to acquire,
// for the fairness figures. It is about 1 KB, so ten thousand workers cost
// 10 MB, where a full HDR histogram each would cost ~190 KB a worker.
type workerStats struct {
	acquired int64
	tta      logHistogram
	// abandoned are the leases this worker's crashed holders left.
	abandoned []lockimpl.Lease
}

// logHistogram counts microsecond values in buckets of 1/8 of an octave
// (values below 8 µs exactly) up to 2^33 µs, beyond the hour every
// histogram stops at, so any quantile it reports is within about 9% of the
// true one: enough to tell which worker waited longest.
type logHistogram struct {
	counts [33 * logSubBuckets]uint32
	total  uint64
}

const logSubBuckets = 8

func logBucket(us int64) int {
	if us < logSubBuckets {
		return int(max(us, 0))
	}
	e := bits.Len64(uint64(us)) - 1 // us in [2^e, 2^(e+1))
	m := int(uint64(us)>>(e-3)) & (logSubBuckets - 1)
	return min(e*logSubBuckets+m, len(logHistogram{}.counts)-1)
}

// bucketTop is the largest value bucket i holds.
func bucketTop(i int) int64 {
	if i < logSubBuckets {
		return int64(i)
	}
	e, m := i/logSubBuckets, int64(i%logSubBuckets)
	return (int64(logSubBuckets)+m+1)<<(e-3) - 1
}

func (h *logHistogram) record(us int64) {
	h.counts[logBucket(us)]++
	h.total++
}

// quantile returns the value at quantile q (0..1), 0 when empty.
func (h *logHistogram) quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			return bucketTop(i)
		}
	}
	return bucketTop(len(h.counts) - 1)
}
