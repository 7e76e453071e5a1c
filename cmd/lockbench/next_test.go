package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

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
