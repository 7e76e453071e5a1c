package results

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWrapProse: a long line breaks at spaces within the width, each
// continuation indented, no word lost or cut; a short line is untouched.
func TestWrapProse(t *testing.T) {
	long := "run 20261205-010203-abcdef  2026-12-05T01:02:03Z  topology single (local, 1 node, redis 7.0.15)  lock single  workload=custom concurrency=16 keys=uniform:64 ttl=10s hold=1ms"
	cases := []struct {
		name, in string
		width    int
		lines    int
	}{
		{"short", "open loop: 10 requests", 120, 1},
		{"headline", long, 120, 2},
		{"narrow", long, 40, 5},
		{"one long word", strings.Repeat("x", 130), 120, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := wrapProse(c.in, c.width)
			lines := strings.Split(got, "\n")
			if len(lines) != c.lines {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), c.lines, got)
			}
			for i, l := range lines {
				if utf8.RuneCountInString(l) > c.width && strings.Contains(strings.TrimSpace(l), " ") {
					t.Errorf("line %d is %d wide: %q", i, utf8.RuneCountInString(l), l)
				}
				if i > 0 && !strings.HasPrefix(l, "  ") {
					t.Errorf("continuation %q not indented", l)
				}
			}
			if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(c.in), " ") {
				t.Errorf("words changed:\n%s\nfrom\n%s", got, c.in)
			}
		})
	}
}
