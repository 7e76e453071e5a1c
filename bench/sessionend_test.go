package bench

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/check"
	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// sessionLocker is memLocker as a session lock: every lease ends with its
// session end after its start, which the lock learns learnt after its
// start; until then no new session exists and acquisitions fail, and a
// release after the end finds the lease gone (as zk's client behaves).
type sessionLocker struct {
	*memLocker
	end, learnt time.Duration
	// wallEnd reports the end without a monotonic reading, as a lock that
	// keeps it as Unix time does (rueidislock's and valkeylock's adapter).
	wallEnd   bool
	mu        sync.Mutex
	lastStart time.Time
}

var errNoSession = errors.New("no session")

func (s *sessionLocker) Acquire(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lastStart.IsZero() && time.Since(s.lastStart) < s.learnt {
		return lockimpl.Lease{}, lockimpl.Failed, errNoSession
	}
	lease, out, err := s.memLocker.Acquire(ctx, key, ttl)
	if out == lockimpl.OK {
		s.lastStart = lease.Start
	}
	return lease, out, err
}

func (s *sessionLocker) Release(ctx context.Context, lease lockimpl.Lease) (lockimpl.Outcome, error) {
	if time.Since(lease.Start) > s.end {
		return lockimpl.Lost, nil
	}
	return s.memLocker.Release(ctx, lease)
}

func (s *sessionLocker) LeaseEnded(lease lockimpl.Lease) (time.Time, bool) {
	if time.Since(lease.Start) < s.learnt {
		return time.Time{}, false
	}
	if s.wallEnd {
		return time.Unix(0, lease.Start.Add(s.end).UnixNano()), true
	}
	return lease.Start.Add(s.end), true
}

// TestRunCountsWritesAfterASessionEnded plants a session lock whose every
// lease ends 5 ms after its start, holders working 20 ms: each write comes
// after its lease ended, whether the lock knew before the write or learnt
// it only after (the run then counts the write when the worker next asks).
// The run counts such writes as expired during work, times their overrun,
// records the lock's report in the history, and lockbench check counts the
// same writes after the lease. A session that outlives the lease's validity
// ends nothing.
func TestRunCountsWritesAfterASessionEnded(t *testing.T) {
	for _, tc := range []struct {
		name        string
		end, learnt time.Duration
		allLate     bool
		late        bool
		heardAfter  bool
		wallEnd     bool
	}{
		{"known before the write", 5 * time.Millisecond, 0, true, true, false, false},
		{"learnt after the write", 5 * time.Millisecond, 40 * time.Millisecond, false, true, true, false},
		{"the session outlived the lease", 2 * time.Second, 0, false, false, false, false},
		// An end in wall time only, as rueidislock's adapter reports it:
		// the path through onLeaseClock. (The wall clock's slewing that
		// set it 20 ns apart from the lease's monotonic clock cannot be
		// planted in process; TestOnLeaseClock holds the arithmetic.)
		{"known before the write, in wall time", 5 * time.Millisecond, 0, true, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &sessionLocker{memLocker: newMemLocker(true), end: tc.end, learnt: tc.learnt, wallEnd: tc.wallEnd}
			wl := workloads.Workload{Keys: mustKeys(t, "unique"), TTL: time.Second, Hold: mustDist(t, "20ms")}
			path := filepath.Join(t.TempDir(), "h.jsonl.gz")
			hw, err := history.Create(path, history.Header{Origin: time.Now(), Lock: "session", Fencing: true, TTLNS: int64(wl.TTL),
				DriftNS: int64(history.DriftAllowance(wl.TTL)), Resource: "in-process"}, 1)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Concurrency: 1, Duration: 400 * time.Millisecond, History: hw,
				Retry: lockimpl.RetryPolicy{Kind: lockimpl.RetryFixed, Delay: time.Millisecond, Timeout: 100 * time.Millisecond}}
			r := runMem(t, l, wl, opts)
			if err := hw.Close(nil, history.Trailer{}); err != nil {
				t.Fatal(err)
			}
			h, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.Check(h, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			in := r.Incidents
			switch {
			case r.Counters.Writes == 0:
				t.Fatal("no write: the run proves nothing")
			case tc.allLate && in.ExpiredDuringWork != r.Counters.Writes:
				t.Fatalf("%d of %d writes expired during work; want every one", in.ExpiredDuringWork, r.Counters.Writes)
			case tc.late && in.ExpiredDuringWork == 0:
				t.Fatalf("no write expired during work of %d", r.Counters.Writes)
			case !tc.late && (in.ExpiredDuringWork != 0 || lostEvents(h) != 0):
				t.Fatalf("%d write(s) expired during work, %d lost event(s); want none", in.ExpiredDuringWork, lostEvents(h))
			case tc.late && lostEvents(h) < in.ExpiredDuringWork:
				t.Fatalf("%d lost event(s) for %d late write(s)", lostEvents(h), in.ExpiredDuringWork)
			}
			if got := heardAfterWrite(h); got != tc.heardAfter {
				t.Fatalf("a lease's end heard after its write: %v, want %v", got, tc.heardAfter)
			}
			if got := r.Ops[results.OpOverrun].Count; got != in.ExpiredDuringWork {
				t.Fatalf("overrun has %d values, want one per late write (%d)", got, in.ExpiredDuringWork)
			}
			if rep.Counts.LateWrites != in.ExpiredDuringWork {
				t.Fatalf("check counts %d writes after the lease, the run %d", rep.Counts.LateWrites, in.ExpiredDuringWork)
			}
			if err := rep.Agree(in); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// lostEvents counts the lock's reports of a lease's end in h.
func lostEvents(h *history.History) int64 {
	var n int64
	for _, e := range h.Events {
		if e.Op == history.OpLost {
			n++
		}
	}
	return n
}

// heardAfterWrite says whether a lease's end was reported after its write.
func heardAfterWrite(h *history.History) bool {
	writes := map[string]int64{}
	for _, e := range h.Events {
		if e.Op == history.OpWrite {
			writes[e.Token] = e.Call
		}
	}
	for _, e := range h.Events {
		if w, ok := writes[e.Token]; ok && e.Op == history.OpLost && e.Return > w {
			return true
		}
	}
	return false
}

// TestOnLeaseClock: an end reported in wall time lands on the lease's own
// clock at the same distance from its start, so the lost event and the
// lease cut short by it are one instant wherever the history measures.
func TestOnLeaseClock(t *testing.T) {
	start := time.Now()
	lease := lockimpl.Lease{Start: start, Validity: time.Second}
	wall := time.Unix(0, start.Add(300*time.Millisecond).UnixNano())
	got := onLeaseClock(lease, wall)
	if d := got.Sub(start); d != 300*time.Millisecond {
		t.Fatalf("end is %v after the start on the lease's clock, want 300ms", d)
	}
	if got.Round(0) == got {
		t.Fatal("the end carries no monotonic reading: the history would time it on the wall clock")
	}
}
