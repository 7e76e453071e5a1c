package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestAdviseBadInput: each bad input is one line naming the flag, exit 2,
// before anything starts.
func TestAdviseBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--candidate", "fenced@nowhere"}, "--candidate"},
		{[]string{"--candidate", "nope@single"}, "--candidate: nope@single"},
		{[]string{"--candidate", "single@postgres"}, "--candidate: single@postgres"},
		{[]string{"--candidate", "single", "--candidate", "single"}, "given twice"},
		{[]string{"--budget", "1s"}, "--budget"},
		{[]string{"--budget", "soon"}, "--budget"},
		{[]string{"--correctness", "loose"}, "--correctness"},
		{[]string{"--max-incident-rate", "0"}, "--max-incident-rate"},
		{[]string{"--slo", "p99<<3"}, "--slo"},
		{[]string{"--slo", "incidents==0"}, "--slo"},
		{[]string{"--rate", "100,2000:30s"}, "--rate"},
		{[]string{"--hold", "forever"}, "--hold"},
		{[]string{"--ttl", "1s"}, "advise decides it itself"},
		{[]string{"--plan-only", "--resume"}, "--resume"},
		{[]string{"--plan-only", "--report", "x.html"}, "--report"},
		{[]string{"--format", "csv"}, "--format"},
		{[]string{"--redis", "redis://127.0.0.1:1", "--redis", "redis://127.0.0.1:2"}, "--redis"},
	} {
		var out, errOut strings.Builder
		code := run(context.Background(), append([]string{"lockbench", "advise", "--out", t.TempDir()}, tc.args...), &out, &errOut)
		msg := strings.TrimSpace(errOut.String())
		if code != exitBadInput || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
}

func TestAdvisePlanOnly(t *testing.T) {
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"lockbench", "advise", "--plan-only", "--candidate", "fenced", "--candidate", "redlock@redlock:3", "--budget", "1m"}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"advise plan:", "ttl 100ms renew off", "demand fenced@single", "fault redlock@redlock:3", "total: about"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAdviseRunsAndResumes runs the real command with a tiny budget on real
// servers, then again with --resume: the second run measures nothing and
// gives the same advice from the stored results.
func TestAdviseRunsAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	dir := t.TempDir()
	args := []string{"lockbench", "advise", "--budget", "10s", "--candidate", "single", "--hold", "1ms", "-c", "4",
		"--max-incident-rate", "1e-2", "--slo", "p99<2s", "--out", dir, "-q"}
	var first, errOut strings.Builder
	if code := run(context.Background(), args, &first, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"1. Which lock and topology?", "Run `single` on single", "measured"} {
		if !strings.Contains(first.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, first.String())
		}
	}
	var second strings.Builder
	if code := run(context.Background(), append(args, "--resume"), &second, &errOut); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, errOut.String())
	}
	// What the first run measured is reused; what it skipped (on a loaded
	// machine the budget may not reach the last experiment: "give a longer
	// --budget, or --resume to add it") may be measured now.
	firstStatus, secondStatus := experimentStatuses(first.String()), experimentStatuses(second.String())
	if len(firstStatus) == 0 || len(secondStatus) != len(firstStatus) {
		t.Fatalf("experiments %v, then %v: want the same ones listed", firstStatus, secondStatus)
	}
	for name, st := range firstStatus {
		if st == "measured" && secondStatus[name] != "reused" {
			t.Errorf("resume: %s %s, want it reused:\n%s", name, secondStatus[name], second.String())
		}
	}
}

// experimentStatuses reads the status of each experiment from a page's
// experiments table (| # | experiment | status | run | window | wall |).
func experimentStatuses(page string) map[string]string {
	out := map[string]string{}
	row := regexp.MustCompile(`^\|\s*\d+\s*\|\s*(.*?)\s*\|\s*(measured|reused|skipped|failed|interrupted)\s*\|`)
	for _, line := range strings.Split(page, "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[2]
		}
	}
	return out
}
