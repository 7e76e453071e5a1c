package compose

import (
	"os"
	"slices"
	"testing"
)

func TestStatFields(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  []string
		named bool
	}{
		{"42 (redis-server) S 1 42", []string{"S", "1", "42"}, true},
		// A command name holding spaces and parentheses: the fields start
		// after the last ')'.
		{"42 (a) T (b) Z 7 8", []string{"Z", "7", "8"}, true},
		{"42 (x)", nil, true},
		{"42 x S 1", nil, false},
		{"", nil, false},
	} {
		got, named := statFields(c.in)
		if named != c.named || !slices.Equal(got, c.want) {
			t.Errorf("statFields(%q) = %q, %v: want %q, %v", c.in, got, named, c.want, c.named)
		}
	}
}

// This test's own process runs; a pid no process has is not readable.
func TestProcessState(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	if st, ok := ProcessState(os.Getpid()); !ok || (st != "R" && st != "S") {
		t.Errorf("ProcessState(own pid) = %q, %v: want running or sleeping", st, ok)
	}
	if st, ok := ProcessState(-1); ok {
		t.Errorf("ProcessState(-1) = %q, readable", st)
	}
	if !alive(os.Getpid()) || parentOf(os.Getpid()) != os.Getppid() {
		t.Errorf("alive(own pid) %v, parentOf %d: want alive, parent %d", alive(os.Getpid()), parentOf(os.Getpid()), os.Getppid())
	}
}
