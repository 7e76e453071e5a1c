package swarm

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/scenario"
	"github.com/lockbench/lockbench/results"
)

// A trial's service is one task run once, never restarted (a trial that
// fails is a failed trial, not one run again behind the verdict), running
// lockbench run with the trial's flags, storing inside the task and
// printing its result between the markers, with the grace a run needs to
// stop its servers.
func TestTrialService(t *testing.T) {
	args := TrialArgs([]string{"--label=naive-release / naive GET+DEL / trial 1", "--workload=naive-release-race"})
	spec := TrialService("trial-r1-1", "lockbench/trial:test", args, map[string]string{job.LabelRunID: "r1"})
	m := spec.Mode.ReplicatedJob
	if m == nil || *m.MaxConcurrent != 1 || *m.TotalCompletions != 1 {
		t.Fatalf("mode %+v: want a replicated job of one task", spec.Mode)
	}
	if spec.TaskTemplate.RestartPolicy.Condition != "none" {
		t.Errorf("restart policy %+v: want none", spec.TaskTemplate.RestartPolicy)
	}
	c := spec.TaskTemplate.ContainerSpec
	want := []string{"run", "--label=naive-release / naive GET+DEL / trial 1", "--workload=naive-release-race", "--out", job.ResultsDir, "--format", "marked", "-q"}
	if !slices.Equal(c.Args, want) || c.Image != "lockbench/trial:test" || *c.StopGracePeriod != stopGrace {
		t.Errorf("container %+v: want args %q", c, want)
	}
	if spec.Labels[job.LabelRunID] != "r1" || c.Labels[job.LabelRunID] != "r1" {
		t.Errorf("labels %v: want the run id on the service and its containers", spec.Labels)
	}
}

// The host reads exactly one result from a trial's log, whatever else the
// log holds; a log with none or two is an error, never a guess.
func TestTrialResult(t *testing.T) {
	marked := func(ids ...string) string {
		var b bytes.Buffer
		b.WriteString("a line the run printed\n")
		for _, id := range ids {
			if err := job.WriteMarked(&b, &results.Result{Schema: results.Schema, ID: id, Label: "trial " + id, Ops: map[string]results.OpSummary{}}); err != nil {
				t.Fatal(err)
			}
		}
		return b.String()
	}
	r, err := TrialResult(strings.NewReader(marked("r1")))
	if err != nil || r.ID != "r1" || r.Label != "trial r1" {
		t.Fatalf("one result: %+v, %v", r, err)
	}
	for name, log := range map[string]string{"none": marked(), "two": marked("r1", "r2")} {
		if r, err := TrialResult(strings.NewReader(log)); err == nil {
			t.Errorf("%s: %+v, want an error", name, r)
		}
	}
}

// The verdict of trials run as tasks is the local one: each trial's
// result goes through its task's log (marked, then TrialResult), and the
// scenario folds them in trial order whichever task finished first.
func TestTrialsFoldAsLocal(t *testing.T) {
	s, err := scenario.Lookup("naive-release")
	if err != nil {
		t.Fatal(err)
	}
	planted := func(v plan.Values) *results.Result {
		label := v.Get("label")
		r := &results.Result{Schema: results.Schema, ID: label, Label: label, Ops: map[string]results.OpSummary{}, DurationS: 3}
		r.Contention.Attempts, r.Contention.Acquired = 100, 90
		r.Throughput.AcquiredPerS = 30
		if v.Get("lock") == "" { // the naive variant
			r.Incidents.DoubleGrants = 3
		}
		return r
	}
	local := func(_ context.Context, v plan.Values) (*results.Result, error) { return planted(v), nil }
	var calls atomic.Int64
	tasks := func(_ context.Context, v plan.Values) (*results.Result, error) {
		// Later trials finish first.
		time.Sleep(time.Duration(20-calls.Add(1)) * 5 * time.Millisecond)
		var log bytes.Buffer
		if err := job.WriteMarked(&log, planted(v)); err != nil {
			return nil, err
		}
		return TrialResult(&log)
	}
	verdicts := map[string]string{}
	for name, tc := range map[string]struct {
		run      scenario.Runner
		parallel int
	}{"local": {local, 1}, "tasks": {tasks, 3}} {
		v, err := scenario.Run(context.Background(), s, scenario.Options{Trials: 3, Parallel: tc.parallel}, tc.run)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		if err := scenario.WriteVerdictJSON(&b, v); err != nil {
			t.Fatal(err)
		}
		verdicts[name] = b.String()
	}
	if verdicts["local"] != verdicts["tasks"] {
		t.Errorf("tasks' verdict:\n%s\nlocal:\n%s", verdicts["tasks"], verdicts["local"])
	}
	if !strings.Contains(verdicts["tasks"], "trial 3") {
		t.Errorf("verdict lacks the trials: %s", verdicts["tasks"])
	}
}

// A trial's mounts are bind mounts of this machine's directories into the
// task (where it leaves its history), read-write; a relative path on
// either side is refused before any service is made.
func TestTrialServiceMounts(t *testing.T) {
	spec := TrialService("trial-r1-2", "lockbench/trial:test", TrialArgs(nil), nil, TrialMount{Source: "/tmp/lockbench-history-1", Target: "/history"})
	ms := spec.TaskTemplate.ContainerSpec.Mounts
	if len(ms) != 1 || ms[0].Type != "bind" || ms[0].Source != "/tmp/lockbench-history-1" || ms[0].Target != "/history" || ms[0].ReadOnly {
		t.Fatalf("mounts %+v: want one read-write bind of /tmp/lockbench-history-1 at /history", ms)
	}
	if ms := TrialService("t", "i", nil, nil).TaskTemplate.ContainerSpec.Mounts; len(ms) != 0 {
		t.Errorf("mounts %+v: want none unless asked", ms)
	}
	for _, m := range []TrialMount{{"rel", "/history"}, {"/tmp/x", "history"}, {"", "/history"}} {
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "absolute") {
			t.Errorf("%+v: %v, want a refusal asking for absolute paths", m, err)
		}
	}
	if err := (TrialMount{"/tmp/x", "/history"}).Validate(); err != nil {
		t.Errorf("absolute paths: %v", err)
	}
}
