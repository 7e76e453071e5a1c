package metrics

import (
	"math"
	"slices"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lockbench/lockbench/bench"
)

// NativeSchema is the resolution of the native histograms: schema 3 splits
// every power of two into 8 buckets, so neighbouring bounds are a factor
// 2^(1/8) ≈ 1.0905 apart (client_golang's NativeHistogramBucketFactor 1.1
// picks the same schema). A quantile read from them lies in the bucket
// that holds the HDR histogram's own quantile, hence within that factor.
const NativeSchema = 3

// zeroThreshold is the native histograms' zero bucket: HDR records whole
// µs, so a value of 0 is under 1 µs, and 2^-20 s (0.95 µs) is both under
// 1 µs and a bucket bound of schema 3.
func zeroThreshold() float64 { return math.Ldexp(1, -20) }

// classicBuckets are the classic histogram's bounds in seconds: 25 µs to
// 10 s, about three a decade, which a lock's latencies fall within.
func classicBuckets() []float64 {
	return prometheus.ExponentialBuckets(25e-6, 2.5, 15)
}

// NativeBucket is the index of the schema-3 bucket holding v seconds
// (v > the zero threshold): bucket i is (2^((i-1)/8), 2^(i/8)].
func NativeBucket(v float64) int {
	frac, exp := math.Frexp(v) // v = frac × 2^exp, frac in [0.5, 1)
	const per = 1 << NativeSchema
	// Bounds of one power of two: 2^(j/8 − 1) for j in 0..7, compared as
	// Prometheus does (upper bounds inclusive).
	j := 0
	for j < per && frac > math.Exp2(float64(j)/per-1) {
		j++
	}
	return j + (exp-1)*per
}

// histogramMetric is one operation's latency as a Prometheus histogram
// carrying both forms: the classic buckets, which every Prometheus reads,
// and the native (sparse, exponential) buckets, which a Prometheus with
// native histograms enabled keeps instead and which merge across
// generators at full resolution. Only the protobuf exposition carries the
// native form; OpenMetrics and protobuf carry the exemplar.
type histogramMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      dto.Histogram
}

// Desc is the metric's description.
func (m *histogramMetric) Desc() *prometheus.Desc { return m.desc }

// Write fills out with the histogram.
func (m *histogramMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Histogram = &m.h
	return nil
}

// buckets are an HDR histogram (µs) in both Prometheus forms, in seconds.
type buckets struct {
	count, zero uint64
	sum         float64
	// classic are cumulative counts at classicBuckets' bounds.
	classic []uint64
	// native are counts by schema-3 bucket index (NativeBucket).
	native map[int]int64
}

func bucketsOf(h *hdr.Histogram) buckets {
	bounds := classicBuckets()
	b := buckets{classic: make([]uint64, len(bounds)), native: map[int]int64{}}
	zt := zeroThreshold()
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		// The bar's highest value, as HDR's own quantiles report it.
		v := float64(bar.To) / 1e6
		n := uint64(bar.Count)
		b.count += n
		b.sum += float64(bar.Count) * float64(bar.From+bar.To) / 2e6
		if i, _ := slices.BinarySearch(bounds, v); i < len(bounds) {
			b.classic[i] += n
		}
		if v <= zt {
			b.zero += n
		} else {
			b.native[NativeBucket(v)] += int64(n)
		}
	}
	for i := 1; i < len(b.classic); i++ {
		b.classic[i] += b.classic[i-1]
	}
	return b
}

// newHistogramMetric converts h (µs) into both forms, with slow as the
// exemplar when it is set.
func newHistogramMetric(desc *prometheus.Desc, labels []*dto.LabelPair, h *hdr.Histogram, slow *exemplar) *histogramMetric {
	bounds := classicBuckets()
	b := bucketsOf(h)
	count, sum, zero, cum, native, zt := b.count, b.sum, b.zero, b.classic, b.native, zeroThreshold()
	schema, threshold := int32(NativeSchema), zt
	m := &histogramMetric{desc: desc, labels: labels, h: dto.Histogram{
		SampleCount: &count, SampleSum: &sum,
		Schema: &schema, ZeroThreshold: &threshold, ZeroCount: &zero,
	}}
	var ex *dto.Exemplar
	if slow != nil {
		ex = slow.proto()
		m.h.Exemplars = []*dto.Exemplar{ex}
	}
	for i, b := range bounds {
		bk := &dto.Bucket{CumulativeCount: &cum[i], UpperBound: &bounds[i]}
		if ex != nil && slow.seconds <= b && (i == 0 || slow.seconds > bounds[i-1]) {
			bk.Exemplar = ex
		}
		m.h.Bucket = append(m.h.Bucket, bk)
	}
	m.h.PositiveSpan, m.h.PositiveDelta = spans(native)
	if len(m.h.PositiveSpan) == 0 && zero == 0 {
		// An empty native histogram still says it is one (a zero-length
		// span), else a scraper would take it for a classic one only.
		off, n := int32(0), uint32(0)
		m.h.PositiveSpan = []*dto.BucketSpan{{Offset: &off, Length: &n}}
	}
	return m
}

// spans encodes sparse bucket counts as native histograms do: runs of
// consecutive buckets (an offset from the previous run's end and a length)
// and each count as a delta from the one before.
func spans(buckets map[int]int64) ([]*dto.BucketSpan, []int64) {
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []*dto.BucketSpan
	var deltas []int64
	var prevKey int
	var prevCount int64
	for i, k := range keys {
		switch {
		case i == 0:
			out = append(out, &dto.BucketSpan{Offset: new(int32(k)), Length: new(uint32(0))})
		case k == prevKey+1:
		default:
			out = append(out, &dto.BucketSpan{Offset: new(int32(k - prevKey - 1)), Length: new(uint32(0))})
		}
		*out[len(out)-1].Length++
		deltas = append(deltas, buckets[k]-prevCount)
		prevKey, prevCount = k, buckets[k]
	}
	return out, deltas
}

// exemplar is the slowest acquisition as OpenMetrics shows it: its time to
// acquire, the run and the worker.
type exemplar struct {
	seconds float64
	runID   string
	worker  int
	at      time.Time
}

func newExemplar(s bench.Slowest, runID string) *exemplar {
	if s.TimeToAcquire <= 0 {
		return nil
	}
	return &exemplar{seconds: s.TimeToAcquire.Seconds(), runID: runID, worker: s.Worker, at: s.At}
}

// maxExemplarRunes is OpenMetrics' limit on an exemplar's label names and
// values together.
const maxExemplarRunes = 128

func (e *exemplar) proto() *dto.Exemplar {
	worker := strconv.Itoa(e.worker)
	labels := []*dto.LabelPair{{Name: new("worker"), Value: &worker}}
	// The run id is on the series already; the exemplar repeats it where
	// it fits, so a trace-less exemplar still names its run on its own.
	if len("worker")+len(worker)+len("run_id")+len([]rune(e.runID)) <= maxExemplarRunes {
		labels = append([]*dto.LabelPair{{Name: new("run_id"), Value: new(e.runID)}}, labels...)
	}
	return &dto.Exemplar{Label: labels, Value: &e.seconds, Timestamp: timestamppb.New(e.at)}
}
