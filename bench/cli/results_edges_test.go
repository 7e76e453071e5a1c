package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// writeRuns stores n minimal results whose ids share a prefix.
func writeRuns(t *testing.T, dir string, ids ...string) {
	t.Helper()
	for i, id := range ids {
		r := &results.Result{Schema: results.Schema, ID: id, StartedAt: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC),
			Config: map[string]any{}, Ops: map[string]results.OpSummary{}, Errors: map[string]int64{}}
		if _, err := results.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResultsRoughEdges(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i := range 7 {
		ids = append(ids, fmt.Sprintf("20260101-000000-a%05x", i*4099))
	}
	writeRuns(t, dir, ids...)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ls on a missing dir", []string{"results", "ls", "--out", filepath.Join(dir, "nope")}, 0, "no runs yet"},
		{"report --out x.html", []string{"results", "report", "--out", "x.html", ids[0]}, exitBadInput, "-o x.html"},
		{"merge --out x.json", []string{"results", "merge", "--out", "x.json", ids[0], ids[1]}, exitBadInput, "-o x.json"},
		{"ambiguous prefix", []string{"results", "show", "--out", dir, "20260101"}, exitBadInput, "7 runs and groups match"},
		{"ls --tag that no run has", []string{"results", "ls", "--out", dir, "--tag", "team=x"}, 0, "with those tags"},
		{"ls --tag malformed", []string{"results", "ls", "--out", dir, "--tag", "team"}, exitBadInput, "key=value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := lockbench(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d (%s), want %d and %q", code, errs, tc.code, tc.want)
			}
			if tc.name == "ambiguous prefix" && strings.Count(errs, "run 2026") > 5 {
				t.Fatalf("lists more than five matches: %s", errs)
			}
		})
	}
	// A unique suffix names a run.
	if code, out, errs := lockbench(t, "results", "show", "--out", dir, ids[3][len(ids[3])-5:]); code != 0 || !strings.Contains(out, ids[3]) {
		t.Fatalf("show by suffix: exit %d %s", code, errs)
	}
}

func TestLabelsTagsAndResolvedConfig(t *testing.T) {
	out := t.TempDir()
	report := filepath.Join(out, "r.html")
	code, stdout, errs := lockbench(t, "run", "-d", "300ms", "--warmup", "0", "-q", "--out", out, "--format", "json",
		"--label", "baseline one", "--tag", "team=locks", "--tag", "env=ci", "--report", report, "--keys", "0")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var r results.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Label != "baseline one" || r.Tags["team"] != "locks" || r.Tags["env"] != "ci" {
		t.Fatalf("label %q tags %v", r.Label, r.Tags)
	}
	for k, want := range map[string]string{"keys": "unique", "acquire-timeout": "10s", "provider": "local"} {
		if got := fmt.Sprint(r.Config[k]); got != want {
			t.Errorf("config.%s = %q, want %q as it ran", k, got, want)
		}
	}
	for _, k := range []string{"format", "out", "quiet", "report", "label", "tag"} {
		if _, ok := r.Config[k]; ok {
			t.Errorf("config holds the output-only flag %s", k)
		}
	}
	_, version, _ := lockbench(t, "version")
	if got := "lockbench " + r.Hosts[0].Build + "\n"; got != version {
		t.Errorf("hosts[0].build %q, but lockbench version prints %q", r.Hosts[0].Build, version)
	}
	code, list, _ := lockbench(t, "results", "ls", "--out", out, "--tag", "team=locks")
	if code != 0 || !strings.Contains(list, "baseline one") {
		t.Fatalf("ls --tag team=locks: %d\n%s", code, list)
	}
	b, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(b), "</svg> baseline one</li>") {
		t.Fatalf("report legend lacks the label (%v)", err)
	}
}

// run --format csv prints every measured figure of every run under one header,
// the same long form results export writes, so a run pipes into a spreadsheet.
func TestRunFormatCSV(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := lockbench(t, "run", "-d", "300ms", "--warmup", "0", "-q", "--out", out, "--format", "csv",
		"--topology", "single", "--topology", "redlock:3")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, stdout)
	}
	if got := strings.Join(rows[0], ","); got != "id,key,metric,unit,value" {
		t.Fatalf("header %q", got)
	}
	ids := map[string]bool{}
	for _, row := range rows[1:] {
		if row[0] == "id" {
			t.Fatalf("a second header line: the runs are not one table")
		}
		ids[row[0]] = true
		if row[1] == "throughput.acquired_per_s" && row[4] == "" {
			t.Errorf("run %s: throughput without a value", row[0])
		}
	}
	if len(ids) != 2 {
		t.Fatalf("figures of %d runs, want the 2 that ran: %v", len(ids), ids)
	}
}
