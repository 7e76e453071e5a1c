// Package k8s turns a lockbench run into a Kubernetes Indexed Job of many
// generators, and reads their results back from the pods' logs.
package k8s

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/results"
)

// Markers frame a result a generator prints to its log (run --format
// marked), so `results collect` finds it among other lines.
const (
	BeginMarker = "=== lockbench result begin ==="
	EndMarker   = "=== lockbench result end ==="
)

// DefaultImage is the lockbench image a job runs unless told otherwise.
const DefaultImage = "lockbench/lockbench:latest"

// MetricsPort is where each pod serves Prometheus metrics.
const MetricsPort = 9464

// JobSpec is what a job of generators needs.
type JobSpec struct {
	// Name names the job; RunID is shared by its generators.
	Name, RunID string
	// Generators is how many pods run at once.
	Generators int
	// Image is the lockbench image.
	Image string
	// StartAt is when every generator starts its warm-up.
	StartAt time.Time
	// RunFlags are the run's own flags (targets, workload), passed through.
	RunFlags []string
	// EnvSecret names a Secret whose keys become the pods' environment
	// (LOCKBENCH_REDIS=redis://:password@…): the way to give a password that
	// must not be printed in the manifest.
	EnvSecret string
}

// Validate refuses a spec that cannot make a job.
func (s JobSpec) Validate() error {
	switch {
	case s.Generators < 1 || s.Generators > 10_000:
		return fmt.Errorf("--generators %d: want 1 to 10000", s.Generators)
	case !regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`).MatchString(s.Name):
		return fmt.Errorf("--name %q: want a Kubernetes name (lower-case letters, digits and '-', at most 52)", s.Name)
	case s.Image == "":
		return fmt.Errorf("--image: want an image reference")
	}
	for _, f := range s.RunFlags {
		if hasPassword(f) {
			return fmt.Errorf("run flag %q carries a password, which the manifest would print; put the URL in a Secret (LOCKBENCH_REDIS, LOCKBENCH_RESOURCE) and give its name with --env-secret", redactAll(f))
		}
		for _, own := range []string{"--run-id", "--generators", "--generator-id", "--start-at", "--metrics-addr", "--format", "--out"} {
			if f == own || strings.HasPrefix(f, own+"=") {
				return fmt.Errorf("run flag %s: the job sets it for every generator; leave it out", own)
			}
		}
	}
	return nil
}

// Job builds the Indexed Job: one pod per generator, each told its index
// through JOB_COMPLETION_INDEX, all with the same run id and start time,
// serving metrics on MetricsPort with Prometheus's scrape annotations, and
// printing its result between markers for `results collect`.
func Job(s JobSpec) (*batchv1.Job, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := int32(s.Generators)
	indexed := batchv1.IndexedCompletion
	zero := int32(0)
	args := append([]string{"run"}, s.RunFlags...)
	args = append(args, "--run-id", s.RunID, "--generators", strconv.Itoa(s.Generators), "--generator-id", "$(JOB_COMPLETION_INDEX)",
		"--start-at", s.StartAt.UTC().Format(time.RFC3339), "--metrics-addr", ":"+strconv.Itoa(MetricsPort),
		"--format", "marked", "--out", "/tmp/runs", "-q")
	labels := map[string]string{"app.kubernetes.io/name": "lockbench", "lockbench/run-id": s.RunID}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(MetricsPort), "prometheus.io/path": "/metrics",
				}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:    "lockbench",
						Image:   s.Image,
						Args:    args,
						Ports:   []corev1.ContainerPort{{Name: "metrics", ContainerPort: MetricsPort}},
						EnvFrom: envFrom(s.EnvSecret),
					}},
				},
			},
		},
	}, nil
}

func envFrom(secret string) []corev1.EnvFromSource {
	if secret == "" {
		return nil
	}
	return []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}}
}

// userinfo finds scheme://user:password@ in a flag value.
var userinfo = regexp.MustCompile(`://[^/@\s]*:([^/@\s]+)@`)

func hasPassword(s string) bool { return userinfo.MatchString(s) }

func redactAll(s string) string {
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.LastIndex(m[:len(m)-1], ":")
		return m[:i+1] + "xxxxx@"
	})
}

// WriteJob prints the job as YAML.
func WriteJob(w io.Writer, s JobSpec) error {
	job, err := Job(s)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(job)
	if err != nil {
		return fmt.Errorf("job manifest: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// WriteMarked prints a result between the markers.
func WriteMarked(w io.Writer, r *results.Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("result %s: %w", r.ID, err)
	}
	_, err = fmt.Fprintf(w, "%s\n%s\n%s\n", BeginMarker, b, EndMarker)
	return err
}

// prefixed matches a line kubectl logs --prefix wrote: "[pod/NAME/container] ".
var prefixed = regexp.MustCompile(`^\[[^\]]*\] `)

// Collect reads every result printed between markers in logs (one pod's or
// many pods' concatenated, with or without kubectl's --prefix), ignoring
// every other line.
func Collect(logs io.Reader) ([]*results.Result, error) {
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	var out []*results.Result
	var body *bytes.Buffer
	line := 0
	for sc.Scan() {
		line++
		text := prefixed.ReplaceAllString(sc.Text(), "")
		switch {
		case text == BeginMarker:
			body = &bytes.Buffer{}
		case text == EndMarker && body != nil:
			var r results.Result
			if err := json.Unmarshal(body.Bytes(), &r); err != nil {
				return out, fmt.Errorf("log line %d: the result before it is not JSON: %w", line, err)
			}
			if r.Schema != results.Schema || r.ID == "" {
				return out, fmt.Errorf("log line %d: not a %s result", line, results.Schema)
			}
			out = append(out, &r)
			body = nil
		case body != nil:
			body.WriteString(text)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read logs: %w", err)
	}
	if body != nil {
		return out, fmt.Errorf("the logs end inside a result (line %d): was a pod cut off?", line)
	}
	return out, nil
}
