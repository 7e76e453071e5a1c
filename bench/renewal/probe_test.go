package renewal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
)

// fakeLock answers a probe with planted outcomes; the server's view of
// the key is planted beside it.
type fakeLock struct {
	acquire, renew, release lockimpl.Outcome
}

func (f fakeLock) Acquire(_ context.Context, key string, ttl time.Duration) (lockimpl.Lease, lockimpl.Outcome, error) {
	return lockimpl.Lease{Key: key, Token: "t", Start: time.Now(), Validity: ttl}, f.acquire, nil
}
func (f fakeLock) Renew(context.Context, *lockimpl.Lease, time.Duration) (lockimpl.Outcome, error) {
	return f.renew, nil
}
func (f fakeLock) Release(context.Context, lockimpl.Lease) (lockimpl.Outcome, error) {
	return f.release, nil
}
func (f fakeLock) Info() lockimpl.Info { return lockimpl.Info{Name: "fake"} }

// TestProbeVerdicts plants the server's answer and the lock's outcomes and
// checks each probe's word: an extend that leaves 1.5 TTL adds; at etcd's
// whole seconds, 1 s read of a 2 s TTL resets and 2 s adds (of a 1 s TTL,
// 0 s and 1 s); a renewal
// after release that succeeds or leaves a key recreated; a renewal racing
// release that came after it (lost) with the key gone, or left the key
// there; one that came first (ok, no key) is no race; a setup that
// failed is no exposure (never a pass).
func TestProbeVerdicts(t *testing.T) {
	const ttl = 300 * time.Millisecond
	ok, lost := lockimpl.OK, lockimpl.Lost
	for _, tc := range []struct {
		name       string
		probe      probeFunc
		lock       fakeLock
		ttl        time.Duration
		left       time.Duration
		present    bool
		resolution time.Duration
		want       Outcome
		exposure   int
	}{
		{"resets", addsOrResets, fakeLock{ok, ok, ok}, ttl, 299 * time.Millisecond, true, time.Millisecond, Caught, 1},
		{"adds", addsOrResets, fakeLock{ok, ok, ok}, ttl, 449 * time.Millisecond, true, time.Millisecond, Overran, 1},
		{"etcd resets (1 s floored)", addsOrResets, fakeLock{ok, ok, ok}, 2 * time.Second, time.Second, true, time.Second, Caught, 1},
		{"etcd adds (2 s floored)", addsOrResets, fakeLock{ok, ok, ok}, 2 * time.Second, 2 * time.Second, true, time.Second, Overran, 1},
		{"etcd:1 resets (0 s floored)", addsOrResets, fakeLock{ok, ok, ok}, time.Second, 0, true, time.Second, Caught, 1},
		{"etcd:1 adds (1 s floored)", addsOrResets, fakeLock{ok, ok, ok}, time.Second, time.Second, true, time.Second, Overran, 1},
		{"not extended", addsOrResets, fakeLock{ok, ok, ok}, ttl, 140 * time.Millisecond, true, time.Millisecond, Inconclusive, 0},
		{"renewal failed", addsOrResets, fakeLock{ok, lockimpl.Failed, ok}, ttl, 0, false, time.Millisecond, Inconclusive, 0},
		{"refused", renewAfterUnlock, fakeLock{ok, lost, ok}, ttl, 0, false, time.Millisecond, Caught, 1},
		{"renewed after release", renewAfterUnlock, fakeLock{ok, ok, ok}, ttl, 0, false, time.Millisecond, Overran, 1},
		{"key recreated", renewAfterUnlock, fakeLock{ok, lost, ok}, ttl, ttl, true, time.Millisecond, Overran, 1},
		{"release lost", renewAfterUnlock, fakeLock{ok, lost, lost}, ttl, 0, false, time.Millisecond, Inconclusive, 0},
		{"contended", renewAfterUnlock, fakeLock{lockimpl.Contended, ok, ok}, ttl, 0, false, time.Millisecond, Inconclusive, 0},
		{"race: key absent", releaseRace, fakeLock{ok, lost, ok}, ttl, 0, false, time.Millisecond, Caught, 1},
		{"race: resurrected", releaseRace, fakeLock{ok, ok, ok}, ttl, ttl, true, time.Millisecond, Overran, 1},
		{"race: renewed first", releaseRace, fakeLock{ok, ok, ok}, ttl, 0, false, time.Millisecond, Inconclusive, 0},
		{"race: renewal failed", releaseRace, fakeLock{ok, lockimpl.Failed, ok}, ttl, 0, false, time.Millisecond, Inconclusive, 0},
		{"race: release failed", releaseRace, fakeLock{ok, lost, lockimpl.Failed}, ttl, 0, false, time.Millisecond, Inconclusive, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.Probe{Locker: tc.lock, Resolution: tc.resolution,
				Remaining: func(context.Context, string) (time.Duration, bool, error) { return tc.left, tc.present, nil }}
			// The wait of adds-or-resets is half the TTL: the planted etcd
			// TTL makes that a second.
			tr, err := tc.probe(context.Background(), Lock{Name: "fake", TTL: tc.ttl}, p, "k", 1)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Outcome != tc.want || tr.Exposure != tc.exposure || strings.TrimSpace(tr.Observed) == "" {
				t.Errorf("%s, exposure %d, saw %q; want %s, exposure %d", tr.Outcome, tr.Exposure, tr.Observed, tc.want, tc.exposure)
			}
		})
	}
}
