package compose

import (
	"strings"
	"testing"
)

// TestIsolateGroupsApart: minority cuts the leader's side (the fewer) from
// the rest, ring leaves each member a majority of its own, and both are
// refused where they do not fit.
func TestIsolateGroupsApart(t *testing.T) {
	reach := func(cut func(i, j int) bool, n, i int) int {
		r := 1
		for j := range n {
			if j != i && !cut(i, j) {
				r++
			}
		}
		return r
	}
	for _, n := range []int{3, 5, 7} {
		cut := apart(TargetMinority, n, 1)
		side := 0
		for i := range n {
			if !cut(1, i) {
				side++
			}
		}
		if side != (n-1)/2 {
			t.Errorf("minority of %d: the leader's side has %d members, want %d", n, side, (n-1)/2)
		}
	}
	for _, n := range []int{4, 5, 7, 9} {
		cut := apart(TargetRing, n, 0)
		views := map[string]bool{}
		for i := range n {
			if r := reach(cut, n, i); r <= n/2 || r == n {
				t.Errorf("ring of %d: member %d reaches %d, want a majority short of all", n, i, r)
			}
			var v []string
			for j := range n {
				if j == i || !cut(i, j) {
					v = append(v, string(rune('0'+j)))
				}
			}
			views[strings.Join(v, "")] = true
		}
		if len(views) != n {
			t.Errorf("ring of %d: %d distinct majorities, want one a member", n, len(views))
		}
	}
	for _, tc := range []struct{ spec, topo, says string }{
		{"at=1s isolate ring for=1s", "zookeeper:3", "at least 4 members"},
		{"at=1s isolate ring for=1s", "nats:3", "has no ring"},
		{"at=1s isolate minority for=1s", "replicated", "has no minority"},
		{"at=1s isolate ring for=1s", "etcd:3", "at least 4 members"},
		{"at=1s isolate minority for=1s", "etcd:1", "at least 3 members"},
		{"at=1s isolate minority for=1s", "zookeeper:1", "at least 3 members"},
		{"at=1s pause minority for=1s", "zookeeper:5", "only isolate cuts apart"},
	} {
		f, err := ParseFault(tc.spec)
		if err == nil {
			s, _ := ParseSpec(tc.topo)
			err = FitFault(f, s, ProviderLocal)
		}
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s on %s: %v, want %q", tc.spec, tc.topo, err, tc.says)
		}
	}
	for _, topo := range []string{"zookeeper:5", "etcd:5", "etcd:3"} {
		for _, spec := range []string{"at=1s isolate ring for=1s", "at=1s isolate minority for=2s"} {
			if topo == "etcd:3" && strings.Contains(spec, "ring") {
				continue
			}
			f, _ := ParseFault(spec)
			s, _ := ParseSpec(topo)
			if err := FitFault(f, s, ProviderLocal); err != nil {
				t.Errorf("%s on %s: %v", spec, topo, err)
			}
			if f.String() != spec {
				t.Errorf("%q reads back as %q", spec, f.String())
			}
		}
	}
}
