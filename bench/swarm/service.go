// Package swarm runs a job.Spec as a Docker Swarm replicated job through the
// Engine API: one task per generator, to completion, on an engine that
// needs no registry when the image is local. It initialises Swarm where it
// is inactive (and leaves it again), hands URLs with passwords to the tasks
// through a Docker secret, waits for the tasks, reads their results from
// their logs and removes everything it created.
package swarm

import (
	"fmt"
	"strings"

	"github.com/moby/moby/api/types/swarm"

	"github.com/lockbench/lockbench/bench/job"
)

// SecretTarget is the file name the job's secret is mounted as, under
// /run/secrets/ in every task.
const SecretTarget = "lockbench-env"

// nobody is the user the lockbench image runs as; the secret file is its.
const nobody = "65534"

// HostNetwork attaches the tasks to the host's network stack, where a server
// on the host's loopback is 127.0.0.1.
const HostNetwork = "host"

// ServiceName is the name of the job's service (and, with -env, of its
// secret): the job's name and its run id, so that jobs do not collide.
func ServiceName(s job.Spec) string {
	name := s.Name + "-" + strings.ToLower(s.RunID)
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "-._")
}

// SecretRef is a created secret the service mounts.
type SecretRef struct {
	ID, Name string
}

// Service is the service spec of the job: a replicated job of
// s.Generators tasks, all at once, never restarted (a generator that fails
// fails the run, as BackoffLimit 0 does on Kubernetes), each running the
// spec's command line and told its slot (job.SwarmSlotVar), with the secret
// mounted and named in job.EnvFileVar, on network (none: the engine's
// default).
func Service(s job.Spec, secret *SecretRef, network string) swarm.ServiceSpec {
	n := uint64(s.Generators)
	env := []string{
		job.SwarmSlotVar + "={{.Task.Slot}}",
		job.SwarmNodeVar + "={{.Node.ID}}",
	}
	var secrets []*swarm.SecretReference
	if secret != nil {
		env = append(env, job.EnvFileVar+"=/run/secrets/"+SecretTarget)
		secrets = []*swarm.SecretReference{{SecretID: secret.ID, SecretName: secret.Name,
			File: &swarm.SecretReferenceFileTarget{Name: SecretTarget, UID: nobody, GID: nobody, Mode: 0o400}}}
	}
	var nets []swarm.NetworkAttachmentConfig
	if network != "" {
		nets = []swarm.NetworkAttachmentConfig{{Target: network}}
	}
	labels := s.Labels()
	none := swarm.RestartPolicyConditionNone
	grace := stopGrace
	return swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: ServiceName(s), Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{
				Image:   s.Image,
				Args:    s.Args(),
				Env:     env,
				Labels:  labels,
				Secrets: secrets,
				// Time to store a partial result and delete the run's keys.
				StopGracePeriod: &grace,
			},
			RestartPolicy: &swarm.RestartPolicy{Condition: none},
			Networks:      nets,
		},
		Mode: swarm.ServiceMode{ReplicatedJob: &swarm.ReplicatedJob{MaxConcurrent: &n, TotalCompletions: &n}},
	}
}

// describeTask is one task's state for an error message.
func describeTask(t swarm.Task) string {
	msg := fmt.Sprintf("task %d (%s): %s", t.Slot, shortID(t.ID), t.Status.State)
	if t.Status.Err != "" {
		msg += ": " + t.Status.Err
	}
	if cs := t.Status.ContainerStatus; cs != nil && cs.ExitCode != 0 {
		msg += fmt.Sprintf(" (exit code %d)", cs.ExitCode)
	}
	return msg
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
