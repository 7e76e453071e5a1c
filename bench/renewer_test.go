package bench

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// slowRenewLocker answers renewals after a delay, as a round trip to a
// server would: a renewer needs that long to learn anything.
type slowRenewLocker struct {
	*memLocker
	delay time.Duration
}

func (l *slowRenewLocker) Renew(ctx context.Context, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
	time.Sleep(l.delay)
	return l.memLocker.Renew(ctx, lease, ttl)
}

func retryFor(d time.Duration) lockimpl.RetryPolicy {
	return lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: d}
}

// TestRenewerGoroutine runs the renewer goroutine beside the work:
//   - keeps: renewals every tenth of a 1 s TTL keep 1.2 s of work safe,
//     and are recorded as the holder's own would be;
//   - tells: a lock that loses every third renewal stops each holder told
//     so (one aborted work per lost renewal), and no holder writes late.
func TestRenewerGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		locker lockimpl.Locker
		check  func(t *testing.T, r *results.Result)
	}{
		{name: "keeps", locker: newMemLocker(false), check: func(t *testing.T, r *results.Result) {
			if r.Counters.Renewed == 0 || r.Ops[results.OpRenew].Count == 0 || r.Counters.Writes == 0 {
				t.Fatalf("counters %+v: want renewals and writes", r.Counters)
			}
			if r.Incidents.Overlaps != 0 || r.Incidents.ExpiredDuringWork != 0 || r.Incidents.WorkAborted != 0 {
				t.Fatalf("incidents %+v with renewal well inside the ttl", r.Incidents)
			}
		}},
		{name: "tells", locker: &losingLocker{memLocker: newMemLocker(false)}, check: func(t *testing.T, r *results.Result) {
			in := r.Incidents
			if in.RenewLost == 0 || in.WorkAborted != in.RenewLost {
				t.Fatalf("incidents %+v: want every lost renewal to abort its work", in)
			}
			if in.ExpiredDuringWork != 0 {
				t.Fatalf("%d writes after the lease, though each holder was told", in.ExpiredDuringWork)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A TTL of a second renewed every 100 ms: a renewal must be
			// delayed 900 ms to lose a lease (a loaded CI machine under
			// -race stalls goroutines for hundreds of milliseconds).
			wl := workloads.Workload{Keys: mustKeys(t, "uniform:2"), TTL: time.Second, Hold: mustDist(t, "1200ms"),
				RenewEvery: 100 * time.Millisecond, Renewer: workloads.RenewGoroutine}
			opts := Options{Concurrency: 4, Duration: 1500 * time.Millisecond, Retry: retryFor(time.Second)}
			tc.check(t, runMem(t, tc.locker, wl, opts))
		})
	}
}

// TestBurstStarvesRenewer plants both answers of a starved renewer. One
// holder, a 100 ms TTL renewed every 33 ms by a goroutine, and a burst of
// 300 ms on every CPU at the start of each work: no renewal goes out
// during the burst (the scheduler cannot preempt it), so the lease is
// lost 100 ms in. A renewal takes 200 ms to answer, standing in for a
// round trip.
//   - overran: the work ends with the burst; the holder checks right away,
//     200 ms before any renewal could tell it, and writes late.
//   - caught: 600 ms of work remain after the burst; the first renewal
//     after it is lost and tells the holder, which stops without writing.
func TestBurstStarvesRenewer(t *testing.T) {
	if spinPreemptible {
		t.Skip("spin is preemptible on this architecture: a burst starves nothing")
	}
	for _, tc := range []struct {
		name, hold string
		check      func(t *testing.T, in results.Incidents)
	}{
		{name: "overran", hold: "300ms", check: func(t *testing.T, in results.Incidents) {
			if in.ExpiredDuringWork == 0 {
				t.Fatalf("incidents %+v: want writes after the lease", in)
			}
		}},
		{name: "caught", hold: "900ms", check: func(t *testing.T, in results.Incidents) {
			if in.WorkAborted == 0 || in.ExpiredDuringWork != 0 {
				t.Fatalf("incidents %+v: want work aborted, no write after the lease", in)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := workloads.Workload{Keys: mustKeys(t, "uniform:1"), TTL: 100 * time.Millisecond, Hold: mustDist(t, tc.hold),
				RenewEvery: 33 * time.Millisecond, Renewer: workloads.RenewGoroutine, BurstProb: 1, Burst: mustDist(t, "300ms")}
			opts := Options{Concurrency: 1, Duration: 500 * time.Millisecond, Retry: retryFor(time.Second)}
			r := runMem(t, &slowRenewLocker{memLocker: newMemLocker(false), delay: 200 * time.Millisecond}, wl, opts)
			tc.check(t, r.Incidents)
		})
	}
}
