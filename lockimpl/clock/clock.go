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
	"unsafe" // for go:linkname, and Time's direct build of a time.Time
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
	// sec, nsec and ext are wall's fields as time.Time packs them (see
	// timeLayout), unpacked once so Time builds its result directly;
	// packed is false when wall does not pack that way, and Time then
	// takes time.Time.Add's general path.
	sec, nsec, ext int64
	loc            *time.Location
	packed         bool
}

// timeLayout is time.Time's memory layout (Go 1.9 on): a wall word (flag
// of a monotonic reading, 33 bits of seconds since 1885, 30 bits of
// nanoseconds), the monotonic reading, and the location. Time writes it
// directly: time.Time.Add's general path (carries, range checks, addSec
// out of line) was 3.5% of a pipelined run's samples (perf), and the
// direct build takes 3 ns to Add's 5 (BenchmarkTime, BenchmarkTimeByAdd).
// unpack checks the layout against Add before trusting it, and
// TestTimeMatchesAdd holds every value Time builds == to Add's.
type timeLayout struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

const (
	hasMonotonic = 1 << 63
	nsecShift    = 30
	nsecMask     = 1<<nsecShift - 1
	maxSec       = 1<<33 - 1
)

// unpack fills e's unpacked fields from its wall time, if its layout is
// timeLayout's.
func (e *epochT) unpack() {
	if unsafe.Sizeof(e.wall) != unsafe.Sizeof(timeLayout{}) {
		return
	}
	l := (*timeLayout)(unsafe.Pointer(&e.wall))
	if l.wall&hasMonotonic == 0 {
		return
	}
	e.sec, e.nsec, e.ext, e.loc = int64(l.wall<<1>>(nsecShift+1)), int64(l.wall&nsecMask), l.ext, l.loc
	e.packed = true
	for _, d := range []int64{0, 1, 999_999_999, 1_000_000_000, 3_600_000_000_123} {
		if e.build(d) != e.wall.Add(time.Duration(d)) {
			e.packed = false
			return
		}
	}
}

// build is e.wall.Add(d) for 0 <= d short of the packed seconds' and the
// monotonic reading's overflow, built from the unpacked fields.
func (e *epochT) build(d int64) time.Time {
	ns := e.nsec + d
	sec := e.sec + ns/1e9
	l := timeLayout{wall: hasMonotonic | uint64(sec)<<nsecShift | uint64(ns%1e9), ext: e.ext + d, loc: e.loc}
	return *(*time.Time)(unsafe.Pointer(&l))
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
	best.unpack()
	return best
}

// Time is the time.Time of a reading of Now: its monotonic reading
// compares and subtracts with time.Now's values (early by at most the tens
// of nanoseconds newEpoch's bracket took); its wall clock is the process's start plus the monotonic
// time since, so a wall-clock step after start-up does not move it.
func Time(ns int64) time.Time {
	d := ns - epoch.mono
	// A reading after start-up, within the 33 bits of seconds (to 2157) and
	// far short of the monotonic reading's overflow: built directly.
	if epoch.packed && d >= 0 && d < 1<<62 && epoch.sec+(epoch.nsec+d)/1e9 <= maxSec {
		return epoch.build(d)
	}
	return epoch.wall.Add(time.Duration(d))
}

// Mono is the reading of Now that Time turns into t, for a t that carries
// a monotonic reading (time.Now's, Time's): exact, and cheap (a
// subtraction of monotonic readings).
func Mono(t time.Time) int64 { return epoch.mono + int64(t.Sub(epoch.wall)) }

// Stamp is Time(Now()): the time now, from the monotonic clock alone.
func Stamp() time.Time { return Time(nanotime()) }
