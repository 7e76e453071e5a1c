// Package clock is a cheap monotonic clock for the hot path of a run.
//
// time.Now reads the monotonic clock and the wall clock (two vDSO reads);
// a pipelined run reads the time several times an acquisition, and the
// profile put time.Now at an eighth of the generator's CPU. Now reads the
// runtime's monotonic clock alone, the one time.Now's monotonic reading
// comes from, so a Time made from it compares and subtracts exactly with
// time.Now's values.
package clock

import (
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock (CLOCK_MONOTONIC), in
// nanoseconds from an arbitrary origin: what time.Now's monotonic reading
// is taken from.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now is the monotonic clock in nanoseconds from an arbitrary origin, fixed
// for the process: only differences between readings mean anything.
func Now() int64 { return nanotime() }

// epoch pairs one time.Now with the monotonic clock at the same instant,
// read once at start-up and never changed, so Time can turn a reading of
// Now into a time.Time without reading the wall clock again.
var epoch = newEpoch()

type epochT struct {
	wall time.Time
	mono int64
}

// newEpoch brackets a time.Now between two readings of the monotonic
// clock, keeping the tightest bracket of a few tries, and takes its later
// end as the instant of the time.Now: a Time is then early, never late, by
// at most the bracket (tens of nanoseconds), so a lease stamped with it
// starts no later than it did.
func newEpoch() epochT {
	var best epochT
	width := int64(-1)
	for range 16 {
		before := nanotime()
		w := time.Now()
		after := nanotime()
		if width < 0 || after-before < width {
			best, width = epochT{wall: w, mono: after}, after-before
		}
	}
	return best
}

// Time is the time.Time of a reading of Now: its monotonic reading
// compares and subtracts with time.Now's values (early by at most the tens
// of nanoseconds newEpoch's bracket took); its wall clock is the process's start plus the monotonic
// time since, so a wall-clock step after start-up does not move it.
func Time(ns int64) time.Time { return epoch.wall.Add(time.Duration(ns - epoch.mono)) }

// Stamp is Time(Now()): the time now, from the monotonic clock alone.
func Stamp() time.Time { return Time(nanotime()) }
