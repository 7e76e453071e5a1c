package k8s

import (
	"bytes"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/bench/job"
)

func spec() job.Spec {
	return job.Spec{Name: "lb", RunID: "r1", Generators: 4, Image: "lockbench/lockbench:test",
		StartAt: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), RunFlags: []string{"--redis", "redis://redis:6379", "--keys", "1"}}
}

// The manifest decodes strictly into Kubernetes' own types: no field the API
// would reject or silently drop.
func TestJobManifestDecodesStrictly(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJob(&buf, spec(), "lb-secrets"); err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(buf.Bytes(), &j); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, buf.String())
	}
	s := j.Spec
	if j.Kind != "Job" || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 || *s.BackoffLimit != 0 {
		t.Fatalf("job %+v: want an Indexed Job of 4 completions at once, no retries", s)
	}
	if a := s.Template.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9464" {
		t.Errorf("scrape annotations %v", a)
	}
	c := s.Template.Spec.Containers[0]
	if got, want := strings.Join(c.Args, " "), strings.Join(spec().Args(), " "); got != want {
		t.Errorf("args %q, want the spec's %q", got, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != job.GeneratorIDEnv || c.Env[0].ValueFrom.FieldRef.FieldPath != completionIndex {
		t.Errorf("env %+v: want %s from the completion index", c.Env, job.GeneratorIDEnv)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "lb-secrets" {
		t.Errorf("envFrom %+v", c.EnvFrom)
	}
}

func TestJobRefusesSecretValues(t *testing.T) {
	s := spec()
	s.Secret = map[string]string{"LOCKBENCH_REDIS": "redis://:hunter2secret@redis:6379"}
	var buf bytes.Buffer
	err := WriteJob(&buf, s, "")
	if err == nil || strings.Contains(err.Error()+buf.String(), "hunter2secret") {
		t.Fatalf("WriteJob with secret values = %v, %q: want a refusal that does not repeat the password", err, buf.String())
	}
}
