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
