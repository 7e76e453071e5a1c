package swarm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/swarm"

	"github.com/lockbench/lockbench/bench/job"
)

func spec(t *testing.T, flags ...string) job.Spec {
	t.Helper()
	s, err := job.Spec{Name: "lockbench", RunID: "20261204-160607-552430", Generators: 4, Image: "lockbench/lockbench:local",
		StartAt: time.Date(2026, 12, 4, 16, 6, 22, 0, time.UTC), RunFlags: flags}.MoveSecrets()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// The service runs the spec's command line as a replicated job of one task
// per generator, never restarted, each told its slot, the password only in
// the secret.
func TestServiceFromSpec(t *testing.T) {
	s := spec(t, "--redis", "redis://:hunter2pw@redis:6379", "--keys", "1")
	svc := Service(s, &SecretRef{ID: "sec1", Name: "lockbench-x-env"}, "bench")
	b, _ := json.Marshal(svc)
	if strings.Contains(string(b), "hunter2pw") {
		t.Fatalf("the service spec holds the password: %s", b)
	}
	if svc.Annotations.Name != "lockbench-20261204-160607-552430" || svc.Annotations.Labels[job.LabelRunID] != s.RunID {
		t.Errorf("annotations %+v", svc.Annotations)
	}
	m := svc.Mode.ReplicatedJob
	if m == nil || *m.MaxConcurrent != 4 || *m.TotalCompletions != 4 || svc.Mode.Replicated != nil {
		t.Fatalf("mode %+v: want a replicated job of 4 at once", svc.Mode)
	}
	if rp := svc.TaskTemplate.RestartPolicy; rp == nil || rp.Condition != swarm.RestartPolicyConditionNone {
		t.Errorf("restart policy %+v: want none", rp)
	}
	c := svc.TaskTemplate.ContainerSpec
	if got, want := strings.Join(c.Args, " "), strings.Join(s.Args(), " "); got != want || !strings.Contains(got, "--keys 1") {
		t.Errorf("args %q, want the spec's %q", got, want)
	}
	env := strings.Join(c.Env, " ")
	for _, want := range []string{job.SwarmSlotVar + "={{.Task.Slot}}", job.SwarmNodeVar + "={{.Node.ID}}", job.EnvFileVar + "=/run/secrets/" + SecretTarget} {
		if !strings.Contains(env, want) {
			t.Errorf("env %q lacks %q", env, want)
		}
	}
	if len(c.Secrets) != 1 || c.Secrets[0].SecretID != "sec1" || c.Secrets[0].File.Name != SecretTarget || c.Secrets[0].File.Mode != 0o400 {
		t.Errorf("secrets %+v", c.Secrets)
	}
	if n := svc.TaskTemplate.Networks; len(n) != 1 || n[0].Target != "bench" {
		t.Errorf("networks %+v", n)
	}
	if plain := Service(spec(t, "--keys", "1"), nil, ""); len(plain.TaskTemplate.ContainerSpec.Secrets) != 0 ||
		strings.Contains(strings.Join(plain.TaskTemplate.ContainerSpec.Env, " "), job.EnvFileVar) || len(plain.TaskTemplate.Networks) != 0 {
		t.Errorf("without a secret or network: %+v", plain.TaskTemplate)
	}
}

func TestServiceName(t *testing.T) {
	s := spec(t)
	s.Name = strings.Repeat("a", 52)
	if n := ServiceName(s); len(n) > 63 || strings.HasSuffix(n, "-") {
		t.Errorf("ServiceName = %q: want at most 63 characters, not ending in -", n)
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"1.40", "1.41", true}, {"1.41", "1.41", false}, {"1.45", "1.41", false}, {"1.9", "1.41", true}, {"2.0", "1.41", false}} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestSummary(t *testing.T) {
	tasks := []swarm.Task{{Status: swarm.TaskStatus{State: swarm.TaskStateRunning}}, {Status: swarm.TaskStatus{State: swarm.TaskStateComplete}},
		{Status: swarm.TaskStatus{State: swarm.TaskStateRunning}}}
	if got := summary(tasks, 4); got != "4 generators: 1 complete, 2 running" {
		t.Errorf("summary = %q", got)
	}
	if got := summary(nil, 2); got != "2 generators: no task scheduled yet" {
		t.Errorf("summary = %q", got)
	}
}

func TestNeedsInit(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   swarm.Info
		api  string
		init bool
		bad  string
	}{
		{name: "inactive", st: swarm.Info{LocalNodeState: swarm.LocalNodeStateInactive}, api: "1.41", init: true},
		{name: "manager", st: swarm.Info{LocalNodeState: swarm.LocalNodeStateActive, ControlAvailable: true}, api: "1.45"},
		{name: "worker", st: swarm.Info{LocalNodeState: swarm.LocalNodeStateActive}, api: "1.45", bad: "worker"},
		{name: "no swarm mode", st: swarm.Info{}, api: "1.41", bad: "no Swarm mode"},
		{name: "old engine", st: swarm.Info{LocalNodeState: swarm.LocalNodeStateInactive}, api: "1.40", bad: "no replicated jobs"},
		{name: "locked", st: swarm.Info{LocalNodeState: swarm.LocalNodeStateLocked}, api: "1.41", bad: "Swarm is locked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			init, err := needsInit(tc.st, tc.api, "unix:///var/run/docker.sock")
			if tc.bad != "" {
				if err == nil || !errors.Is(err, ErrNoSwarm) || !strings.Contains(err.Error(), tc.bad) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("needsInit = %v, %v: want one line of ErrNoSwarm naming %q", init, err, tc.bad)
				}
				return
			}
			if err != nil || init != tc.init {
				t.Fatalf("needsInit = %v, %v; want %v", init, err, tc.init)
			}
		})
	}
}
