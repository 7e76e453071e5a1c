// Package metrics serves a running benchmark's figures as Prometheus
// metrics (--metrics-addr), so a Prometheus or Grafana that already scrapes
// a cluster sees a run live: one generator or many, told apart by labels.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockbench/lockbench/bench"
)

// Labels name the run every metric belongs to.
type Labels struct {
	RunID, Generator, Lock, Topology string
}

func (l Labels) names() []string { return []string{"run_id", "generator", "lock", "topology"} }
func (l Labels) values() []string {
	return []string{l.RunID, l.Generator, l.Lock, l.Topology}
}

// latencyBuckets are the histogram bounds in seconds: 25 µs to 10 s, about
// three a decade, which a lock's latencies fall within.
func latencyBuckets() []float64 {
	return prometheus.ExponentialBuckets(25e-6, 2.5, 15)
}

// collector reads a Live snapshot at each scrape.
type collector struct {
	live   *bench.Live
	labels Labels
	counts *prometheus.Desc
	errs   *prometheus.Desc
	lat    *prometheus.Desc
}

func newCollector(live *bench.Live, l Labels) *collector {
	return &collector{live: live, labels: l,
		counts: prometheus.NewDesc("lockbench_events_total", "Events of the measured window by catalogue name (contention.acquired, incidents.overlaps, …).",
			append(l.names(), "figure"), nil),
		errs: prometheus.NewDesc("lockbench_errors_total", "Failed operations of the measured window by kind.", append(l.names(), "kind"), nil),
		lat:  prometheus.NewDesc("lockbench_latency_seconds", "Latency of each operation in the measured window.", append(l.names(), "op"), nil),
	}
}

// Describe sends the metric descriptions.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.counts
	ch <- c.errs
	ch <- c.lat
}

// Collect sends the run's figures so far: every counter of the
// catalogue by its name (the live snapshot lists them all), errors by kind
// and each operation's latencies.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.live.Snapshot()
	if !ok {
		return
	}
	lv := c.labels.values()
	for name, v := range s.Counts {
		ch <- prometheus.MustNewConstMetric(c.counts, prometheus.CounterValue, float64(v), append(lv, name)...)
	}
	for kind, v := range s.Errors {
		ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(v), append(lv, kind)...)
	}
	for op, h := range s.Ops {
		count, sum, buckets := histogramOf(h)
		ch <- prometheus.MustNewConstHistogram(c.lat, count, sum, buckets, append(lv, op)...)
	}
}

// histogramOf turns an HDR histogram of µs into Prometheus's cumulative
// buckets in seconds.
func histogramOf(h *hdr.Histogram) (count uint64, sum float64, buckets map[float64]uint64) {
	bounds := latencyBuckets()
	buckets = make(map[float64]uint64, len(bounds))
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		v := float64(bar.To) / 1e6
		count += uint64(bar.Count)
		sum += float64(bar.Count) * float64(bar.From+bar.To) / 2e6
		for _, b := range bounds {
			if v <= b {
				buckets[b] += uint64(bar.Count)
			}
		}
	}
	return count, sum, buckets
}

// Serve serves /metrics on addr until the returned stop is called. An
// address that cannot be listened on is an error before the run starts.
func Serve(addr string, live *bench.Live, l Labels) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(newCollector(live, l)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// Serve returns ErrServerClosed at stop; any other end leaves the run
	// without its endpoint, which a scrape shows.
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
