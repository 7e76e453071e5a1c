package metrics

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// mapLocker is an in-memory lease lock: enough for a run to count events.
type mapLocker struct {
	mu   sync.Mutex
	held map[string]string
}

func (m *mapLocker) Info() lockimpl.Info { return lockimpl.Info{Name: "map", Nodes: 1} }

func (m *mapLocker) Acquire(_ context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.held[key]; ok {
		return lockimpl.Lease{}, lockimpl.Contended, nil
	}
	l := lockimpl.Lease{Key: key, Token: lockimpl.NewToken(), Start: time.Now(), Validity: ttl}
	m.held[key] = l.Token
	return l, lockimpl.OK, nil
}

func (m *mapLocker) Renew(_ context.Context, l *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
	l.Start, l.Validity = time.Now(), ttl
	return lockimpl.OK, nil
}

func (m *mapLocker) Release(_ context.Context, l lockimpl.Lease) (lockimpl.Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[l.Key] != l.Token {
		return lockimpl.Lost, nil
	}
	delete(m.held, l.Key)
	return lockimpl.OK, nil
}

// runLive records a short closed-loop run on the in-memory lock into live
// and returns its measurement.
func runLive(t *testing.T, live *bench.Live) *bench.Measurement {
	t.Helper()
	keys, err := workloads.ParseKeys("uniform:4")
	if err != nil {
		t.Fatal(err)
	}
	m, err := bench.Run(context.Background(), &mapLocker{held: map[string]string{}}, workloads.Workload{Keys: keys, TTL: time.Second},
		bench.Options{Concurrency: 4, Duration: 200 * time.Millisecond, Live: live})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func catalogueCounterNames() []string {
	var names []string
	for _, f := range results.CounterFigures() {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

// TestLiveAndPrometheusNameEveryCatalogueCounter holds the live snapshot's
// counts and lockbench_events_total's figure labels to the catalogue's
// counter figures, name for name, for a closed and an open-loop run: a
// counter added to the catalogue reaches /metrics with nothing else to edit.
func TestLiveAndPrometheusNameEveryCatalogueCounter(t *testing.T) {
	want := catalogueCounterNames()
	if len(want) < 20 {
		t.Fatalf("catalogue lists %d counters: %v", len(want), want)
	}
	keys, err := workloads.ParseKeys("uniform:4")
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []float64{0, 200} {
		wl := workloads.Workload{Keys: keys, TTL: time.Second, Rate: workloads.ConstantRate(rate)}
		live := bench.NewLive()
		m, err := bench.Run(context.Background(), &mapLocker{held: map[string]string{}}, wl,
			bench.Options{Concurrency: 4, Duration: 300 * time.Millisecond, Live: live})
		if err != nil {
			t.Fatal(err)
		}
		snap, ok := live.Snapshot()
		if !ok {
			t.Fatal("no snapshot after the run")
		}
		var liveNames []string
		for name := range snap.Counts {
			liveNames = append(liveNames, name)
		}
		slices.Sort(liveNames)
		if !slices.Equal(liveNames, want) {
			t.Errorf("rate %v: live counts %v\nwant the catalogue's %v", rate, liveNames, want)
		}

		reg := prometheus.NewRegistry()
		reg.MustRegister(newCollector(NewRun(live, Labels{RunID: "r", Generator: "0", Lock: "map", Topology: "single"})))
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var promNames []string
		promValue := map[string]float64{}
		for _, fam := range families {
			if fam.GetName() != "lockbench_events_total" {
				continue
			}
			for _, metric := range fam.GetMetric() {
				for _, l := range metric.GetLabel() {
					if l.GetName() == "figure" {
						promNames = append(promNames, l.GetValue())
						promValue[l.GetValue()] = metric.GetCounter().GetValue()
					}
				}
			}
		}
		slices.Sort(promNames)
		if !slices.Equal(promNames, want) {
			t.Errorf("rate %v: /metrics figures %v\nwant the catalogue's %v", rate, promNames, want)
		}

		// The figures agree with the result the run stores.
		var r results.Result
		if err := m.Fill(&r); err != nil {
			t.Fatal(err)
		}
		for _, f := range results.CounterFigures() {
			v, err := f.Value(&r)
			if err != nil {
				t.Fatal(err)
			}
			if promValue[f.Name] != v {
				t.Errorf("rate %v: /metrics %s = %v, the stored result %v", rate, f.Name, promValue[f.Name], v)
			}
		}
		if r.Contention.Acquired == 0 {
			t.Errorf("rate %v: nothing acquired; the test proves nothing", rate)
		}
		if rate > 0 && r.Counters.Scheduled == 0 {
			t.Errorf("open loop scheduled nothing")
		}
	}
}
