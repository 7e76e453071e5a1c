package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/results"
)

// renewal-check --engine k8s prints an Indexed Job that decodes strictly
// into Kubernetes' types, one index per planned run and --parallel pods at
// once: process-paused (a trial per lease lost, three a run) and
// renewal-failing (three firings a run) at six trials are two runs a cell,
// on two locks, eight; renew-after-unlock is a probe, which calls the lock
// from the process that gives the matrix, so it has no index. Each pod's
// command is the matrix's cases, locks and trials, stored in the pod, its
// index from the completion index.
func TestRenewalCheckK8sJob(t *testing.T) {
	j := k8sTrialJob(t, "renewal-check", "--cases", "process-paused,renew-after-unlock,renewal-failing", "--locks", "single,fenced",
		"--trials", "6", "--parallel", "3", "--engine", "k8s", "--engine-image", testJobImage)
	if *j.Completions != 8 || *j.Parallelism != 3 {
		t.Fatalf("job %+v: want 8 indexes (2 cases × 2 locks × 2 runs; the probe none), 3 at once", j)
	}
	want := "renewal-check --cases process-paused,renew-after-unlock,renewal-failing --locks single,fenced --trials 6 --out " +
		job.ResultsDir + " -q --trial-index $(JOB_COMPLETION_INDEX)"
	if got := podArgs(j); got != want {
		t.Errorf("pod args %q: want %q", got, want)
	}
	// The defaults are written out: the pod's lockbench is the image's.
	j = k8sTrialJob(t, "renewal-check", "--locks", "single", "--engine", "k8s")
	if got := podArgs(j); !strings.HasPrefix(got, "renewal-check --cases all --locks single --trials 3 ") {
		t.Errorf("pod args %q: want --cases all and --trials 3 written out", got)
	}
}

// Flags a job or a pod cannot honour are refused in one line, exit 2,
// before anything runs.
func TestRenewalCheckK8sRefusals(t *testing.T) {
	one := []string{"renewal-check", "--cases", "process-paused", "--locks", "single", "--trials", "3"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"budget on k8s":        {append(one, "--engine", "k8s", "--budget", "10m"), "--budget with --engine k8s"},
		"resume on k8s":        {append(one, "--engine", "k8s", "--resume"), "--resume with --engine k8s"},
		"no pods at once":      {append(one, "--engine", "k8s", "--parallel", "0"), "--parallel 0"},
		"html on k8s":          {append(one, "--engine", "k8s", "--html", "m.html"), "--html with --engine k8s"},
		"bad level on k8s":     {append(one, "--engine", "k8s", "--safety-level", "2"), "--safety-level"},
		"etcd on k8s":          {[]string{"renewal-check", "--engine", "k8s", "--locks", "etcd"}, "renewal-check --engine k8s: starved-renewer on etcd"},
		"all locks on k8s":     {[]string{"renewal-check", "--engine", "k8s"}, "choose --locks among single,fenced,"},
		"probes only on k8s":   {[]string{"renewal-check", "--engine", "k8s", "--cases", "adds-or-resets", "--locks", "single"}, "no run to put in a job"},
		"index past the plan":  {append(one, "--trial-index", "1"), "--trial-index 1: want 0 to 0"},
		"negative index":       {append(one, "--trial-index", "-1"), "--trial-index -1"},
		"index with an engine": {append(one, "--trial-index", "0", "--engine", "local"), "--engine does not apply"},
		"index with resume":    {append(one, "--trial-index", "0", "--resume"), "--resume does not apply"},
		"index with a budget":  {append(one, "--trial-index", "0", "--budget", "1m"), "--budget does not apply"},
		"index on k8s":         {append(one, "--trial-index", "0", "--engine", "k8s"), "--engine does not apply"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := lockbench(t, tc.args...)
			if code != exitBadInput || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 || out != "" {
				t.Fatalf("%q: exit %d, stdout %q, stderr %q: want exit 2 and one line naming %q", tc.args, code, out, errs, tc.want)
			}
		})
	}
}

// The pods of renewal-check --engine k8s, run here: each index runs the
// planned run the local matrix would run at that place and prints its
// result and its history; results collect (the logs as kubectl gives
// them, one pod's with --prefix) stores both in --out, the result naming
// its history there; and --resume folds them into the matrix, running
// none again, with the probe run at resume from this process.
//
// From first principles: process-paused pauses the whole holder past its
// TTL before it writes, and nothing fences single: a holder writes after
// losing its lease, a word of harm (overran) with its runs the collected
// ones, their histories read, lockbench check agreeing. renew-after-unlock
// is a probe: its three trials come from the resume, no run behind them.
func TestRenewalTrialIndexMergesAsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis for a few seconds; run without -short")
	}
	matrix := []string{"renewal-check", "--cases", "process-paused,renew-after-unlock", "--locks", "single,fenced", "--trials", "3"}
	var logs strings.Builder
	var pods []string
	for k := range 2 {
		// A pod's own store; its result and history reach the host
		// through its log.
		code, out, errs := lockbench(t, append(matrix, "--out", t.TempDir(), "-q", "--trial-index", strconv.Itoa(k))...)
		if code != 0 {
			t.Fatalf("index %d: exit %d, stderr %q", k, code, errs)
		}
		pods = append(pods, out)
		if k == 1 {
			out = prefixLines("[pod/lockbench-renewal-check-1-x/trial] ", out)
		}
		logs.WriteString(out)
	}
	if code, _, errs := lockbench(t, append(matrix, "--out", t.TempDir(), "-q", "--trial-index", "2")...); code != exitBadInput ||
		!strings.Contains(errs, "--trial-index 2: want 0 to 1") {
		t.Errorf("index 2 of 2 planned runs: exit %d, %q: want exit 2 naming the range", code, errs)
	}

	dir := t.TempDir()
	logFile := filepath.Join(dir, "pods.log")
	if err := os.WriteFile(logFile, []byte(logs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "runs")
	code, out, errs := lockbench(t, "results", "collect", "--logs", logFile, "--out", store)
	if code != 0 {
		t.Fatalf("results collect: exit %d, stderr %q", code, errs)
	}
	collected, _, err := results.List(store)
	if err != nil || len(collected) != 2 {
		t.Fatalf("collect stored %d results (%v), want 2:\n%s", len(collected), err, out)
	}
	ids := map[string]bool{}
	for _, r := range collected {
		ids[r.ID] = true
		want := filepath.Join(store, r.ID+".history.jsonl.gz")
		if st, err := os.Stat(want); r.History != want || err != nil || st.Size() == 0 {
			t.Errorf("run %s: history %q (%v): want the file %s, collected", r.ID, r.History, err, want)
		}
		if !strings.HasPrefix(r.Label, "renewal-check / process-paused / ") {
			t.Errorf("run %s: label %q: want the planned run's", r.ID, r.Label)
		}
	}

	before, _ := os.ReadDir(store)
	code, out, errs = lockbench(t, append(matrix, "--resume", "--budget", "0", "--out", store, "--format", "json", "-q")...)
	if code != 0 {
		t.Fatalf("--resume: exit %d, stderr %q", code, errs)
	}
	if after, _ := os.ReadDir(store); len(after) != len(before) {
		t.Errorf("%d files in --out before --resume, %d after: want no run again", len(before), len(after))
	}
	var doc struct {
		Cells [][]struct {
			Case, Lock, Verdict, Check string
			Decision                   struct{ Class string }
			Runs                       []struct{ ID, History string }
			Trials                     []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(doc.Cells) != 2 || len(doc.Cells[0]) != 2 {
		t.Fatalf("cells %+v: want 2 cases × 2 locks", doc.Cells)
	}
	for _, cell := range doc.Cells[0] {
		if len(cell.Runs) != 1 || !ids[cell.Runs[0].ID] || cell.Runs[0].History != filepath.Join(store, cell.Runs[0].ID+".history.jsonl.gz") {
			t.Errorf("process-paused on %s: runs %+v: want one, a collected one with its collected history", cell.Lock, cell.Runs)
		}
		if cell.Check != "agrees" {
			t.Errorf("process-paused on %s: check %q, want agrees", cell.Lock, cell.Check)
		}
	}
	if single := doc.Cells[0][0]; single.Verdict != "overran" || single.Decision.Class != "harm" {
		t.Errorf("process-paused on single: %s (%s), want overran, a word of harm", single.Verdict, single.Decision.Class)
	}
	for _, cell := range doc.Cells[1] {
		if len(cell.Runs) != 0 || len(cell.Trials) != 3 {
			t.Errorf("renew-after-unlock on %s: %d runs, %d trials: want the probe's 3 trials, run at resume", cell.Lock, len(cell.Runs), len(cell.Trials))
		}
	}

	// A pod's log cut inside its history: the error names its run, whose
	// result is not stored; the other pod's are.
	cut := pods[1][:strings.Index(pods[1], "=== lockbench history end")-10]
	if err := os.WriteFile(logFile, []byte(pods[0]+cut), 0o644); err != nil {
		t.Fatal(err)
	}
	cutID := ""
	for id := range ids {
		if strings.Contains(cut, job.HistoryBeginMarker(id)) {
			cutID = id
		}
	}
	again := filepath.Join(dir, "again")
	code, _, errs = lockbench(t, "results", "collect", "--logs", logFile, "--out", again)
	if code != exitRuntime || cutID == "" || !strings.Contains(errs, "run "+cutID+": its history is cut off") {
		t.Errorf("collect of a cut log: exit %d, %q: want exit 1 naming run %s", code, errs, cutID)
	}
	if kept, _, _ := results.List(again); len(kept) != 1 || kept[0].ID == cutID {
		t.Errorf("collect of a cut log stored %d results: want the whole pod's alone", len(kept))
	}
	if left, _ := filepath.Glob(filepath.Join(again, ".*")); len(left) > 0 {
		t.Errorf("temporary files left in --out: %v", left)
	}
}

// prefixLines puts prefix before every line of s, as kubectl logs
// --prefix does.
func prefixLines(prefix, s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString(prefix + line)
		}
	}
	return b.String()
}
