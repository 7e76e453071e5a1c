package k8s

import (
	"fmt"
	"io"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/bench/job"
)

// TrialIndexEnv is the variable a trial's pod gets its completion index
// in: the command's hidden --trial-index reads it, and runs that one trial
// of its plan.
const TrialIndexEnv = "LOCKBENCH_TRIAL_INDEX"

// TrialJobSpec is a command's trials as an Indexed Job: one index per
// planned trial, each pod bringing up its own servers inside it.
type TrialJobSpec struct {
	// Name names the job; RunID labels it.
	Name, RunID string
	// Image carries lockbench and the trials' servers (compose.TrialImage,
	// pushed where the cluster pulls from).
	Image string
	// Args is every pod's command line after the entrypoint (lockbench):
	// the command with --trial-index left to TrialIndexEnv.
	Args []string
	// Trials is how many trials (indexes) the job has.
	Trials int
	// Parallel is how many pods run at once.
	Parallel int
}

// TrialJob builds the Indexed Job of spec: completions one per trial,
// parallelism spec.Parallel, no retries (a trial that fails is a failed
// trial, not one to run again behind the verdict's back), each pod told
// its index through TrialIndexEnv and printing its result between the
// markers for `results collect`.
func TrialJob(s TrialJobSpec) (*batchv1.Job, error) {
	switch {
	case s.Trials < 1:
		return nil, fmt.Errorf("%d trials: want 1 or more", s.Trials)
	case s.Parallel < 1:
		return nil, fmt.Errorf("--parallel %d: want 1 or more pods at once", s.Parallel)
	case s.Image == "":
		return nil, fmt.Errorf("--image: want an image reference")
	}
	n, p := int32(s.Trials), int32(min(s.Parallel, s.Trials))
	indexed := batchv1.IndexedCompletion
	zero := int32(0)
	labels := job.Spec{RunID: s.RunID}.Labels()
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &p,
			BackoffLimit:   &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:  "trial",
						Image: s.Image,
						Args:  s.Args,
						Env: []corev1.EnvVar{{Name: TrialIndexEnv, ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: completionIndex}}}},
					}},
				},
			},
		},
	}, nil
}

// WriteTrialJob prints the trials' job as YAML.
func WriteTrialJob(w io.Writer, s TrialJobSpec) error {
	j, err := TrialJob(s)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(j)
	if err != nil {
		return fmt.Errorf("job manifest: %w", err)
	}
	_, err = w.Write(b)
	return err
}
