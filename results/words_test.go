package results

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		noun string
		want string
	}{
		{1, "critical section", "1 critical section"},
		{0, "critical section", "0 critical sections"},
		{2, "critical section", "2 critical sections"},
		{1, "critical section was|critical sections were", "1 critical section was"},
		{3, "critical section was|critical sections were", "3 critical sections were"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestSummarySaysOneCriticalSection(t *testing.T) {
	r := fixture(t, "one", fixtureOpts{})
	r.Counters.Unfinished = 1
	var b strings.Builder
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 critical section of the window was cut off unfinished") {
		t.Errorf("summary:\n%s", b.String())
	}
}
