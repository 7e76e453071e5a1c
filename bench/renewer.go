package bench

import (
	"context"
	"math"
	"runtime"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// besideRenewer is a renewer goroutine beside a holder's work (--renewer
// goroutine), as lock libraries' watchdogs and keep-alive loops are. It
// renews every interval, on its own copy of the lease, and hands each
// answer to the holder, who records it: the holder reads the answers while
// it works, and once more right before its write. A renewal that finds the
// lease lost, or fails past its validity, is the renewer's last.
//
// The goroutine is given the lock and the lease, never the section: a
// section stays on its worker's stack however its lease is renewed.
type besideRenewer struct {
	// answers carries each renewal to the holder; the renewer closes it
	// when it ends.
	answers chan renewal
	stop    chan struct{}
	// ended says the holder has seen answers closed.
	ended bool
}

// startRenewer starts the section's renewer goroutine.
func (s *section) startRenewer() {
	b := &besideRenewer{answers: make(chan renewal, 1), stop: make(chan struct{})}
	s.beside = b
	call := renewCall{locker: s.locker, calls: s.calls, key: s.key, ttl: s.wl.TTL}
	go b.renewEvery(s.drainCtx, call, s.lease, s.acquiredAt, s.wl.RenewEvery)
}

// renewEvery renews lease every interval from acquired until stopped, or
// until a renewal says the lease is gone. A renewal due while the process
// was starved goes out as soon as the renewer runs again.
func (b *besideRenewer) renewEvery(ctx context.Context, call renewCall, lease lockimpl.Lease, acquired time.Time, every time.Duration) {
	defer close(b.answers)
	next := acquired.Add(every)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-timer.C:
		}
		// Stopped meanwhile: a stop wins over a renewal due at once.
		select {
		case <-b.stop:
			return
		default:
		}
		rn := call.do(ctx, lease)
		b.answers <- rn
		if rn.out != lockimpl.OK {
			if rn.out.IsLost() || !time.Now().Before(lease.ValidUntil()) {
				return
			}
		} else {
			lease = rn.lease
		}
		next = next.Add(every)
		timer.Reset(time.Until(next))
	}
}

// heard records the answers the renewer has given so far, without
// waiting; told says one of them ended the lease (the holder must stop).
func (s *section) heard(entry Entry) (told bool) {
	b := s.beside
	for b != nil && !b.ended {
		select {
		case rn, ok := <-b.answers:
			if !ok {
				b.ended = true
				return false
			}
			if !s.renewed(s.drainCtx, entry, rn) {
				return true
			}
		default:
			return false
		}
	}
	return false
}

// stopRenewer stops the renewer and waits for it, recording a renewal
// that was in flight: a lease is released only once nothing renews it.
func (s *section) stopRenewer(entry Entry) {
	b := s.beside
	if b == nil {
		return
	}
	close(b.stop)
	if !b.ended {
		for rn := range b.answers {
			s.renewed(s.drainCtx, entry, rn)
		}
	}
	s.beside = nil
}

// workBeside is the holder's work while its renewer renews: a burst, if it
// is to burst, then the rest of the hold, recording the renewer's answers
// as they come, cut short by one that ends the lease.
func (s *section) workBeside(entry Entry, hold time.Duration, end time.Time) workEnd {
	s.maybeBurst()
	if hold <= 0 {
		return workDone
	}
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	b := s.beside
	for {
		answers := b.answers
		if b.ended {
			answers = nil
		}
		select {
		case rn, ok := <-answers:
			if !ok {
				b.ended = true
				continue
			}
			if !s.renewed(s.drainCtx, entry, rn) {
				return workAborted
			}
		case <-timer.C:
			return workDone
		case <-s.drainCtx.Done():
			return workInterrupted
		}
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

// calibrations is how many times the rate is measured; the one whose
// clock reads were bracketed most narrowly by counter reads is kept.
const calibrations = 3

// newSpinner measures the counter's rate. A clock read between two counter
// reads pins the clock to the counter within their gap; on a loaded host a
// preemption there once made that gap most of the calibration and the
// bursts a fraction of their length, so of a few measurements the one
// with the narrowest brackets wins.
func newSpinner() *spinner {
	best, bestSpread := 0.0, uint64(math.MaxUint64)
	for range calibrations {
		a0, start, b0 := ticks(), time.Now(), ticks()
		time.Sleep(calibration)
		a1, end, b1 := ticks(), time.Now(), ticks()
		spread := (b0 - a0) + (b1 - a1)
		if spread < bestSpread {
			mid0, mid1 := a0+(b0-a0)/2, a1+(b1-a1)/2
			best, bestSpread = float64(mid1-mid0)/(float64(end.Sub(start))/float64(time.Millisecond)), spread
		}
	}
	return &spinner{perMS: best}
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
