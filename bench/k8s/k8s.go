// Package k8s makes a Kubernetes Indexed Job of many generators from a
// job.Spec, for users with a cluster and a registry.
package k8s

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/bench/job"
)

// DefaultImage is the lockbench image a job runs unless told otherwise.
const DefaultImage = "lockbench/lockbench:latest"

// completionIndex is the annotation the Job controller puts the pod's index
// in (JOB_COMPLETION_INDEX is read from it too).
const completionIndex = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

// Job builds the Indexed Job: one pod per generator, each told its index
// through job.GeneratorIDEnv, all with the spec's command line (same run id
// and start time), serving metrics on job.MetricsPort with Prometheus's
// scrape annotations, and printing its result between markers for `results
// collect`. envSecret names a Secret whose keys become the pods' environment
// (an env file such as job.Spec.SecretFile makes, given to kubectl create
// secret generic --from-env-file): the spec's own Secret would be printed in
// the manifest, so it is refused here.
func Job(s job.Spec, envSecret string) (*batchv1.Job, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(s.Secret) > 0 {
		return nil, errors.New("a manifest would print the secret's values; create a Secret from them and give its name (--env-secret)")
	}
	n := int32(s.Generators)
	indexed := batchv1.IndexedCompletion
	zero := int32(0)
	labels := s.Labels()
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
					"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(job.MetricsPort), "prometheus.io/path": "/metrics",
				}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:  "lockbench",
						Image: s.Image,
						Args:  s.Args(),
						Env: []corev1.EnvVar{{Name: job.GeneratorIDEnv, ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: completionIndex}}}},
						Ports:   []corev1.ContainerPort{{Name: "metrics", ContainerPort: job.MetricsPort}},
						EnvFrom: envFrom(envSecret),
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

// WriteJob prints the job as YAML.
func WriteJob(w io.Writer, s job.Spec, envSecret string) error {
	j, err := Job(s, envSecret)
	if err != nil {
		return err
	}
	return writeManifest(w, j)
}

// writeManifest prints a manifest as YAML: the one writer of both jobs.
func writeManifest(w io.Writer, manifest any) error {
	b, err := yaml.Marshal(manifest)
	if err != nil {
		return fmt.Errorf("job manifest: %w", err)
	}
	_, err = w.Write(b)
	return err
}
