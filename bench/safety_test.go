package bench

import (
	"testing"
	"time"
)

func TestResourceCountsOverlaps(t *testing.T) {
	r := NewResource()
	now := time.Now()
	a, overlap, _ := r.Enter(1, now)
	if overlap {
		t.Fatal("first holder reported as overlap")
	}
	b, overlap, _ := r.Enter(1, now)
	if !overlap {
		t.Fatal("second holder inside the same key not reported")
	}
	if _, overlap, _ := r.Enter(2, now); overlap {
		t.Fatal("another key reported as overlap")
	}
	r.Exit(a)
	r.Exit(b)
	if _, overlap, _ := r.Enter(1, now); overlap {
		t.Fatal("entry after both left reported as overlap")
	}
}

func TestResourceFencing(t *testing.T) {
	r := NewResource()
	now := time.Now()
	old, _, _ := r.Enter(7, now)
	r.Exit(old)
	newer, _, _ := r.Enter(7, now)
	if v := r.Write(newer, 2, false); v != WriteAccepted {
		t.Fatalf("newer fenced write: %v", v)
	}
	if v := r.Write(old, 1, true); v != WriteFencingRejected {
		t.Fatalf("lower token: %v, want rejected", v)
	}
	if v := r.Write(newer, 2, false); v != WriteAccepted {
		t.Fatalf("equal token from the current holder: %v", v)
	}
}

func TestResourceStaleWrites(t *testing.T) {
	for _, tc := range []struct {
		name        string
		newerWrites bool
		oldExpired  bool
		want        WriteVerdict
	}{
		{"expired after newer wrote", true, true, WriteStaleAccepted},
		{"expired, newer has not written", false, true, WriteAccepted},
		{"not expired", true, false, WriteAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResource()
			now := time.Now()
			old, _, _ := r.Enter(3, now)
			newer, _, _ := r.Enter(3, now)
			if tc.newerWrites {
				r.Write(newer, 0, false)
			}
			if got := r.Write(old, 0, tc.oldExpired); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResourceBlockedAfterAbandon(t *testing.T) {
	r := NewResource()
	t0 := time.Now()
	e, _, _ := r.Enter(5, t0)
	r.Abandon(e, t0)
	_, overlap, blocked := r.Enter(5, t0.Add(700*time.Millisecond))
	if overlap {
		t.Fatal("abandoned holder still counted inside")
	}
	if blocked != 700*time.Millisecond {
		t.Fatalf("blocked %v, want 700ms", blocked)
	}
	if _, _, blocked := r.Enter(5, t0.Add(time.Second)); blocked != 0 {
		t.Fatalf("blocked measured twice: %v", blocked)
	}
}
