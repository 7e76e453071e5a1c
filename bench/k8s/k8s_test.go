package k8s

import (
	"bytes"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/results"
)

func spec() JobSpec {
	return JobSpec{Name: "lb", RunID: "r1", Generators: 4, Image: "lockbench/lockbench:test",
		StartAt: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), RunFlags: []string{"--redis", "redis://redis:6379", "--keys", "1"}}
}

// The manifest decodes strictly into Kubernetes' own types: no field the API
// would reject or silently drop.
func TestJobManifestDecodesStrictly(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJob(&buf, spec()); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(buf.Bytes(), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, buf.String())
	}
	s := job.Spec
	if job.Kind != "Job" || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 {
		t.Fatalf("job %+v: want an Indexed Job of 4 completions at once", s)
	}
	if a := s.Template.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9464" {
		t.Errorf("scrape annotations %v", a)
	}
	args := strings.Join(s.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"run --redis redis://redis:6379 --keys 1", "--run-id r1", "--generators 4",
		"--generator-id $(JOB_COMPLETION_INDEX)", "--start-at 2026-12-02T10:00:00Z", "--metrics-addr :9464", "--format marked"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
}

func TestJobSpecRefuses(t *testing.T) {
	for name, mutate := range map[string]func(s *JobSpec){
		"no generators":      func(s *JobSpec) { s.Generators = 0 },
		"bad name":           func(s *JobSpec) { s.Name = "Bad_Name" },
		"a flag it sets":     func(s *JobSpec) { s.RunFlags = append(s.RunFlags, "--run-id", "x") },
		"a password":         func(s *JobSpec) { s.RunFlags = []string{"--redis", "redis://:hunter2secret@redis:6379"} },
		"a flag it sets (=)": func(s *JobSpec) { s.RunFlags = append(s.RunFlags, "--generator-id=1") },
	} {
		s := spec()
		mutate(&s)
		err := s.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("%s: the error repeats the password: %v", name, err)
		}
	}
}

func TestCollectReadsMarkedResults(t *testing.T) {
	var logs bytes.Buffer
	logs.WriteString("starting\n")
	for _, id := range []string{"r1-g0", "r1-g1"} {
		var one bytes.Buffer
		if err := WriteMarked(&one, &results.Result{Schema: results.Schema, ID: id}); err != nil {
			t.Fatal(err)
		}
		// kubectl logs --prefix puts the pod's name before every line.
		for _, line := range strings.SplitAfter(one.String(), "\n") {
			if line != "" {
				logs.WriteString("[pod/lb-" + id + "/lockbench] " + line)
			}
		}
	}
	rs, err := Collect(&logs)
	if err != nil || len(rs) != 2 || rs[1].ID != "r1-g1" {
		t.Fatalf("Collect = %d results, %v", len(rs), err)
	}
	if _, err := Collect(strings.NewReader(BeginMarker + "\n{\"schema\":")); err == nil {
		t.Error("a result cut off by the end of the logs was accepted")
	}
}

func FuzzCollect(f *testing.F) {
	f.Add(BeginMarker + "\n{}\n" + EndMarker + "\n")
	f.Add("[pod/x] " + BeginMarker + "\n[pod/x] {\"schema\":\"lockbench/v1\",\"id\":\"a\"}\n[pod/x] " + EndMarker)
	f.Fuzz(func(t *testing.T, logs string) {
		rs, _ := Collect(strings.NewReader(logs))
		for _, r := range rs {
			if r.Schema != results.Schema || r.ID == "" {
				t.Fatalf("collected %+v", r)
			}
		}
	})
}
