package compose

import (
	"strings"
	"testing"
)

// The trial image carries redis-server only: a run of another server, or
// with a fault that needs the clock shim's C compiler, does not fit, and
// says so; every Redis kind with its other faults fits.
func TestTrialImageMisfit(t *testing.T) {
	for _, tc := range []struct {
		topology string
		faults   []string
		want     string
	}{
		{"", nil, ""},
		{"single", []string{"at=1s pause node=0 for=300ms"}, ""},
		{"replicated", []string{"at=0s lag-replica for=2500ms", "at=2300ms kill primary"}, ""},
		{"redlock:5", []string{"at=0s latency node=0 300ms for=1h"}, ""},
		{"cluster:3", nil, ""},
		{"etcd:3", nil, "etcd, topology etcd:3"},
		{"postgres", nil, "postgres, topology postgres"},
		{"zookeeper:3", nil, "not in the trial image"},
		{"nats:3", nil, "not in the trial image"},
		{"redlock:5", []string{"at=1s clock-jump node=0 +9s"}, "C compiler"},
		{"nonsense:9", nil, ""}, // left to the run's own refusal
	} {
		got := TrialImageMisfit(tc.topology, tc.faults)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("TrialImageMisfit(%q, %q) = %q, want %q", tc.topology, tc.faults, got, tc.want)
		}
	}
}
