package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFailoverMapBadAxes: every bad axis is refused in one line naming its
// flag, exit 2, before any server starts.
func TestFailoverMapBadAxes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"failover-map", "--lag", "0,abc"}, `--lag: "0,abc": "abc" is not a duration`},
		{[]string{"failover-map", "--lag", "10s"}, "--lag"},
		{[]string{"failover-map", "--hold", "0"}, "--hold"},
		{[]string{"failover-map", "--hold", "1s,1s"}, "given twice"},
		{[]string{"failover-map", "--mitigation", "wiat"}, "did you mean wait?"},
		{[]string{"failover-map", "--topology", "single"}, "no replica to promote"},
		{[]string{"failover-map", "--topology", "cluster:3,0"}, "--topology"},
		{[]string{"failover-map", "--lock", "redlock"}, "--lock"},
		{[]string{"failover-map", "--lock", "naive"}, "--lock"},
		{[]string{"failover-map", "--failovers", "0"}, "--failovers"},
		{[]string{"failover-map", "--budget", "1s"}, "--budget"},
		{[]string{"failover-map", "--wait-timeout", "0s"}, "--wait-timeout"},
		{[]string{"failover-map", "--format", "csv"}, "--format"},
		{[]string{"failover-map", "--plan-only", "--resume"}, "--resume"},
		{[]string{"failover-map", "extra"}, "takes no arguments"},
	} {
		code, _, errs := lockbench(t, tc.args...)
		if code != exitBadInput || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q", tc.args, code, errs, tc.says)
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(errs)); n > helpWidth {
			t.Errorf("%q: its error is %d columns, over %d: %q", tc.args, n, helpWidth, errs)
		}
	}
}

// TestFailoverMapPlanOnly: the plan names every panel, the ones not
// measured with why, and the estimate against the budget, within 120
// columns; its JSON carries the cells.
func TestFailoverMapPlanOnly(t *testing.T) {
	code, out, errs := lockbench(t, "failover-map", "--plan-only", "--lock", "single,redislock", "--mitigation", "none,wait,waitaof",
		"--lag", "0,500ms", "--hold", "1s", "--failovers", "4", "--budget", "10m")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"6 cells × 4 failovers", "single / wait: measured", "redislock / wait: not available",
		"WAITAOF", "of budget 10m0s"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > helpWidth {
			t.Errorf("plan line of %d columns: %q", n, line)
		}
	}
	code, out, errs = lockbench(t, "failover-map", "--plan-only", "--lock", "single", "--mitigation", "none", "--lag", "0",
		"--hold", "1s", "--budget", "10m", "--format", "json")
	var p struct {
		Cells []struct{ Lock string } `json:"cells"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &p) != nil || len(p.Cells) != 1 {
		t.Fatalf("exit %d, %s; JSON %q", code, errs, out)
	}
}
