package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResultsCommands runs two groups of repeats, then every results command
// on their files.
func TestResultsCommands(t *testing.T) {
	out := t.TempDir()
	for _, extra := range [][]string{{"-c", "2"}, {"-c", "4", "--keys", "1", "--retry", "fixed:1ms"}} {
		args := append([]string{"run", "--count", "2", "-d", "300ms", "--warmup", "0", "-q", "--out", out}, extra...)
		if code, _, errs := lockbench(t, args...); code != 0 {
			t.Fatalf("run %v: exit %d %s", extra, code, errs)
		}
	}
	code, ls, errs := lockbench(t, "results", "ls", "--out", out)
	if code != 0 || strings.Count(ls, " single ") < 4 {
		t.Fatalf("ls: exit %d %s\n%s", code, errs, ls)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 4 {
		t.Fatalf("%d result files, want 4", len(entries))
	}
	first := strings.TrimSuffix(entries[0].Name(), ".json")
	second := strings.TrimSuffix(entries[1].Name(), ".json")

	if code, show, errs := lockbench(t, "results", "show", "--out", out, first); code != 0 || !strings.Contains(show, "time_to_acquire") {
		t.Fatalf("show: %d %s\n%s", code, errs, show)
	}
	for _, format := range []string{"table", "csv", "json"} {
		code, cmp, errs := lockbench(t, "results", "compare", "--out", out, "--format", format, first, second)
		if code != 0 || !strings.Contains(cmp, "acquire") {
			t.Fatalf("compare %s: %d %s\n%s", format, code, errs, cmp)
		}
	}
	hg := filepath.Join(t.TempDir(), "hgrm")
	csv := filepath.Join(t.TempDir(), "s.csv")
	if code, _, errs := lockbench(t, "results", "export", "--out", out, "--hgrm", hg, "--csv", csv, first); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	if files, _ := filepath.Glob(filepath.Join(hg, "*.hgrm")); len(files) < 3 {
		t.Fatalf("export wrote %d hgrm files", len(files))
	}
	report := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := lockbench(t, "results", "report", "--out", out, "-o", report, first, second); code != 0 {
		t.Fatalf("report: %d %s", code, errs)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("report has no SVG: %v", err)
	}
	// Local runs each had their own servers: merge must refuse, naming the field.
	if code, _, errs := lockbench(t, "results", "merge", "--out", out, first, second); code != exitBadInput || !strings.Contains(errs, "merge:") {
		t.Fatalf("merge of unrelated runs: %d %s", code, errs)
	}
	if code, _, errs := lockbench(t, "results", "show", "--out", out, "nonesuch"); code != exitBadInput || !strings.Contains(errs, "nonesuch") {
		t.Fatalf("show of a missing run: %d %s", code, errs)
	}
}

func TestRunReportAndAssert(t *testing.T) {
	out := t.TempDir()
	report := filepath.Join(out, "report.html")
	code, _, errs := lockbench(t, "run", "-d", "300ms", "--warmup", "0", "-q", "--out", out, "--report", report,
		"--assert", "incidents.overlaps==0", "--assert", "throughput>0")
	if code != 0 {
		t.Fatalf("passing asserts: exit %d %s", code, errs)
	}
	if _, err := os.Stat(report); err != nil {
		t.Fatalf("--report wrote nothing: %v", err)
	}
	code, _, errs = lockbench(t, "run", "-d", "300ms", "--warmup", "0", "-q", "--out", out, "--assert", "acquire.p99<1us")
	if code != exitAssertFailed || !strings.Contains(errs, "FAIL") {
		t.Fatalf("failing assert: exit %d, want %d; %s", code, exitAssertFailed, errs)
	}
	// A misspelt error kind is not a measured zero.
	code, _, errs = lockbench(t, "run", "-d", "300ms", "--warmup", "0", "-q", "--out", out, "--assert", "errors.bogus==0", "--assert", "errors.timeout==0")
	if code != exitAssertFailed || !strings.Contains(errs, "error kind bogus was never seen") || strings.Count(errs, "FAIL") != 1 {
		t.Fatalf("errors.bogus==0: exit %d, want %d failing only it; %s", code, exitAssertFailed, errs)
	}
	if code, _, errs := lockbench(t, "run", "--assert", "latency<1ms"); code != exitBadInput || !strings.Contains(errs, "--assert") {
		t.Fatalf("bad assert: exit %d %s", code, errs)
	}
}
