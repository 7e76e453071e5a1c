package sweep

import (
	"strings"
	"testing"
)

func TestJoinLockSpecs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"single@cluster:3|0", "single@cluster:3,0"},
		{"fenced@cluster:4|2|single", "fenced@cluster:4,2 single"},
		{"single@cluster:3,1|2", "single@cluster:3,1 2"},
		{"redlock@redlock:3|1", "redlock@redlock:3 1"},
		{"single|0", "single 0"},
	} {
		got := strings.Join(JoinLockSpecs(strings.Split(tc.in, "|")), " ")
		if got != tc.want {
			t.Errorf("JoinLockSpecs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, s := range JoinLockSpecs([]string{"single@cluster:3", "0"}) {
		if _, err := ParseLockSpec(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}
