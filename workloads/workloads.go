// Package workloads describes what a run asks of a lock: which keys collide,
// how long work takes, how often holders stall or die, whether leases are
// renewed and how requests arrive. It parses the spec strings users give.
package workloads

import (
	"math/rand/v2"
	"time"
)

// KeyChooser picks the key index for a worker's next lock request.
// Implementations hold no mutable state, so one chooser serves every worker;
// randomness comes from the worker's own rng.
type KeyChooser interface {
	// Key returns the key index for worker's next request.
	Key(worker int, rng *rand.Rand) int
	// String renders the chooser in --keys form.
	String() string
}

// Dist is a distribution of durations (hold, think, pause).
type Dist interface {
	// Sample draws one duration (never negative) using rng.
	Sample(rng *rand.Rand) time.Duration
	// Mean is the distribution's expected value (for reports and sizing).
	Mean() time.Duration
	// String renders the distribution in spec form.
	String() string
}

// Workload is everything a run does besides choosing the lock and the topology.
type Workload struct {
	// Name is the preset the workload came from, or "custom".
	Name string
	// Keys chooses the key of each request.
	Keys KeyChooser
	// TTL is the lease time asked for.
	TTL time.Duration
	// Hold is the work time inside the critical section.
	Hold Dist
	// Think is the time between a release and the next request (closed loop).
	Think Dist
	// PauseProb is the chance a holder stalls before its protected write.
	PauseProb float64
	// Pause is the stall's length.
	Pause Dist
	// CrashProb is the chance a holder abandons its lease without releasing.
	CrashProb float64
	// RenewEvery is the renewal interval while holding; 0 means no renewal.
	RenewEvery time.Duration
	// Renewer says who renews: the holder between its sleeps, or a
	// goroutine beside the work.
	Renewer Renewer
	// BurstProb is the chance a holder's work starts with a CPU-bound
	// burst that the Go scheduler cannot preempt, on every CPU the process
	// may use: every other goroutine (renewers too) waits it out.
	BurstProb float64
	// Burst is the burst's length.
	Burst Dist
	// Rate is the open-loop request rate, constant or staged; the zero
	// Rate means closed loop.
	Rate Rate
}
