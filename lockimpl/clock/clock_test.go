package clock

import (
	"testing"
	"time"
)

// TestStampAgreesWithTimeNow: a Stamp falls between two time.Now readings
// taken around it, by the monotonic clock both carry, or early by no more
// than the epoch's bracket (a microsecond is far more than it takes).
func TestStampAgreesWithTimeNow(t *testing.T) {
	for range 1000 {
		before := time.Now()
		s := Stamp()
		after := time.Now()
		if s.Before(before.Add(-time.Microsecond)) || s.After(after) {
			t.Fatalf("Stamp %v not within [%v, %v]", s, before, after)
		}
	}
	a := Now()
	time.Sleep(time.Millisecond)
	if d := Now() - a; d < int64(time.Millisecond) {
		t.Errorf("Now moved %dns over a 1ms sleep", d)
	}
	if d := Time(a + 5).Sub(Time(a)); d != 5 {
		t.Errorf("Time(a+5) - Time(a) = %v, want 5ns", d)
	}
}

// The clocks side by side: Now against time.Now (go test -bench . ./lockimpl/clock).
func BenchmarkNow(b *testing.B) {
	var s int64
	for b.Loop() {
		s += Now()
	}
	_ = s
}

func BenchmarkStamp(b *testing.B) {
	var s time.Time
	for b.Loop() {
		s = Stamp()
	}
	_ = s
}

func BenchmarkTimeNow(b *testing.B) {
	var s time.Time
	for b.Loop() {
		s = time.Now()
	}
	_ = s
}

// TestTimeMatchesAdd: Time's direct build is exactly (==, location and
// monotonic reading included) the epoch's time.Time plus the elapsed time,
// on this toolchain's layout of time.Time, at second boundaries and far
// out; and Mono undoes Time.
func TestTimeMatchesAdd(t *testing.T) {
	if !epoch.packed {
		t.Fatal("time.Time's layout not recognised: Time takes Add's general path")
	}
	base := epoch.mono
	ds := []int64{0, 1, 999, 1e9 - epoch.nsec - 1, 1e9 - epoch.nsec, 1e9 - epoch.nsec + 1, 1e9, 86_400e9 + 7, 100 * 365 * 86_400e9}
	for i := range int64(1000) {
		ds = append(ds, i*7_919_999+i*i)
	}
	for _, d := range ds {
		got, want := Time(base+d), epoch.wall.Add(time.Duration(d))
		if got != want {
			t.Fatalf("Time(epoch+%d) = %#v, want %#v", d, got, want)
		}
		if m := Mono(got); m != base+d {
			t.Fatalf("Mono(Time(%d)) = %d", base+d, m)
		}
	}
	// Before the epoch: Add's general path.
	if got, want := Time(base-5), epoch.wall.Add(-5); got != want {
		t.Errorf("Time(epoch-5) = %v, want %v", got, want)
	}
}

// Time's direct build against time.Time.Add's general path, which it
// replaced, side by side (go test -bench 'Time$|TimeByAdd' ./lockimpl/clock).
func BenchmarkTime(b *testing.B) {
	var s time.Time
	ns := Now()
	for b.Loop() {
		ns++
		s = Time(ns)
	}
	_ = s
}

func BenchmarkTimeByAdd(b *testing.B) {
	var s time.Time
	ns := Now()
	for b.Loop() {
		ns++
		s = epoch.wall.Add(time.Duration(ns - epoch.mono))
	}
	_ = s
}
