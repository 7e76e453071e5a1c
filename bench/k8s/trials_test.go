package k8s

import (
	"bytes"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

func trialSpec() TrialJobSpec {
	return TrialJobSpec{Name: "lb-trials", RunID: "r1", Image: "registry.example/lockbench/trial:1", Trials: 4, Parallel: 2,
		Args: []string{"scenario", "naive-release", "--trials", "2", "--format", "marked"}}
}

// The trials' manifest decodes strictly into Kubernetes' own types: an
// Indexed Job of one completion per trial, --parallel pods at once, no
// retries, every pod given its index as an argument.
func TestTrialJobManifestDecodesStrictly(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTrialJob(&buf, trialSpec()); err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(buf.Bytes(), &j); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, buf.String())
	}
	s := j.Spec
	if j.Kind != "Job" || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 2 || *s.BackoffLimit != 0 {
		t.Fatalf("job %+v: want an Indexed Job of 4 completions, 2 at once, no retries", s)
	}
	c := s.Template.Spec.Containers[0]
	want := strings.Join(trialSpec().Args, " ") + " --trial-index $(JOB_COMPLETION_INDEX)"
	if got := strings.Join(c.Args, " "); got != want || c.Image != trialSpec().Image {
		t.Errorf("args %q image %s, want the spec's then the index, %q", got, c.Image, want)
	}
	// The index is an argument only: nothing in the pod's environment is
	// lockbench's to read.
	if len(c.Env) != 0 {
		t.Errorf("env %+v: want none (the index is passed as an argument)", c.Env)
	}
	if j.Labels["lockbench/run-id"] != "r1" {
		t.Errorf("labels %v: want the run id", j.Labels)
	}
}

func TestTrialJobRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*TrialJobSpec)
		want string
	}{
		"no trials":   {func(s *TrialJobSpec) { s.Trials = 0 }, "trials"},
		"no parallel": {func(s *TrialJobSpec) { s.Parallel = 0 }, "--parallel"},
		"no image":    {func(s *TrialJobSpec) { s.Image = "" }, "--image"},
	} {
		t.Run(name, func(t *testing.T) {
			s := trialSpec()
			tc.edit(&s)
			if _, err := TrialJob(s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("TrialJob = %v, want a refusal naming %s", err, tc.want)
			}
		})
	}
	s := trialSpec()
	s.Parallel = 9
	if j, err := TrialJob(s); err != nil || *j.Spec.Parallelism != 4 {
		t.Errorf("--parallel 9 over 4 trials: %v, want parallelism 4", err)
	}
}
