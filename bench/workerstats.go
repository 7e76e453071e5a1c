package bench

import (
	"math/bits"

	"github.com/lockbench/lockbench/lockimpl"
)

// workerStats is what one worker alone writes and only the end of the run
// reads: its acquisitions and a compact histogram of its times to acquire,
// for the fairness figures. Its histogram keeps only the buckets between
// the worker's lowest and highest times (a few hundred bytes), where a full
// HDR histogram each would cost ~190 KB a worker.
type workerStats struct {
	acquired int64
	tta      logHistogram
	// abandoned are the leases this worker's crashed holders left.
	abandoned []lockimpl.Lease
}

// logHistogram counts microsecond values in buckets of 1/8 of an octave
// (values below 8 µs exactly) up to 2^33 µs, beyond the hour every
// histogram stops at, so any quantile it reports is within about 9% of the
// true one: enough to tell which worker waited longest. Only the buckets
// from the lowest to the highest value recorded are kept (counts[i] is
// bucket lo+i): a worker's times span a few octaves, and a hundred thousand
// workers each holding all 264 buckets would cost 100 MB.
type logHistogram struct {
	counts []uint32
	lo     int
	total  uint64
}

const logSubBuckets = 8

// logBuckets is how many buckets the histogram's values fall in.
const logBuckets = 33 * logSubBuckets

// logGrowth is how many buckets the kept span grows by beyond what a new
// value needs, so a span that creeps outward is copied seldom.
const logGrowth = 8

func logBucket(us int64) int {
	if us < logSubBuckets {
		return int(max(us, 0))
	}
	e := bits.Len64(uint64(us)) - 1 // us in [2^e, 2^(e+1))
	m := int(uint64(us)>>(e-3)) & (logSubBuckets - 1)
	return min(e*logSubBuckets+m, logBuckets-1)
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
	b := logBucket(us)
	if b < h.lo || b >= h.lo+len(h.counts) {
		h.span(b)
	}
	h.counts[b-h.lo]++
	h.total++
}

// span widens the kept buckets to take bucket b, with some room beyond it
// in the direction it grew.
func (h *logHistogram) span(b int) {
	if h.counts == nil {
		h.lo, h.counts = b, make([]uint32, 1, 1+logGrowth)
		return
	}
	lo, hi := h.lo, h.lo+len(h.counts) // hi is past the last kept bucket
	if b < lo {
		lo = max(0, b-logGrowth)
	} else {
		hi = min(logBuckets, b+1+logGrowth)
	}
	counts := make([]uint32, hi-lo)
	copy(counts[h.lo-lo:], h.counts)
	h.lo, h.counts = lo, counts
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
			return bucketTop(h.lo + i)
		}
	}
	return bucketTop(h.lo + len(h.counts) - 1)
}
