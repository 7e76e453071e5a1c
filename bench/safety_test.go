package bench

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

func TestResourceCountsOverlaps(t *testing.T) {
	r := NewResource()
	now := time.Now()
	g := Grant{At: now, ValidUntil: now.Add(time.Second)}
	a, overlap, _, _ := r.Enter(1, g)
	if overlap != NoOverlap {
		t.Fatal("first holder reported as overlap")
	}
	b, overlap, _, _ := r.Enter(1, g)
	if overlap == NoOverlap {
		t.Fatal("second holder inside the same key not reported")
	}
	if _, overlap, _, _ := r.Enter(2, g); overlap != NoOverlap {
		t.Fatal("another key reported as overlap")
	}
	r.Exit(a)
	r.Exit(b)
	if _, overlap, _, _ := r.Enter(1, g); overlap != NoOverlap {
		t.Fatal("entry after both left reported as overlap")
	}
}

func TestResourceFencing(t *testing.T) {
	r := NewResource()
	now := time.Now()
	g := Grant{At: now, ValidUntil: now.Add(time.Second)}
	old, _, _, _ := r.Enter(7, g)
	r.Exit(old)
	newer, _, _, _ := r.Enter(7, g)
	if v, _ := r.Write(newer, 2, false); v != WriteAccepted {
		t.Fatalf("newer fenced write: %v", v)
	}
	if v, _ := r.Write(old, 1, true); v != WriteFencingRejected {
		t.Fatalf("lower token: %v, want rejected", v)
	}
	if v, _ := r.Write(newer, 2, false); v != WriteAccepted {
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
			g := Grant{At: now, ValidUntil: now.Add(time.Second)}
			old, _, _, _ := r.Enter(3, g)
			newer, _, _, _ := r.Enter(3, g)
			if tc.newerWrites {
				r.Write(newer, 0, false)
			}
			if got, _ := r.Write(old, 0, tc.oldExpired); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResourceBlockedAfterAbandon(t *testing.T) {
	r := NewResource()
	t0 := time.Now()
	e, _, _, _ := r.Enter(5, Grant{At: t0})
	r.Abandon(e, t0)
	_, overlap, blocked, _ := r.Enter(5, Grant{At: t0.Add(700 * time.Millisecond)})
	if overlap != NoOverlap {
		t.Fatal("abandoned holder still counted inside")
	}
	if blocked != 700*time.Millisecond {
		t.Fatalf("blocked %v, want 700ms", blocked)
	}
	if _, _, blocked, _ := r.Enter(5, Grant{At: t0.Add(time.Second)}); blocked != 0 {
		t.Fatalf("blocked measured twice: %v", blocked)
	}
}

// TestResourceOverlapCause: an entry granted while a holder inside still
// had a valid lease (beyond the drift allowance) is a double grant; one
// granted after every holder inside had outlived its lease is an overrun;
// a renewal told to the resource moves the line.
func TestResourceOverlapCause(t *testing.T) {
	t0 := time.Now()
	drift := 10 * time.Millisecond
	for _, tc := range []struct {
		name    string
		grantAt time.Duration // of the second holder, from t0
		renewTo time.Duration // the first holder's renewed validity, 0: none
		want    Overlap
	}{
		{"granted while the first lease was valid", 50 * time.Millisecond, 0, DoubleGrant},
		{"granted after the first lease ended", 150 * time.Millisecond, 0, Overrun},
		{"granted within the drift allowance", 95 * time.Millisecond, 0, Overrun},
		{"granted just before the allowance", 89 * time.Millisecond, 0, DoubleGrant},
		{"first lease renewed past the grant", 150 * time.Millisecond, 300 * time.Millisecond, DoubleGrant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResource()
			first, _, _, _ := r.Enter(1, Grant{At: t0, ValidUntil: t0.Add(100 * time.Millisecond), Drift: drift})
			if tc.renewTo > 0 {
				r.Renewed(first, t0.Add(tc.renewTo))
			}
			at := t0.Add(tc.grantAt)
			_, got, _, st := r.Enter(1, Grant{At: at, ValidUntil: at.Add(100 * time.Millisecond), Drift: drift})
			if got != tc.want {
				t.Fatalf("overlap %v, want %v", got, tc.want)
			}
			if wantSeq := uint64(2); tc.renewTo > 0 && st.Seq != wantSeq+1 || tc.renewTo == 0 && st.Seq != wantSeq {
				t.Fatalf("seq %d: every event of the key is numbered in order", st.Seq)
			}
		})
	}
}

// TestUnfencedWrites: the same stale write a fence rejects is accepted,
// and counted stale, once writes carry no token (--unfenced-writes).
func TestUnfencedWrites(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	g := Grant{At: now, ValidUntil: now.Add(time.Second)}
	for _, tc := range []struct {
		name     string
		unfenced bool
		want     WriteVerdict
	}{{"fenced", false, WriteFencingRejected}, {"unfenced", true, WriteStaleAccepted}} {
		t.Run(tc.name, func(t *testing.T) {
			var p Protected = InProcess()
			if tc.unfenced {
				p = unfencedWrites{p}
			}
			old, _, _, _, _ := p.Enter(ctx, 3, g)
			newer, _, _, _, _ := p.Enter(ctx, 3, g)
			if v, _, _ := p.Write(ctx, newer, lockimpl.Lease{Fence: 2, Validity: time.Second}, false); v != WriteAccepted {
				t.Fatalf("newer holder's write: %v", v)
			}
			if v, _, _ := p.Write(ctx, old, lockimpl.Lease{Fence: 1, Validity: time.Second}, true); v != tc.want {
				t.Fatalf("expired holder's write: %v, want %v", v, tc.want)
			}
		})
	}
}
