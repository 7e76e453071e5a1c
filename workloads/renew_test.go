package workloads

import (
	"strings"
	"testing"
	"time"
)

func TestParseRenewEvery(t *testing.T) {
	const ttl = 2 * time.Second
	good := []struct {
		spec string
		ttl  time.Duration
		want time.Duration
	}{
		{"", ttl, 0},
		{"0", ttl, 0},
		{"0s", ttl, 0},
		{"off", ttl, 0},
		{"OFF", ttl, 0},
		{"off", 0, 0},
		{"500ms", ttl, 500 * time.Millisecond},
		{" 1999ms ", ttl, 1999 * time.Millisecond},
		{"ttl/3", ttl, ttl / 3},
		{"TTL/2", ttl, time.Second},
		{"ttl / 4", ttl, 500 * time.Millisecond},
		{"ttl/1000", ttl, 2 * time.Millisecond},
	}
	for _, tc := range good {
		got, err := ParseRenewEvery(tc.spec, tc.ttl)
		if err != nil || got != tc.want {
			t.Errorf("ParseRenewEvery(%q, %v) = %v, %v; want %v", tc.spec, tc.ttl, got, err, tc.want)
		}
	}

	bad := []struct {
		spec string
		ttl  time.Duration
		why  string
	}{
		{"2s", ttl, "2s is not shorter than --ttl 2s"},
		{"3s", ttl, "not shorter"},
		{"1ms", 0, "not shorter"},
		{"-1s", ttl, "negative"},
		{"soon", ttl, "not a duration"},
		{"ttl", ttl, "not a duration"},
		{"ttl/1", ttl, "N must be an integer >= 2"},
		{"ttl/0", ttl, "N must be an integer >= 2"},
		{"ttl/-3", ttl, "N must be an integer >= 2"},
		{"ttl/2.5", ttl, "N must be an integer >= 2"},
		{"ttl/", ttl, "N must be an integer >= 2"},
		{"ttl/3", 0, "needs a positive --ttl"},
		{"ttl/3", 2, "rounds to zero"},
		{"half/2", ttl, "not a duration"},
	}
	for _, tc := range bad {
		_, err := ParseRenewEvery(tc.spec, tc.ttl)
		if err == nil {
			t.Errorf("ParseRenewEvery(%q, %v) succeeded, want error containing %q", tc.spec, tc.ttl, tc.why)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.why) || !strings.HasPrefix(msg, "--renew-every ") || !strings.HasSuffix(msg, RenewHelp) {
			t.Errorf("ParseRenewEvery(%q, %v) error = %q, want --renew-every, %q and the accepted forms", tc.spec, tc.ttl, msg, tc.why)
		}
	}
}

func FuzzParseRenewEvery(f *testing.F) {
	for _, s := range []string{"", "off", "0", "500ms", "ttl/3", "ttl/2", "ttl/1", "2s", "1h", "ttl/99999999999"} {
		f.Add(s, int64(2*time.Second))
	}
	f.Add("ttl/3", int64(0))
	f.Add("1ns", int64(-1))
	f.Fuzz(func(t *testing.T, spec string, ttlNs int64) {
		ttl := time.Duration(ttlNs)
		d, err := ParseRenewEvery(spec, ttl)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if d < 0 || (d > 0 && d >= ttl) {
			t.Fatalf("ParseRenewEvery(%q, %v) = %v, want 0 or 0 < d < ttl", spec, ttl, d)
		}
		again, err := ParseRenewEvery(d.String(), ttl)
		if err != nil || again.String() != d.String() {
			t.Fatalf("round trip %q -> %v -> %v, %v", spec, d, again, err)
		}
	})
}
