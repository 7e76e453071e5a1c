// Package metrics serves a running benchmark's figures as Prometheus
// metrics (--metrics-addr) and pushes them over OTLP (--otlp), so a
// Prometheus, Grafana or OpenTelemetry collector that a team already runs
// sees a run live: one generator or many, told apart by labels.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

// Labels name the run every metric belongs to.
type Labels struct {
	RunID, Generator, Lock, Topology string
}

func (l Labels) names() []string { return []string{"run_id", "generator", "lock", "topology"} }
func (l Labels) values() []string {
	return []string{l.RunID, l.Generator, l.Lock, l.Topology}
}

// Run is one run's figures as metrics: its live snapshot while it runs and,
// once Finish has been called, also the stored result's figures (server
// cost, fairness… which are only known at the end).
type Run struct {
	live   *bench.Live
	labels Labels
	mu     sync.Mutex
	final  *results.Result
}

// NewRun reads live, whose run the labels name.
func NewRun(live *bench.Live, l Labels) *Run { return &Run{live: live, labels: l} }

// Finish adds the stored result's figures to what the run exports.
func (r *Run) Finish(res *results.Result) {
	r.mu.Lock()
	r.final = res
	r.mu.Unlock()
}

// result is the finished run's result, nil while it runs.
func (r *Run) result() *results.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.final
}

// ResultFigures are the catalogue's figures a finished result measured, by
// name, counters left out (lockbench_events_total has them): what a
// dashboard's stat panels and an OTLP push show of server cost, fairness
// and the percentiles HDR computed exactly. A figure the run did not
// measure is absent, never 0.
func ResultFigures(r *results.Result) map[string]float64 {
	out := map[string]float64{}
	for _, f := range results.FiguresFor([]*results.Result{r}) {
		if f.IsCounter() {
			continue
		}
		if v, err := f.Value(r); err == nil {
			out[f.Name] = v
		}
	}
	return out
}

// Metric names, as Prometheus and OTLP receive them.
const (
	EventsMetric  = "lockbench_events_total"
	ErrorsMetric  = "lockbench_errors_total"
	LatencyMetric = "lockbench_latency_seconds"
	WindowMetric  = "lockbench_window_seconds"
	ResultMetric  = "lockbench_result"
)

// collector reads a Live snapshot at each scrape.
type collector struct {
	run    *Run
	counts *prometheus.Desc
	errs   *prometheus.Desc
	lat    *prometheus.Desc
	window *prometheus.Desc
	result *prometheus.Desc
}

func newCollector(run *Run) *collector {
	l := run.labels
	return &collector{run: run,
		counts: prometheus.NewDesc(EventsMetric, "Events of the measured window by catalogue name (contention.acquired, incidents.overlaps, …).",
			append(l.names(), "figure"), nil),
		errs: prometheus.NewDesc(ErrorsMetric, "Failed operations of the measured window by kind.", append(l.names(), "kind"), nil),
		lat:  prometheus.NewDesc(LatencyMetric, "Latency of each operation in the measured window.", append(l.names(), "op"), nil),
		window: prometheus.NewDesc(WindowMetric, "Seconds of the measured window so far (0 in the warm-up, its length once closed): events over it are the stored result's rates.",
			l.names(), nil),
		result: prometheus.NewDesc(ResultMetric, "Figures of the finished run's stored result by catalogue name (servers.cpu_us_per_acquire, time_to_acquire.p99, …), in the catalogue's units; absent while the run lasts and where not measured.",
			append(l.names(), "figure"), nil),
	}
}

// Describe sends the metric descriptions.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.counts, c.errs, c.lat, c.window, c.result} {
		ch <- d
	}
}

// Collect sends the run's figures so far: every counter of the
// catalogue by its name (the live snapshot lists them all), errors by kind,
// each operation's latencies, the window so far, and once the run has
// finished its result's other figures.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.run.live.Snapshot()
	if !ok {
		return
	}
	lv := c.run.labels.values()
	for name, v := range s.Counts {
		ch <- prometheus.MustNewConstMetric(c.counts, prometheus.CounterValue, float64(v), append(lv, name)...)
	}
	for kind, v := range s.Errors {
		ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(v), append(lv, kind)...)
	}
	slow := newExemplar(s.Slowest, c.run.labels.RunID)
	for op, h := range s.Ops {
		var ex *exemplar
		if op == results.OpTimeToAcquire {
			ex = slow
		}
		ch <- newHistogramMetric(c.lat, prometheus.MakeLabelPairs(c.lat, append(lv, op)), h, ex)
	}
	ch <- prometheus.MustNewConstMetric(c.window, prometheus.GaugeValue, s.Window.Seconds(), lv...)
	if r := c.run.result(); r != nil {
		for name, v := range ResultFigures(r) {
			ch <- prometheus.MustNewConstMetric(c.result, prometheus.GaugeValue, v, append(lv, name)...)
		}
	}
}

// Registry is a registry holding the run's metrics, as /metrics serves it.
func (r *Run) Registry() (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(newCollector(r)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return reg, nil
}

// Serve serves run's /metrics on addr until the returned stop is called. An
// address that cannot be listened on is an error before the run starts.
// The page is in the format the scraper asks for: protobuf (with native
// histograms and exemplars), OpenMetrics (exemplars) or plain text.
func Serve(addr string, run *Run) (stop func(), err error) {
	reg, err := run.Registry()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
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
