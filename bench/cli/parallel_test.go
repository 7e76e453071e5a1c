package cli

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestParallelBadInput: --parallel below 1, or past what the machine fits
// (a core a trial), is one line and exit 2 in every command that takes it,
// before anything starts.
func TestParallelBadInput(t *testing.T) {
	tooMany := fmt.Sprint(runtime.NumCPU() + 1)
	for _, cmd := range [][]string{
		{"scenario", "naive-release"},
		{"renewal-check"},
		{"failover-map", "--plan-only"},
	} {
		for _, tc := range []struct {
			n    string
			says string
		}{
			{"0", "--parallel 0: want a whole number of trials at once from 1 to"},
			{"-2", "--parallel -2: want"},
			{tooMany, fmt.Sprintf("this machine has %d; want 1 to", runtime.NumCPU())},
		} {
			args := append(append([]string(nil), cmd...), "--parallel", tc.n, "--out", t.TempDir())
			code, _, errs := lockbench(t, args...)
			if code != exitBadInput || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q", args, code, errs, tc.says)
			}
		}
	}
}

// TestFailoverMapPlanParallel: the plan says its failovers run side by
// side, and fits them to the budget so.
func TestFailoverMapPlanParallel(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two cores for --parallel 2")
	}
	code, out, errs := lockbench(t, "failover-map", "--plan-only", "--parallel", "2", "--out", t.TempDir())
	if code != 0 || !strings.Contains(out, "2 failovers at once, each on its own servers") {
		t.Errorf("exit %d, %q, %q; want the plan to say 2 failovers at once", code, out, errs)
	}
}
