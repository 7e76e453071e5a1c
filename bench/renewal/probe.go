package renewal

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
)

// probeFunc is one trial of a probe case: calls on the armed lock, and
// the server's view of the key after. A trial the lock could not set up
// (an acquire or release that did not succeed) has no exposure.
// i is the trial's index, for a probe whose trials differ.
type probeFunc func(ctx context.Context, l Lock, p plan.Probe, key string, i int) (Trial, error)

// probeVia runs the trials of the probe cases on l, the lock armed once
// on its topology (plan.WithProbe), each trial on a key of its own; the
// trials go to into["case on lock"].
func probeVia(ctx context.Context, cases []Case, l Lock, trials int, into map[string][]Trial) error {
	plans, err := plan.Expand(base(l))
	if err != nil {
		return err
	}
	return plan.WithProbe(ctx, plans[0], plan.Env{}, func(ctx context.Context, p plan.Probe) error {
		for _, c := range cases {
			for i := range trials {
				t, err := c.probe(ctx, l, p, fmt.Sprintf("%sprobe:%s:%d", p.Prefix, c.Name, i), i)
				if err != nil {
					return fmt.Errorf("%s: %w", c.Name, err)
				}
				into[c.Name+" on "+l.Name] = append(into[c.Name+" on "+l.Name], t)
			}
		}
		return nil
	})
}

// acquireTries is how many times a probe tries to acquire its fresh key:
// on a loaded machine a first call can time out while connections open.
const acquireTries = 3

// acquire takes a fresh key for a probe, retrying a call that failed.
func acquire(ctx context.Context, l Lock, p plan.Probe, key string) (lockimpl.Lease, lockimpl.Outcome, error) {
	for i := 1; ; i++ {
		lease, o, err := p.Locker.Acquire(ctx, key, l.TTL)
		if o != lockimpl.Failed || i == acquireTries || ctx.Err() != nil {
			return lease, o, err
		}
	}
}

// probeTrial is a probe's trial with one exposed lease, correct (Caught)
// or not (Overran), and what it saw.
func probeTrial(bad bool, observed string) Trial {
	o := Caught
	if bad {
		o = Overran
	}
	return Trial{Exposure: 1, Outcome: o, Leases: map[string]int{o.String(): 1}, Observed: observed}
}

// unset is a trial whose setup failed: no exposure, and why.
func unset(step string, o lockimpl.Outcome, err error) Trial {
	why := step + " " + o.String()
	if err != nil {
		why += ": " + err.Error()
	}
	return Trial{Observed: why}
}

// addsOrResets acquires with the TTL, renews with it half a TTL later, and
// reads the key's remaining TTL on the server: about a TTL if renewal
// resets it, about one and a half if it adds. The line between is 1.25
// TTL, a quarter TTL from either (etcd counts in whole seconds: it reads
// under 2 s vs under 3 s, floored to 1 s vs 2 s).
func addsOrResets(ctx context.Context, l Lock, p plan.Probe, key string, _ int) (Trial, error) {
	lease, o, err := acquire(ctx, l, p, key)
	if o != lockimpl.OK {
		return unset("acquire", o, err), nil
	}
	defer func() { _, _ = p.Locker.Release(ctx, lease) }()
	time.Sleep(l.TTL / 2)
	if o, err := p.Locker.Renew(ctx, &lease, l.TTL); o != lockimpl.OK {
		return unset("renew", o, err), nil
	}
	left, present, err := p.Remaining(ctx, key)
	if err != nil {
		return Trial{}, err
	}
	// The server's count is floored to its resolution (etcd: whole
	// seconds): the key has less than left+resolution.
	upTo := left + p.Resolution
	seen := fmt.Sprintf("%v left after a renewal at TTL/2", left.Round(time.Millisecond))
	switch {
	case !present:
		return Trial{Observed: "renewed, but the key is gone from the server"}, nil
	case upTo <= l.TTL/2:
		// Neither: the renewal said ok and extended nothing.
		return Trial{Observed: seen + ": the renewal did not extend the key"}, nil
	}
	return probeTrial(upTo > l.TTL*5/4, seen), nil
}

// renewAfterUnlock acquires, releases, then renews with the released
// lease: the renewal must fail, and the key must stay absent.
func renewAfterUnlock(ctx context.Context, l Lock, p plan.Probe, key string, _ int) (Trial, error) {
	lease, o, err := acquire(ctx, l, p, key)
	if o != lockimpl.OK {
		return unset("acquire", o, err), nil
	}
	if o, err := p.Locker.Release(ctx, lease); o != lockimpl.OK {
		return unset("release", o, err), nil
	}
	renewed, _ := p.Locker.Renew(ctx, &lease, l.TTL)
	_, present, err := p.Remaining(ctx, key)
	if err != nil {
		return Trial{}, err
	}
	seen := "renewal " + renewed.String() + ", key absent"
	if present {
		seen = "renewal " + renewed.String() + ", key present"
		_, _ = p.Locker.Release(ctx, lease)
	}
	return probeTrial(renewed == lockimpl.OK || present, seen), nil
}

// releaseRace acquires, then sends a renewal and the release at once, as
// a renewer goroutine that was not stopped first does. Trial i holds the
// renewal in transit for 2i times the acquisition's round trip, as a
// delayed request would be, so that the later trials' renewals reach the
// server after the release. A trial counts where the renewal came after
// the release (it was lost, or the key is back): the key must then be
// absent; present, the release was undone, and the key blocks everyone
// until its TTL ends.
func releaseRace(ctx context.Context, l Lock, p plan.Probe, key string, i int) (Trial, error) {
	start := time.Now()
	lease, o, err := acquire(ctx, l, p, key)
	if o != lockimpl.OK {
		return unset("acquire", o, err), nil
	}
	held := time.Duration(2*i) * time.Since(start)
	renewed := make(chan lockimpl.Outcome, 1)
	go func() {
		time.Sleep(held)
		inFlight := lease
		o, _ := p.Locker.Renew(ctx, &inFlight, l.TTL)
		renewed <- o
	}()
	released, err := p.Locker.Release(ctx, lease)
	renewal := <-renewed
	if released != lockimpl.OK {
		return unset("release", released, err), nil
	}
	_, present, err := p.Remaining(ctx, key)
	if err != nil {
		return Trial{}, err
	}
	seen := fmt.Sprintf("renewal held %v: %s", held.Round(time.Microsecond), renewal)
	switch {
	case present:
		_, _ = p.Locker.Release(ctx, lease)
		return probeTrial(true, seen+", key present after the release"), nil
	case renewal.IsLost():
		return probeTrial(false, seen+", key absent"), nil
	}
	// Renewed before the release went through, or unanswered: no race.
	return Trial{Observed: seen + " before the release: no race"}, nil
}
