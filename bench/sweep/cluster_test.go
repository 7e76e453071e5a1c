package sweep

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

// TestJoinLockSpecs: lock-cost's --lock NAME@cluster:M,R survives the
// command line's comma split.
func TestJoinLockSpecs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"single@cluster:3|0", "single@cluster:3,0"},
		{"fenced@cluster:4|2|single", "fenced@cluster:4,2 single"},
		{"single@cluster:3,1|2", "single@cluster:3,1 2"},
		{"redlock@redlock:3|1", "redlock@redlock:3 1"},
		{"single|0", "single 0"},
	} {
		got := strings.Join(compose.JoinClusterPieces(strings.Split(tc.in, "|")), " ")
		if got != tc.want {
			t.Errorf("JoinClusterPieces(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, s := range compose.JoinClusterPieces([]string{"single@cluster:3", "0"}) {
		if _, err := ParseLockSpec(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}
