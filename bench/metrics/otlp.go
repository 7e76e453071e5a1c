package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// OTLP metric names: an OpenTelemetry collector's Prometheus exporter
// turns them into the names /metrics serves (lockbench.events, a monotonic
// sum, into lockbench_events_total; lockbench.latency in s into
// lockbench_latency_seconds), so one dashboard reads either path.
const (
	otlpEvents  = "lockbench.events"
	otlpErrors  = "lockbench.errors"
	otlpLatency = "lockbench.latency"
	otlpWindow  = "lockbench.window"
	otlpResult  = "lockbench.result"
)

// PushInterval is how often --otlp pushes while a run lasts; the last push
// comes when the run ends, with its final figures.
const PushInterval = 5 * time.Second

// ParseOTLPEndpoint checks --otlp's value: an http or https URL with a host.
// A URL without a path gets OTLP/HTTP's /v1/metrics, as collectors serve it.
func ParseOTLPEndpoint(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("--otlp %q: want an http(s) URL, e.g. http://127.0.0.1:4318", s)
	}
	if u.User != nil {
		// The URL is printed (logs, the failed-push line); a password must not be.
		return "", fmt.Errorf("--otlp: credentials in the URL would be printed; give them as OTEL_EXPORTER_OTLP_HEADERS")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/metrics"
	}
	return u.String(), nil
}

// Pusher pushes a run's figures to an OTLP/HTTP endpoint every
// PushInterval and once more at the end. A push that fails never stops the
// run: Stop says how many failed.
type Pusher struct {
	provider *sdkmetric.MeterProvider
	exp      *countingExporter
	endpoint string
}

// Push starts pushing run's figures to endpoint (as ParseOTLPEndpoint
// returns it).
func Push(endpoint string, run *Run) (*Pusher, error) {
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(endpoint),
		// A refusing endpoint is reported at the end, not retried for a
		// minute at each push (the exporter's default).
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}),
		otlpmetrichttp.WithTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("--otlp %s: %w", endpoint, err)
	}
	ce := &countingExporter{Exporter: exp}
	reader := sdkmetric.NewPeriodicReader(ce, sdkmetric.WithInterval(PushInterval),
		sdkmetric.WithProducer(&producer{run: run, start: time.Now()}))
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "lockbench"))))
	return &Pusher{provider: provider, exp: ce, endpoint: endpoint}, nil
}

// Stop pushes the last figures and stops; the error says how many pushes
// failed, nil when none did.
func (p *Pusher) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.provider.Shutdown(ctx)
	failed, total, last := p.exp.failures()
	switch {
	case failed > 0:
		return fmt.Errorf("otlp: %d of %d pushes to %s failed (last: %w)", failed, total, p.endpoint, last)
	case err != nil:
		return fmt.Errorf("otlp: %s: %w", p.endpoint, err)
	}
	return nil
}

// countingExporter counts failed exports and swallows their errors: the
// reader would otherwise hand each to OpenTelemetry's global handler,
// which logs a line per push; the run reports the count once at its end.
type countingExporter struct {
	sdkmetric.Exporter
	mu            sync.Mutex
	total, failed int
	last          error
}

// Export pushes rm, counting a failure.
func (c *countingExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := c.Exporter.Export(ctx, rm)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	if err != nil {
		c.failed++
		c.last = err
	}
	return nil
}

func (c *countingExporter) failures() (failed, total int, last error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = errors.New("none")
	}
	return c.failed, c.total, c.last
}

// producer turns the run's snapshot into OTLP data points: the same
// figures /metrics serves, latencies as exponential histograms of the
// native histograms' resolution (scale 3).
type producer struct {
	run   *Run
	start time.Time
}

// Produce reads the run now.
func (p *producer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	s, ok := p.run.live.Snapshot()
	if !ok {
		return nil, nil
	}
	now := time.Now()
	base := p.attrs()
	with := func(k, v string) attribute.Set {
		return attribute.NewSet(append(slices.Clone(base), attribute.String(k, v))...)
	}
	counter := func(name, desc, unit, key string, values map[string]int64) metricdata.Metrics {
		sum := metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
		for _, k := range sortedNames(values) {
			sum.DataPoints = append(sum.DataPoints, metricdata.DataPoint[int64]{Attributes: with(key, k), StartTime: p.start, Time: now, Value: values[k]})
		}
		return metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: sum}
	}
	ms := []metricdata.Metrics{
		counter(otlpEvents, "Events of the measured window by catalogue name.", "{event}", "figure", s.Counts),
		counter(otlpErrors, "Failed operations of the measured window by kind.", "{error}", "kind", s.Errors),
	}
	lat := metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality}
	ops := make([]string, 0, len(s.Ops))
	for op := range s.Ops {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for _, op := range ops {
		b := bucketsOf(s.Ops[op])
		dp := metricdata.ExponentialHistogramDataPoint[float64]{Attributes: with("op", op), StartTime: p.start, Time: now,
			Count: b.count, Sum: b.sum, Scale: NativeSchema, ZeroCount: b.zero, ZeroThreshold: zeroThreshold()}
		dp.PositiveBucket = denseBuckets(b.native)
		lat.DataPoints = append(lat.DataPoints, dp)
	}
	ms = append(ms, metricdata.Metrics{Name: otlpLatency, Description: "Latency of each operation in the measured window.", Unit: "s", Data: lat},
		metricdata.Metrics{Name: otlpWindow, Description: "Seconds of the measured window so far.", Unit: "s",
			Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: attribute.NewSet(base...), Time: now, Value: s.Window.Seconds()}}}})
	if r := p.run.result(); r != nil {
		figs := ResultFigures(r)
		g := metricdata.Gauge[float64]{}
		for _, name := range sortedNames(figs) {
			g.DataPoints = append(g.DataPoints, metricdata.DataPoint[float64]{Attributes: with("figure", name), Time: now, Value: figs[name]})
		}
		ms = append(ms, metricdata.Metrics{Name: otlpResult, Description: "Figures of the finished run's stored result by catalogue name.", Data: g})
	}
	return []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: "github.com/lockbench/lockbench/bench/metrics"}, Metrics: ms}}, nil
}

func (p *producer) attrs() []attribute.KeyValue {
	l := p.run.labels
	return []attribute.KeyValue{attribute.String("run_id", l.RunID), attribute.String("generator", l.Generator),
		attribute.String("lock", l.Lock), attribute.String("topology", l.Topology)}
}

// denseBuckets turns schema-3 counts by Prometheus index into OTLP's
// dense buckets: OTLP's bucket i is (base^i, base^(i+1)], Prometheus's
// (base^(i-1), base^i], so OTLP's index is one less.
func denseBuckets(native map[int]int64) metricdata.ExponentialBucket {
	if len(native) == 0 {
		return metricdata.ExponentialBucket{}
	}
	keys := make([]int, 0, len(native))
	for k := range native {
		keys = append(keys, k)
	}
	lo, hi := slices.Min(keys), slices.Max(keys)
	counts := make([]uint64, hi-lo+1)
	for k, n := range native {
		counts[k-lo] = uint64(n)
	}
	return metricdata.ExponentialBucket{Offset: int32(lo - 1), Counts: counts}
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
