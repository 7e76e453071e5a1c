package compose

import (
	"strconv"
	"testing"
)

// TestEtcdPeersCutApart: a minority cut on five members refuses every link
// between the two sides, whichever end dialled, and keeps the links inside
// each side; a link whose dialler is unknown (no or a stranger's
// X-Server-From) is refused by every proxy whose member is cut from
// another; a second cut is refused while one is on; the undo closes every
// link, even those the cut kept, and lets new ones through. A ring keeps
// each member's links to its two neighbours only.
func TestEtcdPeersCutApart(t *testing.T) {
	ports := make([]int, 5)
	for i := range ports {
		ports[i] = echoServer(t)
	}
	p, err := startEtcdPeers(ports)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.close() })
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(p.ports()[i]) }
	from := func(i int) string { return strconv.FormatUint(uint64(100+i), 16) }
	if _, err := p.cutApart(apart(TargetMinority, 5, 1)); err == nil {
		t.Fatal("a cut accepted before the proxies know the member ids")
	}
	for i := range ports {
		p.learn(i, uint64(100+i))
	}
	// The minority holding member 1 is {1, 2}; the majority {3, 4, 0}.
	across, ok := peerDial(t, addr(3), from(2))
	inside, ok2 := peerDial(t, addr(4), from(3))
	if !ok || !ok2 {
		t.Fatal("links do not pass before the cut")
	}
	undo, err := p.cutApart(apart(TargetMinority, 5, 1))
	if err != nil {
		t.Fatal(err)
	}
	if roundTrip(across, "x") {
		t.Error("a link across the cut still carries bytes")
	}
	if !roundTrip(inside, "y") {
		t.Error("a link inside the majority was cut")
	}
	for _, tc := range []struct {
		name     string
		to       int
		from     string
		wantPass bool
	}{
		{"minority to majority", 0, from(1), false},
		{"majority to minority", 2, from(4), false},
		{"inside the minority", 2, from(1), true},
		{"inside the majority", 0, from(3), true},
		{"no X-Server-From, to the majority", 3, "", false},
		{"no X-Server-From, to the minority", 1, "", false},
		{"a stranger's X-Server-From", 4, "ff", false},
	} {
		if _, ok := peerDial(t, addr(tc.to), tc.from); ok != tc.wantPass {
			t.Errorf("%s: passes %v, want %v", tc.name, ok, tc.wantPass)
		}
	}
	if _, err := p.cutApart(apart(TargetRing, 5, 0)); err == nil {
		t.Error("a second cut accepted while one is on")
	}
	if _, err := p.isolate(0, 100); err == nil {
		t.Error("an isolate accepted while a cut is on")
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if roundTrip(inside, "z") {
		t.Error("a link that lived through the cut still carries bytes after the undo")
	}
	if _, ok := peerDial(t, addr(0), from(1)); !ok {
		t.Error("healed, a link across the old cut does not pass")
	}
	undo, err = p.cutApart(apart(TargetRing, 5, 0))
	if err != nil {
		t.Fatal(err)
	}
	for j := 1; j < 5; j++ {
		_, ok := peerDial(t, addr(j), from(0))
		if want := j == 1 || j == 4; ok != want {
			t.Errorf("ring: member 0 dials %d: passes %v, want %v", j, ok, want)
		}
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
}
