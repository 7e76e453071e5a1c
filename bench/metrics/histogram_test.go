package metrics

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

// TestNativeBucket holds the index to Prometheus's definition: bucket i of
// schema 3 is (2^((i-1)/8), 2^(i/8)], upper bound inclusive.
func TestNativeBucket(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int
	}{
		{1, 0}, {2, 8}, {0.5, -8}, {math.Exp2(1.0 / 8), 1}, {math.Exp2(1.0/8) * 1.0001, 2}, {1.0001, 1}, {0.9999, 0},
		{1e-3, int(math.Ceil(math.Log2(1e-3) * 8))}, {3.7e-5, int(math.Ceil(math.Log2(3.7e-5) * 8))},
	} {
		if got := NativeBucket(c.v); got != c.want {
			t.Errorf("NativeBucket(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}

// decode undoes spans: counts by bucket index.
func decode(h *dto.Histogram) map[int]int64 {
	out := map[int]int64{}
	idx, k, count := 0, 0, int64(0)
	for i, sp := range h.GetPositiveSpan() {
		if i == 0 {
			idx = int(sp.GetOffset())
		} else {
			idx += int(sp.GetOffset())
		}
		for range sp.GetLength() {
			count += h.GetPositiveDelta()[k]
			out[idx] = count
			idx++
			k++
		}
	}
	return out
}

// TestHistogramBothForms: one HDR histogram becomes classic buckets and a
// native histogram that count the same values, and the native one's
// buckets hold each value where Prometheus would put it.
func TestHistogramBothForms(t *testing.T) {
	h := results.NewHistogram()
	// Under 2048 µs HDR keeps every µs; 300 ms is far from a bucket bound.
	values := []int64{0, 0, 1, 40, 40, 41, 900, 2000, 2000, 300_000}
	for _, v := range values {
		_ = h.RecordValue(v)
	}
	desc := prometheus.NewDesc("x_seconds", "x", nil, nil)
	slow := &exemplar{seconds: 0.3, runID: "r1", worker: 3, at: time.Unix(1_700_000_000, 0)}
	m := newHistogramMetric(desc, nil, h, slow)
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	hg := out.GetHistogram()
	if hg.GetSampleCount() != uint64(len(values)) || hg.GetZeroCount() != 2 || hg.GetSchema() != NativeSchema {
		t.Fatalf("count %d zero %d schema %d", hg.GetSampleCount(), hg.GetZeroCount(), hg.GetSchema())
	}
	want := map[int]int64{}
	for _, v := range values[2:] {
		want[NativeBucket(float64(v)/1e6)]++
	}
	got := decode(hg)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("native bucket %d: %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("native buckets %v, want %v", got, want)
	}
	last := hg.GetBucket()[len(hg.GetBucket())-1]
	if last.GetCumulativeCount() != uint64(len(values)) {
		t.Errorf("classic +Inf-1 bucket %d, want %d", last.GetCumulativeCount(), len(values))
	}
	var withExemplar int
	for _, b := range hg.GetBucket() {
		if e := b.GetExemplar(); e != nil {
			withExemplar++
			if b.GetUpperBound() < 0.3 {
				t.Errorf("exemplar 0.3 s on bucket le=%v", b.GetUpperBound())
			}
		}
	}
	if withExemplar != 1 || len(hg.GetExemplars()) != 1 {
		t.Errorf("%d classic and %d native exemplars, want one each", withExemplar, len(hg.GetExemplars()))
	}
}

// TestSpans covers gaps, a lone bucket and negative indexes.
func TestSpans(t *testing.T) {
	for _, in := range []map[int]int64{{}, {5: 1}, {-3: 2, -2: 5, 0: 1, 7: 4, 8: 4}} {
		sp, d := spans(in)
		got := decode(&dto.Histogram{PositiveSpan: sp, PositiveDelta: d})
		if len(got) != len(in) {
			t.Errorf("%v: decoded %v", in, got)
		}
		for k, v := range in {
			if got[k] != v {
				t.Errorf("%v: decoded %v", in, got)
			}
		}
	}
}

// TestExpositionFormats scrapes a run's /metrics as Prometheus does: the
// protobuf page carries the native histogram, OpenMetrics the exemplar
// naming run and worker, plain text the classic buckets and the window.
func TestExpositionFormats(t *testing.T) {
	live := bench.NewLive()
	runLive(t, live)
	run := NewRun(live, Labels{RunID: "r1", Generator: "0", Lock: "map", Topology: "single"})
	reg, err := run.Registry()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	defer srv.Close()
	get := func(accept string) []byte {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return b.Bytes()
	}
	text := string(get("text/plain"))
	for _, want := range []string{`lockbench_latency_seconds_bucket{generator="0",lock="map",op="time_to_acquire"`, "lockbench_window_seconds{"} {
		if !strings.Contains(text, want) {
			t.Errorf("text page lacks %s", want)
		}
	}
	om := string(get("application/openmetrics-text; version=1.0.0"))
	if !strings.Contains(om, `# {run_id="r1",worker="`) {
		t.Errorf("OpenMetrics page has no exemplar naming run and worker:\n%s", grepLines(om, "time_to_acquire"))
	}
	pb := get(`application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited`)
	dec := expfmt.NewDecoder(bytes.NewReader(pb), expfmt.NewFormat(expfmt.TypeProtoDelim))
	var native bool
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			break
		}
		if mf.GetName() != LatencyMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetHistogram().GetPositiveSpan()) > 0 && m.GetHistogram().GetSchema() == NativeSchema {
				native = true
			}
		}
	}
	if !native {
		t.Error("the protobuf page has no native histogram")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
