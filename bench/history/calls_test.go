package history

import "testing"

// TestCallLedgerSkipsOnlyReleasedLeases: the ledger's fast paths pass over
// leases whose release was called (Acquired) or returned (the lookups of
// renewals, ends and releases), and only those: an open lease, and one whose
// release is in flight, are still judged and still found.
func TestCallLedgerSkipsOnlyReleasedLeases(t *testing.T) {
	l := NewCallLedger(0)
	// a: acquired and released; with no lease open the next acquisition
	// is judged against nothing.
	if v := l.Acquired("a", 0, 10, 1000); v.Certain || v.Possible {
		t.Fatalf("first acquisition judged %+v", v)
	}
	l.Releasing("a", 20)
	l.Released("a", 30)
	if v := l.Acquired("b", 40, 50, 1000); v.Certain || v.Possible {
		t.Fatalf("acquisition after a's release judged %+v, want none", v)
	}
	// b is open: c inside its validity is a certain double grant, against b.
	if v := l.Acquired("c", 60, 70, 1000); !v.Certain || v.Against != "b" {
		t.Errorf("acquisition inside b's lease judged %+v, want certain against b", v)
	}
	// b's release is called, not yet returned: its renewal and its return
	// are still found (a lookup skips only leases whose release returned).
	l.Releasing("b", 80)
	l.Released("b", 90)
	if n := l.Len(); n != 3 {
		t.Fatalf("ledger holds %d leases, want 3", n)
	}
	l.Prune(90)
	if n := l.Len(); n != 1 {
		t.Errorf("after pruning to 90 the ledger holds %d leases, want c alone (a and b released back)", n)
	}
	// c is still open; a renewal found past released leases extends it: d,
	// called after c's first validity, is judged by the renewed one.
	l.Renewed("c", 100, 5000)
	if v := l.Acquired("d", 2000, 2010, 9000); !v.Certain || v.Against != "c" {
		t.Errorf("acquisition inside c's renewed lease judged %+v, want certain against c", v)
	}
	// A token acquired again after its lease was released back: the
	// lookup finds the new lease, not the old one.
	l.Releasing("c", 2020)
	l.Released("c", 2030)
	l.Releasing("d", 2040)
	l.Released("d", 2050)
	if v := l.Acquired("a", 3000, 3010, 9000); v.Certain || v.Possible {
		t.Fatalf("a again, with every lease released, judged %+v", v)
	}
	l.Renewed("a", 3020, 20000)
	if v := l.Acquired("e", 10000, 10010, 30000); !v.Certain || v.Against != "a" {
		t.Errorf("acquisition inside a's second lease, renewed, judged %+v, want certain against a", v)
	}
}
