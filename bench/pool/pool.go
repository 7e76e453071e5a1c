// Package pool runs trials side by side: scenario, renewal-check and
// failover-map hand it a round of trials (each brings up its own servers
// on its own free ports), and it runs at most Size of them at once. With
// Size 1 it runs them one after another, exactly as a loop would, so the
// commands have one way of running trials whatever --parallel says.
package pool

import (
	"context"
	"sync"
)

// Round is one round of jobs: the trials a command runs before it looks
// at their verdicts again.
type Round[T any] struct {
	// Size is how many jobs run at once; below 1 counts as 1.
	Size int
	// Start is asked, just before job i would start, whether it should run
	// (a budget it would end past, a result to reuse): false skips it. It
	// is called with the pool's lock held, like Done, so it may read what
	// Done wrote without a lock of its own; nil runs every job.
	Start func(i int) bool
	// Run is job i, on its own goroutine; slot is the worker running it
	// (0 to Size-1): one job at a time per slot, so a slot may own what
	// its jobs share (a topology kept up between them).
	Run func(ctx context.Context, slot, i int) (T, error)
	// Done is told of each job as it finishes, in the order they finish,
	// with the pool's lock held (progress, the time spent); nil for none.
	Done func(i int, v T, err error)
}

// Outcome is what became of one job.
type Outcome[T any] struct {
	// Ran is false for a job that never started: skipped by Start, or
	// not begun after Ctrl-C or another job's error.
	Ran   bool
	Value T
	Err   error
}

// Go runs jobs 0 to n-1, starting them in order, at most Size at once,
// and returns their outcomes in job order, so that what a caller folds
// from them does not depend on which finished first. Once ctx is done or
// a job has returned an error, it starts no more jobs; it always waits
// for those running, so every trial that finished is kept.
func (r Round[T]) Go(ctx context.Context, n int) []Outcome[T] {
	size := max(1, r.Size)
	out := make([]Outcome[T], n)
	var (
		mu     sync.Mutex
		failed bool
		wg     sync.WaitGroup
	)
	next := 0
	// claim hands a slot the next job to run, or -1 when none is left to
	// start.
	claim := func() int {
		mu.Lock()
		defer mu.Unlock()
		for next < n && !failed && ctx.Err() == nil {
			i := next
			next++
			if r.Start == nil || r.Start(i) {
				out[i].Ran = true
				return i
			}
		}
		return -1
	}
	finish := func(i int, v T, err error) {
		mu.Lock()
		defer mu.Unlock()
		out[i].Value, out[i].Err = v, err
		failed = failed || err != nil
		if r.Done != nil {
			r.Done(i, v, err)
		}
	}
	for slot := range min(size, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := claim(); i >= 0; i = claim() {
				v, err := r.Run(ctx, slot, i)
				finish(i, v, err)
			}
		}()
	}
	wg.Wait()
	return out
}

// FirstErr is the first error among outcomes, in job order; nil for none.
func FirstErr[T any](outcomes []Outcome[T]) error {
	for _, o := range outcomes {
		if o.Err != nil {
			return o.Err
		}
	}
	return nil
}
