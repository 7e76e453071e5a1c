package bench

import (
	"math"
	"testing"
)

func TestLogHistogramQuantilesWithinNinePercent(t *testing.T) {
	var h logHistogram
	for v := int64(1); v <= 100_000; v++ {
		h.record(v)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := q * 100_000
		got := float64(h.quantile(q))
		if math.Abs(got-want)/want > 0.13 {
			t.Errorf("quantile(%v) = %v, want %v within a bucket", q, got, want)
		}
	}
	// Values arriving from the middle outward, both ways, land where
	// values arriving in order do.
	var outward logHistogram
	for v := int64(50_000); v >= 1; v-- {
		outward.record(v)
		outward.record(100_001 - v)
	}
	for _, q := range []float64{0.001, 0.5, 0.9, 0.999} {
		if got, want := outward.quantile(q), h.quantile(q); got != want {
			t.Errorf("recorded outward, quantile(%v) = %d, in order %d", q, got, want)
		}
	}
	var empty logHistogram
	if empty.quantile(0.99) != 0 {
		t.Error("an empty histogram has a p99")
	}
	for _, v := range []int64{0, 1, 7, 8, 9, 1 << 40, math.MaxInt64} {
		if b := logBucket(v); b < 0 || b >= logBuckets || (v < 1<<40 && bucketTop(b) < v) {
			t.Errorf("value %d lands in bucket %d topped %d", v, b, bucketTop(b))
		}
	}
}
