package plan

import (
	"runtime"
	"strings"
	"testing"
)

func TestParseHostTimes(t *testing.T) {
	for _, tc := range []struct {
		line        string
		busy, total uint64
		err         string
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 5 50 800 20 3 2 0 7 0\n", 160, 980, ""},
		{"cpu 1 2 3 4\n", 6, 10, ""},
		{"cpu0 1 2 3 4 5\n", 0, 0, "unexpected first line"},
		{"cpu 1 2\n", 0, 0, "unexpected first line"},
		{"cpu 1 x 3 4 5\n", 0, 0, `field 2 "x"`},
		{"", 0, 0, "unexpected first line"},
	} {
		got, err := parseHostTimes(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseHostTimes(%q) = %+v, %v; want an error with %q", tc.line, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.busy != tc.busy || got.total != tc.total {
			t.Errorf("parseHostTimes(%q) = %+v, %v; want busy %d of %d", tc.line, got, err, tc.busy, tc.total)
		}
	}
}

func TestHostShare(t *testing.T) {
	if v := hostShare(hostTimes{busy: 10, total: 100}, hostTimes{busy: 60, total: 200}); v == nil || *v != 0.5 {
		t.Fatalf("share %v, want 0.5", v)
	}
	for _, to := range []hostTimes{{busy: 10, total: 100}, {busy: 5, total: 200}} {
		if v := hostShare(hostTimes{busy: 10, total: 100}, to); v != nil {
			t.Errorf("share to %+v = %v, want absent (no time passed, or a counter went back)", to, *v)
		}
	}
	if runtime.GOOS == "linux" {
		if ht, err := readHostTimes(); err != nil || ht.total == 0 || ht.busy > ht.total {
			t.Fatalf("readHostTimes() = %+v, %v", ht, err)
		}
	}
}
