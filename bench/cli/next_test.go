package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/results"
)

// nextBlock is the next step that ends s: its last line, or from its last
// "next: " line on where the commands did not fit one line (writeNext puts
// each on a line of its own, "  or: " before the second).
func nextBlock(s string) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "next: ") {
			return strings.Join(lines[i:], "\n")
		}
		if !strings.HasPrefix(lines[i], "  or: ") {
			break
		}
	}
	return lines[len(lines)-1]
}

// Every command that stores something ends with the commands that show
// it: a sweep (runs stored through the cell runner, which capacity,
// tune-ttl, lock-cost, scenario and advise share) and results collect; a
// command that stores nothing ends without one.
func TestStoringCommandsEndWithNextStep(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := lockbench(t, "sweep", "--concurrency", "1,2", "-d", "300ms", "--warmup", "0", "--keys", "unique", "--out", dir)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	rs, skipped, err := results.List(dir)
	if err != nil || len(skipped) > 0 || len(rs) != 2 {
		t.Fatalf("sweep stored %d results (%v %v), want 2", len(rs), err, skipped)
	}
	want := "next: lockbench results compare --out " + dir + " "
	if got := nextBlock(errs); !strings.HasPrefix(got, want) || !strings.Contains(got, "results report --out "+dir) {
		t.Errorf("sweep ends with %q, want %q… and the report", got, want)
	}

	// Two generators' results printed to logs, collected.
	var logs bytes.Buffer
	for _, r := range rs {
		if err := job.WriteMarked(&logs, r); err != nil {
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(t.TempDir(), "pods.log")
	if err := os.WriteFile(logFile, logs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	collected := t.TempDir()
	code, _, errs = lockbench(t, "results", "collect", "--logs", logFile, "--out", collected)
	if code != 0 || !strings.HasPrefix(nextBlock(errs), "next: lockbench results compare --out "+collected) {
		t.Errorf("collect: exit %d, stderr %q: want it to end with the next step", code, errs)
	}

	code, _, errs = lockbench(t, "results", "ls", "--out", dir)
	if code != 0 || strings.Contains(errs, "next:") {
		t.Errorf("results ls: exit %d, stderr %q: stores nothing, so no next step", code, errs)
	}
}

// TestRunAndExportSayWhatNext: after a run and after an export, stderr says
// where the files went and the commands a user usually runs next, and those
// commands work as printed.
func TestRunAndExportSayWhatNext(t *testing.T) {
	out := t.TempDir()
	code, _, errs := lockbench(t, "run", "-d", "1s", "--warmup", "0", "-c", "2", "--out", out)
	if code != exitOK {
		t.Fatalf("run: exit %d, %s", code, errs)
	}
	m := regexp.MustCompile(`result stored in (\S+)/(\S+)\.json\n`).FindStringSubmatch(errs)
	if m == nil || m[1] != out {
		t.Fatalf("run does not say where its result went: %q", errs)
	}
	id := m[2]
	var want strings.Builder
	writeNext(&want, "lockbench results show --out "+out+" "+id, "lockbench results report --out "+out+" -o report.html "+id)
	if !strings.HasSuffix(errs, want.String()) {
		t.Fatalf("run's last line is not what next:\n%s\nwant %q", errs, want.String())
	}
	if code, stdout, errs := lockbench(t, strings.Fields("results show --out "+out+" "+id)...); code != exitOK || !strings.Contains(stdout, "acquire") {
		t.Errorf("the suggested results show fails: exit %d, %s", code, errs)
	}
	dir := t.TempDir()
	csv := filepath.Join(dir, "s.csv")
	code, stdout, errs := lockbench(t, "results", "export", "--out", out, "--hgrm", filepath.Join(dir, "hgrm"), "--csv", csv, id)
	if code != exitOK {
		t.Fatalf("export: exit %d, %s", code, errs)
	}
	if !strings.Contains(stdout, csv+"\n") || !strings.Contains(stdout, ".acquire.hgrm\n") {
		t.Errorf("export does not list the files it wrote on stdout: %q", stdout)
	}
	for _, want := range []string{"exported " + id + ": ", ".hgrm files", "in " + filepath.Join(dir, "hgrm"), csv + " (every figure", "next: ", "lockbench results report --out " + out + " -o report.html " + id} {
		if !strings.Contains(errs, want) {
			t.Errorf("export's stderr lacks %q: %q", want, errs)
		}
	}
}
