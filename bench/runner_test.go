package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// memLocker is an in-memory lease lock with real expiry, so runner logic can
// be tested (and benchmarked) without a server.
type memLocker struct {
	mu     sync.Mutex
	keys   map[string]memLease
	fence  int64
	fenced bool
	calls  atomic.Int64
}

type memLease struct {
	token   string
	expires time.Time
}

func newMemLocker(fenced bool) *memLocker {
	return &memLocker{keys: map[string]memLease{}, fenced: fenced}
}

func (m *memLocker) Info() lockimpl.Info {
	return lockimpl.Info{Name: "mem", Fencing: m.fenced, Nodes: 1}
}

func (m *memLocker) Acquire(_ context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	m.calls.Add(1)
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.keys[key]; ok && now.Before(l.expires) {
		return lockimpl.Lease{}, lockimpl.Contended, nil
	}
	tok := lockimpl.NewToken()
	m.keys[key] = memLease{token: tok, expires: now.Add(ttl)}
	lease := lockimpl.Lease{Key: key, Token: tok, Start: now, Validity: ttl}
	if m.fenced {
		m.fence++
		lease.Fence = m.fence
	}
	return lease, lockimpl.OK, nil
}

func (m *memLocker) owner(l lockimpl.Lease) lockimpl.Outcome {
	cur, ok := m.keys[l.Key]
	switch {
	case !ok || time.Now().After(cur.expires):
		return lockimpl.Lost
	case cur.token != l.Token:
		return lockimpl.Taken
	}
	return lockimpl.OK
}

func (m *memLocker) Renew(_ context.Context, l *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.owner(*l)
	if out == lockimpl.OK {
		now := time.Now()
		m.keys[l.Key] = memLease{token: l.Token, expires: now.Add(ttl)}
		l.Start, l.Validity = now, ttl
	}
	return out, nil
}

func (m *memLocker) Release(_ context.Context, l lockimpl.Lease) (lockimpl.Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.owner(l)
	if out == lockimpl.OK {
		delete(m.keys, l.Key)
	}
	return out, nil
}

func mustKeys(t testing.TB, spec string) workloads.KeyChooser {
	t.Helper()
	k, err := workloads.ParseKeys(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustDist(t testing.TB, spec string) workloads.Dist {
	t.Helper()
	d, err := workloads.ParseDist(spec)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func runMem(t *testing.T, l lockimpl.Locker, wl workloads.Workload, opts Options) *results.Result {
	t.Helper()
	return runMemCtx(t, context.Background(), l, wl, opts)
}

func runMemCtx(t *testing.T, ctx context.Context, l lockimpl.Locker, wl workloads.Workload, opts Options) *results.Result {
	t.Helper()
	m, err := Run(ctx, l, wl, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Result{}
	if err := m.Fill(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunUncontended(t *testing.T) {
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "100us")}
	r := runMem(t, newMemLocker(false), wl, Options{Concurrency: 4, Duration: 500 * time.Millisecond})
	c := r.Contention
	if c.Acquired == 0 || c.Contended != 0 || c.Rate != 0 {
		t.Fatalf("contention %+v, want acquisitions and no contention", c)
	}
	if r.Counters.Released != c.Acquired && r.Counters.Released+4 < c.Acquired {
		t.Fatalf("released %d of %d acquired", r.Counters.Released, c.Acquired)
	}
	if got := r.Ops[results.OpAcquire].Count; got != c.Attempts {
		t.Fatalf("acquire histogram has %d values, %d attempts counted", got, c.Attempts)
	}
	if r.Incidents.Total() != 0 {
		t.Fatalf("incidents %+v on a safe uncontended run", r.Incidents)
	}
	if len(r.Series) == 0 {
		t.Fatal("no series")
	}
}

func TestRunContendedCountsEveryAttempt(t *testing.T) {
	wl := workloads.Workload{Keys: mustKeys(t, "uniform:1"), TTL: time.Second, Hold: mustDist(t, "200us")}
	opts := Options{Concurrency: 8, Duration: 500 * time.Millisecond,
		Retry: lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: 100 * time.Microsecond, Timeout: time.Second}}
	r := runMem(t, newMemLocker(false), wl, opts)
	c := r.Contention
	if c.Contended == 0 || c.Rate <= 0 || c.AttemptsPerAcquire == nil || *c.AttemptsPerAcquire <= 1 {
		t.Fatalf("contention %+v: want contended attempts with one key and 8 workers", c)
	}
	if c.Attempts != c.Acquired+c.Contended {
		t.Fatalf("attempts %d != acquired %d + contended %d", c.Attempts, c.Acquired, c.Contended)
	}
	if r.Incidents.Overlaps != 0 {
		t.Fatalf("%d overlaps with a correct lock", r.Incidents.Overlaps)
	}
}

func TestRunPausesCauseIncidents(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fenced bool
	}{{"unfenced", false}, {"fenced", true}} {
		t.Run(tc.name, func(t *testing.T) {
			wl := workloads.Workload{Keys: mustKeys(t, "uniform:2"), TTL: 20 * time.Millisecond, Hold: mustDist(t, "1ms"),
				PauseProb: 0.3, Pause: mustDist(t, "60ms")}
			opts := Options{Concurrency: 6, Duration: time.Second,
				Retry: lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: time.Second}}
			r := runMem(t, newMemLocker(tc.fenced), wl, opts)
			in := r.Incidents
			if in.Overlaps == 0 || in.ExpiredDuringWork == 0 {
				t.Fatalf("incidents %+v: pauses past the ttl must show overlaps and expiry", in)
			}
			if got := r.Ops[results.OpOverrun].Count; got != in.ExpiredDuringWork {
				t.Fatalf("overrun has %d values, want one per write after expiry (%d)", got, in.ExpiredDuringWork)
			}
			if tc.fenced && (in.FencingRejected == 0 || in.StaleWritesAccepted != 0) {
				t.Fatalf("fenced: %+v, want rejections and no stale writes accepted", in)
			}
			if !tc.fenced && (in.StaleWritesAccepted == 0 || in.FencingRejected != 0) {
				t.Fatalf("unfenced: %+v, want stale writes accepted", in)
			}
		})
	}
}

func TestRunRenewalKeepsLongWorkSafe(t *testing.T) {
	// Margins of hundreds of milliseconds: a loaded CI machine under -race
	// stalls goroutines for tens of them.
	wl := workloads.Workload{Keys: mustKeys(t, "uniform:2"), TTL: 400 * time.Millisecond, Hold: mustDist(t, "600ms"), RenewEvery: 80 * time.Millisecond}
	opts := Options{Concurrency: 4, Duration: 1500 * time.Millisecond,
		Retry: lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: time.Second}}
	r := runMem(t, newMemLocker(false), wl, opts)
	if r.Counters.Renewed == 0 || r.Ops[results.OpRenew].Count == 0 {
		t.Fatalf("no renewals recorded: %+v", r.Counters)
	}
	if r.Incidents.Overlaps != 0 || r.Incidents.StaleWritesAccepted != 0 {
		t.Fatalf("incidents %+v with renewal well inside the ttl", r.Incidents)
	}
}

func TestRunCrashesBlockKeys(t *testing.T) {
	wl := workloads.Workload{Keys: mustKeys(t, "uniform:2"), TTL: 50 * time.Millisecond, Hold: mustDist(t, "1ms"), CrashProb: 0.2}
	opts := Options{Concurrency: 4, Duration: time.Second,
		Retry: lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: time.Second}}
	r := runMem(t, newMemLocker(false), wl, opts)
	b := r.Ops[results.OpBlocked]
	if r.Counters.Crashed == 0 || b.Count == 0 {
		t.Fatalf("crashed %d, blocked samples %d", r.Counters.Crashed, b.Count)
	}
	// A crashed holder blocks its key until the ttl runs out.
	if b.LatencyUS.P50 < 30_000 {
		t.Fatalf("blocked p50 %vµs, want near the 50ms ttl", b.LatencyUS.P50)
	}
}

func TestRunOpenLoopSchedulesAtRate(t *testing.T) {
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Rate: workloads.ConstantRate(500)}
	r := runMem(t, newMemLocker(false), wl, Options{Concurrency: 8, Duration: 3 * time.Second})
	if s := r.Counters.Scheduled; s < 1470 || s > 1530 {
		t.Fatalf("scheduled %d requests at 500/s for 3s, want 1500 ± 2%%", s)
	}
	if a := r.Contention.Acquired; a == 0 || a > 1530 {
		t.Fatalf("acquired %d, want some and never more than scheduled", a)
	}
}

func TestRunOpenLoopCountsLate(t *testing.T) {
	// One worker, 20 ms of work, 200 requests/s: the generator cannot keep up,
	// and time-to-acquire must show the queueing, not hide it.
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "20ms"), Rate: workloads.ConstantRate(200)}
	r := runMem(t, newMemLocker(false), wl, Options{Concurrency: 1, Duration: time.Second})
	c := r.Counters
	if c.Late < c.Served-1 || c.Dropped < c.Scheduled/2 {
		t.Fatalf("late %d of %d served, %d of %d scheduled dropped: want nearly all served late and most dropped",
			c.Late, c.Served, c.Dropped, c.Scheduled)
	}
	if p99 := r.Ops[results.OpTimeToAcquire].LatencyUS.P99; p99 < 100_000 {
		t.Fatalf("time_to_acquire p99 %vµs hides coordinated omission", p99)
	}
}

// checkOpenLoopIdentities asserts the open-loop accounting adds up exactly.
func checkOpenLoopIdentities(t *testing.T, r *results.Result) {
	t.Helper()
	c := r.Counters
	if c.Late > c.Served || c.Served+c.Dropped != c.Scheduled {
		t.Errorf("late %d, served %d, dropped %d, scheduled %d: want late ≤ served and served + dropped = scheduled",
			c.Late, c.Served, c.Dropped, c.Scheduled)
	}
	tta := r.Ops[results.OpTimeToAcquire].Count
	if want := r.Contention.Acquired + c.Dropped; tta != want {
		t.Errorf("time_to_acquire has %d values, want acquired %d + dropped %d", tta, r.Contention.Acquired, c.Dropped)
	}
	var offered int64
	for _, p := range r.Series {
		if p.Offered == nil {
			t.Fatalf("second %v of an open-loop run has no offered count", p.ElapsedS)
		}
		offered += *p.Offered
	}
	if !r.Partial && offered != c.Scheduled {
		t.Errorf("the series offers %d requests, want the %d scheduled", offered, c.Scheduled)
	}
	if served := r.Contention.Acquired + r.Contention.GaveUp; served != c.Served {
		t.Errorf("acquired %d + gave up %d = %d, want every served request (%d) to end one of the two ways",
			r.Contention.Acquired, r.Contention.GaveUp, served, c.Served)
	}
}

func TestRunOpenLoopIdentities(t *testing.T) {
	staged := func(start float64, st ...workloads.RateStage) workloads.Rate {
		return workloads.Rate{Start: start, Stages: st}
	}
	for _, tc := range []struct {
		name    string
		wl      workloads.Workload
		workers int
		warmup  time.Duration
		// scheduled is the window's requests: the rate's integral over it.
		scheduled int64
	}{
		// 4 workers holding 5 ms can serve 800/s of 2000/s offered.
		{"overloaded", workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "5ms"), Rate: workloads.ConstantRate(2000)}, 4, 300 * time.Millisecond, 2000},
		{"keeps up", workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Rate: workloads.ConstantRate(300)}, 4, 200 * time.Millisecond, 300},
		{"contended", workloads.Workload{Keys: mustKeys(t, "uniform:1"), TTL: time.Second, Hold: mustDist(t, "2ms"), Rate: workloads.ConstantRate(1000)}, 8, 0, 1000},
		// A ramp from 200/s to 3000/s outruns 4 workers holding 5 ms halfway.
		{"ramp up overloaded", workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "5ms"),
			Rate: staged(200, workloads.RateStage{Target: 3000, Duration: time.Second})}, 4, 200 * time.Millisecond, 1600},
		// Down to 0, a pause, and up again: 200 + 0 + 200.
		{"ramp down, pause, up", workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "1ms"),
			Rate: staged(1000, workloads.RateStage{Target: 0, Duration: 400 * time.Millisecond}, workloads.RateStage{Target: 0, Duration: 200 * time.Millisecond},
				workloads.RateStage{Target: 1000, Duration: 400 * time.Millisecond})}, 4, 100 * time.Millisecond, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runMem(t, newMemLocker(false), tc.wl, Options{Concurrency: tc.workers, Duration: time.Second, Warmup: tc.warmup})
			// Warm-up requests belong to the warm-up: the window's are exactly its own.
			if r.Counters.Scheduled != tc.scheduled {
				t.Errorf("scheduled %d, want %d (the rate's integral over the window)", r.Counters.Scheduled, tc.scheduled)
			}
			checkOpenLoopIdentities(t, r)
			if strings.Contains(tc.name, "overloaded") && r.Counters.Dropped == 0 {
				t.Errorf("no request dropped at 2.5× what the workers can serve: %+v", r.Counters)
			}
		})
	}
}

func TestRunRefusesStagesOtherThanTheWindow(t *testing.T) {
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second,
		Rate: workloads.Rate{Start: 10, Stages: []workloads.RateStage{{Target: 20, Duration: time.Second}}}}
	_, err := Run(context.Background(), newMemLocker(false), wl, Options{Concurrency: 1, Duration: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "last 1s, which is the window") {
		t.Fatalf("Run with stages of 1s in a 2s window: %v, want refused", err)
	}
}

// ends sums the counted ways a critical section can end.
func ends(r *results.Result) int64 {
	return r.Counters.Released + r.Incidents.ReleaseLost + r.Ops[results.OpReleaseFailed].Count +
		r.Counters.Crashed + r.Incidents.WorkAborted + r.Counters.Unfinished
}

func TestRunEveryAcquisitionEndsOnce(t *testing.T) {
	retry := lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: time.Second}
	for _, tc := range []struct {
		name string
		wl   workloads.Workload
	}{
		{"uncontended", workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second}},
		{"contended", workloads.Workload{Keys: mustKeys(t, "uniform:2"), TTL: time.Second, Hold: mustDist(t, "1ms")}},
		{"crashes", workloads.Workload{Keys: mustKeys(t, "uniform:4"), TTL: 30 * time.Millisecond, Hold: mustDist(t, "1ms"), CrashProb: 0.2}},
		{"pauses", workloads.Workload{Keys: mustKeys(t, "uniform:2"), TTL: 20 * time.Millisecond, Hold: mustDist(t, "1ms"),
			PauseProb: 0.3, Pause: mustDist(t, "40ms")}},
		// The lock loses every third renewal: the work stops.
		{"renewals lost", workloads.Workload{Keys: mustKeys(t, "uniform:4"), TTL: 100 * time.Millisecond, Hold: mustDist(t, "30ms"),
			RenewEvery: 10 * time.Millisecond}},
		// Work that outlasts the window: the sections acquired in it are followed to their end.
		{"long work", workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "uniform:50ms,400ms")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l lockimpl.Locker = newMemLocker(false)
			if tc.wl.RenewEvery > 0 {
				l = &losingLocker{memLocker: newMemLocker(false)}
			}
			r := runMem(t, l, tc.wl, Options{Concurrency: 6, Duration: 600 * time.Millisecond, Warmup: 100 * time.Millisecond, Retry: retry})
			if r.Contention.Acquired == 0 {
				t.Fatal("nothing acquired")
			}
			if got := ends(r); got != r.Contention.Acquired {
				t.Fatalf("released %d + release lost %d + release failed %d + crashed %d + aborted %d + unfinished %d = %d, want acquired %d",
					r.Counters.Released, r.Incidents.ReleaseLost, r.Ops[results.OpReleaseFailed].Count, r.Counters.Crashed,
					r.Incidents.WorkAborted, r.Counters.Unfinished, got, r.Contention.Acquired)
			}
			if r.Counters.Unfinished != 0 {
				t.Fatalf("%d sections unfinished on a run that was not interrupted", r.Counters.Unfinished)
			}
			if r.Contention.Acquired != r.Ops[results.OpTimeToAcquire].Count {
				t.Fatalf("acquired %d but %d times to acquire", r.Contention.Acquired, r.Ops[results.OpTimeToAcquire].Count)
			}
			switch tc.name {
			case "crashes":
				if r.Counters.Crashed == 0 {
					t.Fatal("no crash at crash-prob 0.2")
				}
			case "renewals lost":
				if r.Incidents.WorkAborted == 0 {
					t.Fatalf("no work aborted: %+v", r.Incidents)
				}
			}
		})
	}
}

// losingLocker loses every third renewal, as a lease that expired would.
type losingLocker struct {
	*memLocker
	n atomic.Int64
}

func (l *losingLocker) Renew(ctx context.Context, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
	if l.n.Add(1)%3 == 0 {
		return lockimpl.Lost, nil
	}
	return l.memLocker.Renew(ctx, lease, ttl)
}

// flakyLocker fails every third acquire attempt at once, as a refused
// connection does, and answers the others after a delay.
type flakyLocker struct {
	*memLocker
	n atomic.Int64
}

func (f *flakyLocker) Acquire(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	if f.n.Add(1)%3 == 0 {
		return lockimpl.Lease{}, lockimpl.Failed, errors.New("dial tcp: connection refused")
	}
	time.Sleep(2 * time.Millisecond)
	return f.memLocker.Acquire(ctx, key, ttl)
}

func TestRunFailedAttemptsHaveTheirOwnHistogram(t *testing.T) {
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second}
	r := runMem(t, &flakyLocker{memLocker: newMemLocker(false)}, wl, Options{Concurrency: 2, Duration: 400 * time.Millisecond})
	acq, failed := r.Ops[results.OpAcquire], r.Ops[results.OpAcquireFailed]
	if failed.Count == 0 || acq.Count == 0 {
		t.Fatalf("acquire %d, acquire_failed %d: want both", acq.Count, failed.Count)
	}
	if acq.Count+failed.Count != r.Contention.Attempts || acq.Errors != failed.Count {
		t.Fatalf("acquire %d + failed %d != attempts %d, or acquire.errors %d != failed", acq.Count, failed.Count, r.Contention.Attempts, acq.Errors)
	}
	// Every answered attempt took 2 ms; instant failures must not pull it down.
	if acq.LatencyUS.P50 < 2000 {
		t.Fatalf("acquire p50 %vµs: failures leaked into the answered attempts", acq.LatencyUS.P50)
	}
}

func TestRunFairness(t *testing.T) {
	retry := lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: 200 * time.Microsecond, Timeout: time.Second}
	oneKey := workloads.Workload{Keys: mustKeys(t, "uniform:1"), TTL: time.Second, Hold: mustDist(t, "200us")}
	r := runMem(t, newMemLocker(false), oneKey, Options{Concurrency: 16, Duration: 500 * time.Millisecond, Retry: retry})
	f := r.Fairness
	if f == nil || f.Workers != 16 || f.Jain <= 0 || f.Jain > 1 || f.MaxAcquired < f.MinAcquired {
		t.Fatalf("fairness on one key: %+v, want 16 workers and 0 < jain ≤ 1", f)
	}
	var sum int64
	for _, n := range f.PerWorker {
		sum += n
	}
	if sum != r.Contention.Acquired {
		t.Fatalf("per-worker acquisitions add to %d, acquired %d", sum, r.Contention.Acquired)
	}
	unique := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "200us")}
	r = runMem(t, newMemLocker(false), unique, Options{Concurrency: 8, Duration: 500 * time.Millisecond})
	if r.Fairness.Jain < 0.95 || r.Fairness.Starved != 0 {
		t.Fatalf("fairness with a key each: %+v, want jain > 0.95 and nobody starved", r.Fairness)
	}
}

func TestRunCancelIsPartial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second}
	m, err := Run(ctx, newMemLocker(false), wl, Options{Concurrency: 2, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Partial || m.Elapsed > 5*time.Second {
		t.Fatalf("partial %v after %v, want a partial result right after cancel", m.Partial, m.Elapsed)
	}
}

func TestRunCancelDuringWarmupMeasuresNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second}
	m, err := Run(ctx, newMemLocker(false), wl, Options{Concurrency: 2, Duration: time.Second, Warmup: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Partial || !m.BeforeWindow {
		t.Fatalf("partial %v, before window %v: want both after a cancel in the warm-up", m.Partial, m.BeforeWindow)
	}
}

func TestRunCancelMidWorkCountsUnfinished(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Minute, Hold: mustDist(t, "150ms")}
	r := runMemCtx(t, ctx, newMemLocker(false), wl, Options{Concurrency: 3, Duration: time.Hour})
	if !r.Partial || r.Counters.Unfinished == 0 {
		t.Fatalf("partial %v, unfinished %d: want the holders cut off counted", r.Partial, r.Counters.Unfinished)
	}
	if got := ends(r); got != r.Contention.Acquired {
		t.Fatalf("ends %d != acquired %d on an interrupted run", got, r.Contention.Acquired)
	}
}

func TestOptionsValidate(t *testing.T) {
	good := Options{Concurrency: 1, Duration: time.Second}
	for _, bad := range []Options{{Duration: time.Second}, {Concurrency: 1}, {Concurrency: 1, Duration: time.Second, Warmup: -1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
	wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, RenewEvery: 2 * time.Second}
	if _, err := Run(context.Background(), newMemLocker(false), wl, good); err == nil {
		t.Error("renew-every above the ttl accepted")
	}
}

func BenchmarkRecorder(b *testing.B) {
	r := newRecorder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.attempt(time.Duration(i%5000)*time.Microsecond, lockimpl.OK)
	}
}

func BenchmarkWorkerIteration(b *testing.B) {
	wl := withDefaults(workloads.Workload{Keys: mustKeys(b, "unique"), TTL: time.Minute})
	ctx := context.Background()
	win := &windowClock{start: time.Now()}
	r := &run{locker: newMemLocker(false), wl: wl, opts: Options{KeyPrefix: "bench:"}, resource: InProcess(), win: win, windowCtx: ctx}
	r.recs, r.stats = []*recorder{newRecorder()}, make([]workerStats, 1)
	w := &worker{run: r, id: 0, rec: r.recs[0], stats: &r.stats[0], rng: rand.New(rand.NewPCG(1, 1)), releaseCtx: ctx, drainCtx: ctx, windowCtx: ctx}
	w.keyBuf = append(w.keyBuf, r.opts.KeyPrefix...)
	b.ReportAllocs()
	for b.Loop() {
		w.criticalSection(ctx, time.Now(), closedLoop)
	}
}

// BenchmarkTick times the once-a-second drain of the recorder shards into
// the series: its cost follows the shards, not the workers.
func BenchmarkTick(b *testing.B) {
	for _, workers := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var recs []*recorder
			for range recorderShards(workers) {
				recs = append(recs, newRecorder())
			}
			for i := range workers {
				recs[i%len(recs)].attempt(time.Duration(i)*time.Microsecond, lockimpl.OK)
			}
			s := newSeriesCollector(recs, nil)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				recs[i%len(recs)].attempt(time.Millisecond, lockimpl.OK)
				s.tick(time.Second)
			}
		})
	}
}

// BenchmarkMemoryPerWorker reports what one worker costs the recorder, in
// B/worker, at 1000 and 10000 workers: the shards are shared, so it falls
// toward the size of a worker's own figures.
func BenchmarkMemoryPerWorker(b *testing.B) {
	for _, workers := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var perWorker float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				recs := make([]*recorder, recorderShards(workers))
				for i := range recs {
					recs[i] = newRecorder()
					for o := range numOps {
						_ = recs[i].hist(op(o))
					}
				}
				stats := make([]workerStats, workers)
				runtime.ReadMemStats(&after)
				perWorker = float64(after.TotalAlloc-before.TotalAlloc) / float64(workers)
				runtime.KeepAlive(recs)
				runtime.KeepAlive(stats)
			}
			b.ReportMetric(perWorker, "B/worker")
		})
	}
}

// TestRunRefusesOCCWithoutVersionedResource: occ's conflicts can only be
// seen by a resource that checks versions.
func TestRunRefusesOCCWithoutVersionedResource(t *testing.T) {
	occ := lockimpl.NewOCC(nil, "versions", 0)
	wl := workloads.Workload{Keys: mustKeys(t, "uniform:1"), TTL: time.Second, Hold: mustDist(t, "1ms")}
	if _, err := Run(context.Background(), occ, wl, Options{Concurrency: 1, Duration: time.Millisecond}); err == nil {
		t.Fatal("occ ran with the in-process resource")
	}
}
