package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/results"
)

// Bad input to --engine is one line naming the flag and what is accepted,
// exit 2, before any engine is asked: an unknown engine, a recipe whose
// servers the trial image does not carry, flags an engine cannot honour.
func TestEngineRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"unknown engine":          {[]string{"scenario", "naive-release", "--engine", "nomad"}, "--engine \"nomad\": want local, swarm or k8s"},
		"etcd on swarm":           {[]string{"scenario", "etcd-leader-failover", "--engine", "swarm"}, "etcd, topology etcd:3) are not in the trial image"},
		"zookeeper on k8s":        {[]string{"scenario", "zk-session-expiry", "--engine", "k8s"}, "zk-session-expiry --engine k8s"},
		"clock fault on swarm":    {[]string{"scenario", "redlock-clock-jump", "--engine", "swarm"}, "C compiler"},
		"driver lock on swarm":    {[]string{"scenario", "gc-pause", "--engine", "swarm", "--lock", "exec:/bin/true"}, "its lock's driver is a program of this machine"},
		"def lock on k8s":         {[]string{"scenario", "gc-pause", "--engine", "k8s", "--lock", "def:../../lockimpl/defs/single.yaml"}, "its lock definition is a file of this machine"},
		"history on swarm":        {[]string{"scenario", "naive-release", "--engine", "swarm", "--history", "h/"}, "--history with --engine swarm"},
		"docker provider":         {[]string{"scenario", "naive-release", "--engine", "swarm", "--provider", "docker"}, "--provider with --engine swarm"},
		"budget on k8s":           {[]string{"scenario", "naive-release", "--engine", "k8s", "--budget", "10m"}, "--budget with --engine k8s"},
		"resume on k8s":           {[]string{"scenario", "naive-release", "--engine", "k8s", "--resume"}, "--resume with --engine k8s"},
		"image without engine":    {[]string{"scenario", "naive-release", "--engine-image", "x"}, "--engine-image"},
		"no pods at once":         {[]string{"scenario", "naive-release", "--engine", "k8s", "--parallel", "0"}, "--parallel 0"},
		"index out of the plan":   {[]string{"scenario", "naive-release", "--trials", "1", "--trial-index", "2"}, "--trial-index"},
		"index with an engine":    {[]string{"scenario", "naive-release", "--trial-index", "0", "--engine", "local"}, "--engine does not apply"},
		"renewal budget on k8s":   {[]string{"renewal-check", "--engine", "k8s", "--budget", "10m"}, "--budget with --engine k8s"},
		"renewal etcd on swarm":   {[]string{"renewal-check", "--engine", "swarm", "--locks", "etcd"}, "on etcd: its servers (etcd, topology etcd:1) are not in the trial image"},
		"renewal all on swarm":    {[]string{"renewal-check", "--engine", "swarm"}, "choose --locks among single,fenced,"},
		"renewal image no engine": {[]string{"renewal-check", "--engine-image", "x"}, "--engine-image"},
		"renewal bad engine":      {[]string{"renewal-check", "--engine", "nomad"}, "want local, swarm or k8s"},
		"failover-map budget k8s": {[]string{"failover-map", "--engine", "k8s", "--budget", "10m"}, "--budget with --engine k8s"},
		"failover-map resume k8s": {[]string{"failover-map", "--engine", "k8s", "--resume"}, "--resume with --engine k8s"},
		"failover-map no pods":    {[]string{"failover-map", "--engine", "k8s", "--parallel", "0"}, "--parallel 0"},
		"failover-map index":      {[]string{"failover-map", "--lock", "single", "--mitigation", "none", "--lag", "0", "--hold", "100ms", "--failovers", "2", "--trial-index", "2"}, "--trial-index 2: want 0 to 1"},
		"failover-map index k8s":  {[]string{"failover-map", "--trial-index", "0", "--engine", "swarm"}, "--engine does not apply"},
		"failover-map index plan": {[]string{"failover-map", "--trial-index", "0", "--plan-only"}, "--trial-index"},
		"failover-map plan k8s":   {[]string{"failover-map", "--plan-only", "--engine", "k8s"}, "--plan-only with --engine k8s"},
		"failover-map bad engine": {[]string{"failover-map", "--engine", "x"}, "want local, swarm or k8s"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errs := lockbench(t, tc.args...)
			if code != exitBadInput || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q: want exit 2 and one line naming %q", code, errs, tc.want)
			}
		})
	}
}

// An engine that cannot run the trials is a runtime failure (exit 1) in
// one line, and no trial runs: here the engine lacks the image (or, on a
// machine without one, does not answer, as swarm job says it). No Swarm
// is joined: the image is asked for first.
func TestEngineSwarmCannotRun(t *testing.T) {
	out := t.TempDir()
	code, _, errs := lockbench(t, "scenario", "naive-release", "--trials", "1", "--engine", "swarm",
		"--engine-image", "lockbench/trial:absent-"+filepath.Base(out), "--out", out, "-q")
	if code != exitRuntime || strings.Count(strings.TrimSpace(errs), "\n") > 0 ||
		!strings.Contains(errs, "is not on this engine: ") && !strings.Contains(errs, "Docker") {
		t.Fatalf("exit %d, stderr %q: want exit 1 and one line saying what is missing", code, errs)
	}
	if files, _ := os.ReadDir(out); len(files) > 0 {
		t.Errorf("%d files in --out: want no trial run", len(files))
	}
}

// --engine k8s prints an Indexed Job that decodes strictly into
// Kubernetes' types, one index per planned trial and --parallel pods at
// once; each pod's command is the scenario with its trials, whose
// --trial-index comes from the completion index.
func TestScenarioK8sJob(t *testing.T) {
	j := k8sTrialJob(t, "scenario", "gc-pause", "--trials", "3", "--parallel", "4", "--engine", "k8s",
		"--engine-image", testJobImage, "--lock", "redislock")
	if *j.Completions != 12 || *j.Parallelism != 4 {
		t.Fatalf("job %+v: want 12 indexes (4 variants × 3 trials), 4 at once", j)
	}
	want := "scenario gc-pause --trials 3 --lock redislock --out " + job.ResultsDir + " -q --trial-index $(JOB_COMPLETION_INDEX)"
	if got := podArgs(j); got != want {
		t.Errorf("pod args %q: want %q", got, want)
	}
}

// testJobImage is the image the job tests ask for.
const testJobImage = "registry.example/lockbench/trial:1"

// k8sTrialJob runs a command that prints a trial job and decodes it
// strictly into Kubernetes' types, failing the test unless it has what
// every trial job has: indexed completions, no retries, the image asked
// for, and no environment (the index is an argument).
func k8sTrialJob(t *testing.T, args ...string) batchv1.JobSpec {
	t.Helper()
	code, out, errs := lockbench(t, args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(out), &j); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, out)
	}
	s := j.Spec
	if *s.CompletionMode != batchv1.IndexedCompletion || *s.BackoffLimit != 0 {
		t.Fatalf("job %+v: want indexed completions, no retries", s)
	}
	c := s.Template.Spec.Containers[0]
	if c.Image != testJobImage && slices.Contains(args, "--engine-image") {
		t.Errorf("pod image %s: want %s", c.Image, testJobImage)
	}
	if len(c.Env) != 0 {
		t.Errorf("pod env %+v: want none (the index is an argument)", c.Env)
	}
	return s
}

// podArgs is a trial job's pod command line after the entrypoint.
func podArgs(j batchv1.JobSpec) string { return strings.Join(j.Template.Spec.Containers[0].Args, " ") }

// The pods of --engine k8s, run here: each index runs the trial the local
// pool would run at that place and prints it between the markers; results
// collect stores what their logs hold, and --resume folds the stored
// trials into the verdict the local path gives, running none again.
func TestScenarioTrialIndexMergesAsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real trials")
	}
	s, err := scenario.Lookup("naive-release")
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	for k := range s.PlannedTrials(1) {
		// A pod's own store; its result reaches the host through its log.
		code, out, errs := lockbench(t, "scenario", "naive-release", "--trials", "1", "--out", t.TempDir(), "-q", "--trial-index", strconv.Itoa(k))
		if code != 0 {
			t.Fatalf("index %d: exit %d, stderr %q", k, code, errs)
		}
		logs.WriteString(out)
	}
	store := collectPodLogs(t, logs.String())
	before, _ := os.ReadDir(store)
	code, out, errs := lockbench(t, "scenario", "naive-release", "--trials", "1", "--resume", "--out", store, "-q")
	if code != 0 {
		t.Fatalf("--resume: exit %d, stderr %q", code, errs)
	}
	after, _ := os.ReadDir(store)
	if len(before) != 2 || len(after) != len(before) {
		t.Errorf("%d stored trials before --resume, %d after: want 2, none run again", len(before), len(after))
	}
	for _, want := range []string{"naive GET+DEL: violated", "single (atomic script): undecided"} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict lacks %q:\n%s", want, out)
		}
	}
}

// A variable named like the old index variable, left in a user's shell,
// changes nothing: the index reaches a pod as an argument only, so the
// scenario here still prints its whole job rather than running one trial.
func TestScenarioIgnoresTrialIndexEnvironment(t *testing.T) {
	t.Setenv("LOCKBENCH_TRIAL_INDEX", "0")
	code, out, errs := lockbench(t, "scenario", "naive-release", "--trials", "2", "--engine", "k8s")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q: want the job printed", code, errs)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(out), &j); err != nil || *j.Spec.Completions != 4 {
		t.Fatalf("decode %v: want the job of 4 trials\n%s", err, out)
	}
}

// A task's history is copied from the directory bound into it to --out,
// where a local run writes it, and the result then names the copy; a
// result naming no history, one outside the bound directory, a file the
// task did not leave, or one already in --out (never overwritten) is an
// error naming the run.
func TestFetchTaskHistory(t *testing.T) {
	const id = "20261207-000000-abcdef"
	name := id + ".history.jsonl.gz"
	setup := func(t *testing.T) (dir, out string) {
		dir, out = t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("history bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir, out
	}
	t.Run("copied", func(t *testing.T) {
		dir, out := setup(t)
		r := &results.Result{ID: id, History: taskHistoryDir + "/" + name}
		if err := fetchTaskHistory(r, dir, out); err != nil {
			t.Fatal(err)
		}
		if r.History != filepath.Join(out, name) {
			t.Errorf("history %s: want %s", r.History, filepath.Join(out, name))
		}
		if b, err := os.ReadFile(r.History); err != nil || string(b) != "history bytes" {
			t.Errorf("copy: %q, %v", b, err)
		}
	})
	for label, tc := range map[string]struct {
		history string
		prepare func(out string)
		want    string
	}{
		"no history":       {"", nil, "want a file in /history"},
		"elsewhere":        {"/tmp/runs/" + name, nil, "want a file in /history"},
		"not left":         {taskHistoryDir + "/other.history.jsonl.gz", nil, "the task's history"},
		"already in --out": {taskHistoryDir + "/" + name, func(out string) { _ = os.WriteFile(filepath.Join(out, name), nil, 0o644) }, "exists"},
	} {
		t.Run(label, func(t *testing.T) {
			dir, out := setup(t)
			if tc.prepare != nil {
				tc.prepare(out)
			}
			r := &results.Result{ID: id, History: tc.history}
			err := fetchTaskHistory(r, dir, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), id) {
				t.Errorf("%v: want an error naming run %s and %q", err, id, tc.want)
			}
		})
	}
}

// collectPodLogs writes pods' logs to a file and stores what results
// collect finds in them, as a user does after a k8s job; it returns the
// store.
func collectPodLogs(t *testing.T, logs string) string {
	t.Helper()
	dir := t.TempDir()
	logFile := filepath.Join(dir, "pods.log")
	if err := os.WriteFile(logFile, []byte(logs), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "runs")
	if code, _, errs := lockbench(t, "results", "collect", "--logs", logFile, "--out", store); code != 0 {
		t.Fatalf("results collect: exit %d, stderr %q", code, errs)
	}
	return store
}
