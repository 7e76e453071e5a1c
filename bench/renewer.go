package bench

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// besideRenewer is a renewer goroutine beside a holder's work (--renewer
// goroutine), as lock libraries' watchdogs and keep-alive loops are. It
// renews every interval until stopped; a renewal that finds the lease lost,
// or fails past its validity, tells the holder (cancels lost).
//
// Its renewal calls run beside anything the holder does, its write
// included; what a renewal changes in the section (the lease, the history,
// the resource) it records holding mu, which the holder takes from the
// check before its write until it has stopped the renewer.
type besideRenewer struct {
	mu   sync.Mutex
	lost context.Context
	tell context.CancelFunc
	stop chan struct{}
	done sync.WaitGroup
	// held says the holder holds mu.
	held bool
}

// startRenewer starts the section's renewer goroutine.
func (s *section) startRenewer(entry Entry) {
	b := &besideRenewer{stop: make(chan struct{})}
	b.lost, b.tell = context.WithCancel(s.drainCtx)
	s.beside = b
	b.done.Go(func() { s.renewEvery(b, entry) })
}

// holdRenewer takes the renewer's lock for the holder: a renewal answered
// from now on waits to be recorded until the renewer is stopped.
func (s *section) holdRenewer() {
	if b := s.beside; b != nil && !b.held {
		b.mu.Lock()
		b.held = true
	}
}

// told says whether the renewer told the holder its lease is gone; false
// without a renewer.
func (b *besideRenewer) told() bool { return b != nil && b.lost.Err() != nil }

// stopRenewer stops the renewer and waits for it, a renewal in flight
// included (recorded once the holder lets go of mu): a lease is released
// only once nothing renews it.
func (s *section) stopRenewer() {
	b := s.beside
	if b == nil {
		return
	}
	close(b.stop)
	if b.held {
		b.held = false
		b.mu.Unlock()
	}
	b.done.Wait()
	b.tell()
	s.beside = nil
}

// workBeside is the holder's work while its renewer renews: a burst, if it
// is to burst, then the rest of the hold, cut short if the renewer tells
// it the lease is gone.
func (s *section) workBeside(hold time.Duration, end time.Time) workEnd {
	s.maybeBurst()
	if hold > 0 {
		sleepUntil(s.beside.lost, end)
	}
	switch {
	case s.drainCtx.Err() != nil:
		return workInterrupted
	case s.beside.told():
		return workAborted
	}
	return workDone
}

// renewEvery renews the section's lease on the interval's schedule from
// its acquisition until stopped, or until a renewal says the lease is
// gone. A renewal due while the process was starved goes out as soon as
// the renewer runs again.
func (s *section) renewEvery(b *besideRenewer, entry Entry) {
	timer := time.NewTimer(time.Until(s.acquiredAt.Add(s.wl.RenewEvery)))
	defer timer.Stop()
	for next := s.acquiredAt.Add(s.wl.RenewEvery); ; next = next.Add(s.wl.RenewEvery) {
		select {
		case <-b.stop:
			return
		case <-b.lost.Done():
			return
		case <-timer.C:
		}
		// Stopped meanwhile: a stop wins over a renewal due at once.
		select {
		case <-b.stop:
			return
		default:
		}
		rn := s.callRenew(b.lost)
		b.mu.Lock()
		ok := s.renewed(b.lost, entry, rn)
		if !ok {
			b.tell()
		}
		b.mu.Unlock()
		if !ok {
			return
		}
		timer.Reset(time.Until(next.Add(s.wl.RenewEvery)))
	}
}

// maybeBurst runs, with the workload's burst chance, a CPU-bound burst of
// the sampled length at the start of the holder's work.
func (s *section) maybeBurst() {
	if s.wl.BurstProb <= 0 || s.rng.Float64() >= s.wl.BurstProb {
		return
	}
	s.spin.burst(s.wl.Burst.Sample(s.rng))
}

// spinner runs CPU-bound bursts of a given length, timed by the CPU's
// counter, whose rate is measured once per run against the clock.
type spinner struct {
	// perMS is how many ticks make a millisecond.
	perMS float64
}

// calibration is how long the counter is compared with the clock: both
// count real time, so a loaded machine does not skew it.
const calibration = 5 * time.Millisecond

// newSpinner measures the counter's rate.
func newSpinner() *spinner {
	start, t0 := time.Now(), ticks()
	time.Sleep(calibration)
	t1, elapsed := ticks(), time.Since(start)
	return &spinner{perMS: float64(t1-t0) / (float64(elapsed) / float64(time.Millisecond))}
}

// burst spins for d on every CPU Go may use: GOMAXPROCS-1 helpers and the
// caller, all until one deadline. Nothing else of the process runs until
// they end. The caller goes straight on after (as a holder whose
// computation ended would), with no scheduling point between.
func (sp *spinner) burst(d time.Duration) {
	if sp == nil || d <= 0 {
		return
	}
	deadline := ticks() + uint64(sp.perMS*float64(d)/float64(time.Millisecond))
	for range runtime.GOMAXPROCS(0) - 1 {
		go spinUntil(deadline)
	}
	spinUntil(deadline)
}
