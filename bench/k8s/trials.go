package k8s

import (
	"fmt"
	"io"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lockbench/lockbench/bench/job"
)

// CompletionIndexArg is a pod's completion index in its command line:
// Kubernetes expands $(JOB_COMPLETION_INDEX) in the container's args, the
// Job controller having set that variable in every pod of an Indexed Job.
// The index is passed as an argument, never read from the environment by
// lockbench, so a variable left in a user's shell changes nothing.
const CompletionIndexArg = "$(JOB_COMPLETION_INDEX)"

// TrialIndexFlag is the hidden flag of the command that runs one planned
// trial, the pod's index.
const TrialIndexFlag = "--trial-index"

// TrialJobSpec is a command's trials as an Indexed Job: one index per
// planned trial, each pod bringing up its own servers inside it.
type TrialJobSpec struct {
	// Name names the job; RunID labels it.
	Name, RunID string
	// Image carries lockbench and the trials' servers (compose.TrialImage,
	// pushed where the cluster pulls from).
	Image string
	// Args is every pod's command line after the entrypoint (lockbench):
	// the command; TrialJob appends --trial-index and the pod's index.
	Args []string
	// Trials is how many trials (indexes) the job has.
	Trials int
	// Parallel is how many pods run at once.
	Parallel int
}

// TrialJob builds the Indexed Job of spec: completions one per trial,
// parallelism spec.Parallel, no retries (a trial that fails is a failed
// trial, not one to run again behind the verdict's back), each pod given
// its index as --trial-index $(JOB_COMPLETION_INDEX) and printing its result between the
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
						Args:  append(slices.Clip(s.Args), TrialIndexFlag, CompletionIndexArg),
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
	return writeManifest(w, j)
}
