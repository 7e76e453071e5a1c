package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// One short real sweep, end to end: 2×2 cells of one second.
func TestSweepEndToEnd(t *testing.T) {
	out := t.TempDir()
	code, table, errs := lockbench(t, "sweep", "--concurrency", "1,4", "--topology", "single,redlock:2", "-d", "1s", "--warmup", "0",
		"-q", "--out", out, "--assert", "incidents==0")
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	if n := strings.Count(table, "redlock:2"); n != 2 {
		t.Fatalf("want 2 redlock rows:\n%s", table)
	}
	if files, _ := os.ReadDir(out); len(files) != 4 {
		t.Fatalf("%d stored results, want one per cell (4)", len(files))
	}
}

func TestSweepFromFileAndCSV(t *testing.T) {
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte("base:\n  duration: 300ms\n  warmup: 0\naxes:\n  keys: [unique, \"1\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, csv, errs := lockbench(t, "sweep", "-f", planFile, "-q", "--out", filepath.Join(dir, "runs"), "--format", "csv")
	if code != 0 {
		t.Fatalf("sweep -f: exit %d %s", code, errs)
	}
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "keys,runs,") {
		t.Fatalf("csv:\n%s", csv)
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("base:\n  duration: 1s\nbogus: true\n"), 0o644)
	if code, _, errs := lockbench(t, "sweep", "-f", bad); code != exitBadInput || !strings.Contains(errs, "bad.yaml:3") {
		t.Fatalf("bad file: exit %d %s", code, errs)
	}
}

func TestCapacityEndToEnd(t *testing.T) {
	report := filepath.Join(t.TempDir(), "cap.html")
	code, out, errs := lockbench(t, "capacity", "--slo", "p99<1s", "--max", "4", "-d", "500ms", "--warmup", "0", "-q", "--out", t.TempDir(), "--report", report)
	if code != 0 || !strings.Contains(out, "saturation:") {
		t.Fatalf("capacity: exit %d %s\n%s", code, errs, out)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), `data-chart="capacity"`) {
		t.Fatalf("capacity report lacks the curve: %v", err)
	}
	if code, _, errs := lockbench(t, "capacity", "--slo", "p99<fast"); code != exitBadInput {
		t.Fatalf("bad slo: exit %d %s", code, errs)
	}
}

func TestTuneTTLEndToEnd(t *testing.T) {
	report := filepath.Join(t.TempDir(), "tune.html")
	code, out, errs := lockbench(t, "tune-ttl", "--hold", "uniform:100ms,300ms", "--ttls", "200ms,1s", "--renews", "0,ttl/4",
		"-c", "4", "-d", "1s", "-q", "--out", t.TempDir(), "--report", report)
	if code != 0 {
		t.Fatalf("tune-ttl: exit %d %s", code, errs)
	}
	// A one-second cell has a few dozen acquisitions: it cannot prove 1e-4,
	// and must say so rather than recommend.
	if strings.Contains(out, "RECOMMENDED") || !strings.Contains(out, "No cell is proven") || !strings.Contains(out, "more acquisitions to prove the target") {
		t.Fatalf("want no recommendation and how many acquisitions it would take:\n%s", out)
	}
	// TTL 200ms without renewal must show work outliving its lease: holds of
	// 100-300 ms, so about half of them.
	expired := ""
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 5 && strings.TrimSpace(cells[1]) == "200ms" && strings.TrimSpace(cells[2]) == "off" {
			expired = strings.TrimSpace(cells[4])
		}
	}
	if n, err := strconv.Atoi(expired); err != nil || n == 0 {
		t.Fatalf("ttl 200ms without renewal: expired %q, want some work outliving its lease:\n%s", expired, out)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), `data-chart="heatmap"`) {
		t.Fatalf("tune report lacks the heat map: %v", err)
	}
}
