package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRenewalCheckBadInput: every refusal is one line naming the flag,
// exit 2, before anything starts.
func TestRenewalCheckBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"renewal-check", "--cases", "gc-pause"}, "--cases"},
		{[]string{"renewal-check", "--cases", "proces-paused"}, "did you mean process-paused?"},
		{[]string{"renewal-check", "--locks", "single,naive"}, "--locks"},
		{[]string{"renewal-check", "--trials", "0"}, "--trials"},
		{[]string{"renewal-check", "--trials", "31"}, "--trials"},
		{[]string{"renewal-check", "--format", "csv"}, "--format"},
		{[]string{"renewal-check", "--html", "/nonexistent/dir/page.html"}, "--html"},
		{[]string{"renewal-check", "extra"}, "takes no arguments"},
		{[]string{"renewal-check", "--cases", "process-paused", "--budget", "5s"}, "too short for one trial"},
		{[]string{"renewal-check", "--budget", "soon"}, "--budget"},
		{[]string{"renewal-check", "--safety-level", "1"}, "--safety-level"},
		{[]string{"renewal-check", "--safety-level", "0"}, "--safety-level"},
		{[]string{"renewal-check", "--resume", "--out", shortEmptyDir(t)}, "--resume: no stored runs"},
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

// TestRenewalCheckOneCell runs one cell end to end: the JSON names it with
// its stored run, and the page links to the run's result and history.
func TestRenewalCheckOneCell(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis for a few seconds; run without -short")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "renewal.html")
	code, out, errs := lockbench(t, "renewal-check", "--cases", "process-paused", "--locks", "single", "--trials", "1", "--budget", "0",
		"--out", dir, "--html", page, "--format", "json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Cells [][]struct {
			Case, Lock, Verdict string
			Runs                []struct{ ID, History string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(doc.Cells) != 1 || len(doc.Cells[0]) != 1 || len(doc.Cells[0][0].Runs) != 1 {
		t.Fatalf("want one cell with one run, got %+v", doc.Cells)
	}
	run := doc.Cells[0][0].Runs[0]
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="` + run.ID + `.json"`, `href="` + filepath.Base(run.History) + `"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if _, err := os.Stat(run.History); err != nil {
		t.Errorf("history: %v", err)
	}
}

// shortEmptyDir is an empty directory whose path is short enough for a
// one-line error to name it within the help's width.
func shortEmptyDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// TestRenewalCheckSelfExtending: rueidislock's and valkeylock's columns
// are measured where a case has a self-extending form (restart-empty, on
// a real redis-server restarted empty) and n/a with why elsewhere; never
// absent.
func TestRenewalCheckSelfExtending(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis for a few seconds; run without -short")
	}
	code, out, errs := lockbench(t, "renewal-check", "--cases", "restart-empty,process-paused", "--locks", "rueidislock,valkeylock",
		"--trials", "3", "--budget", "0", "--out", t.TempDir(), "--format", "json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Cells [][]struct{ Case, Lock, Verdict, Why string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	seen := 0
	for _, row := range doc.Cells {
		for _, c := range row {
			seen++
			switch c.Case {
			case "restart-empty":
				if c.Verdict == "absent" || c.Verdict == "n/a" || c.Verdict == "not measured" {
					t.Errorf("restart-empty on %s: %s; want a measured word", c.Lock, c.Verdict)
				}
			default:
				if c.Verdict != "n/a" {
					t.Errorf("%s on %s: %s; want n/a", c.Case, c.Lock, c.Verdict)
				}
			}
		}
	}
	if seen != 4 {
		t.Errorf("%d cells, want 4:\n%s", seen, out)
	}
}
