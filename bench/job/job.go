// Package job is the one description of a run of many generators that every
// engine runs the same way: a Kubernetes Indexed Job (bench/k8s) and a Docker
// Swarm replicated job (bench/swarm) are both made from a Spec, so the
// generators' flags, environment, start time, metrics port and the way their
// results are collected mean the same on both.
package job

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
)

// MetricsPort is where each generator serves Prometheus metrics.
const MetricsPort = 9464

// ResultsDir is where a generator stores its own result inside its
// container; the result that counts is the one it prints to its log.
const ResultsDir = "/tmp/runs"

// GeneratorIDEnv is the variable an engine sets to the generator's index
// (0 to Generators-1): lockbench run reads it as --generator-id.
const GeneratorIDEnv = "LOCKBENCH_GENERATOR_ID"

// Label keys on what a job creates, so that it can be found again.
const (
	// LabelName is the job's name.
	LabelName = "app.kubernetes.io/name"
	// LabelRunID is the run id its generators share.
	LabelRunID = "lockbench/run-id"
)

// ownFlags are the run flags the job sets for every generator.
var ownFlags = []string{"--run-id", "--generators", "--generator-id", "--start-at", "--metrics-addr", "--format", "--out"}

// Spec is a run of many generators.
type Spec struct {
	// Name names the job; RunID is shared by its generators.
	Name, RunID string
	// Generators is how many run at once, one task or pod each.
	Generators int
	// Image is the lockbench image.
	Image string
	// StartAt is when every generator starts its warm-up.
	StartAt time.Time
	// RunFlags are the run's own flags (targets, workload), passed through.
	// None may carry a password: those go in Secret.
	RunFlags []string
	// NoMetrics leaves --metrics-addr out: generators that share one
	// network stack (Swarm's host network) cannot all listen on MetricsPort.
	NoMetrics bool
	// Secret holds the run flags that carry passwords as environment
	// variables (LOCKBENCH_REDIS=redis://:password@…), which an engine gives
	// the generators through its secret store, never in the task's command
	// line or manifest.
	Secret map[string]string
}

// namePattern is what both engines accept as a name (Kubernetes' DNS label,
// at most 52 so that pod names derived from it fit).
var namePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`)

// Validate refuses a spec that cannot make a job.
func (s Spec) Validate() error {
	switch {
	case s.Generators < 1 || s.Generators > 10_000:
		return fmt.Errorf("--generators %d: want 1 to 10000", s.Generators)
	case !namePattern.MatchString(s.Name):
		return fmt.Errorf("--name %q: want lower-case letters, digits and '-', at most 52, starting and ending with a letter or digit", s.Name)
	case s.Image == "":
		return fmt.Errorf("--image: want an image reference")
	}
	for _, f := range s.RunFlags {
		if hasPassword(f) {
			return fmt.Errorf("run flag %q carries a password the job's spec would show; give it with --env-secret NAME", redactAll(f))
		}
		for _, own := range ownFlags {
			if f == own || strings.HasPrefix(f, own+"=") {
				return fmt.Errorf("run flag %s: the job sets it for every generator; leave it out", own)
			}
		}
	}
	for k := range s.Secret {
		if !strings.HasPrefix(k, "LOCKBENCH_") {
			return fmt.Errorf("secret variable %s: want a LOCKBENCH_ variable", k)
		}
	}
	return nil
}

// Args is the command line of every generator (after the image's
// entrypoint, lockbench): the run flags, then the job's own. The generator's
// index is not in it: it comes from GeneratorIDEnv, set by the engine.
func (s Spec) Args() []string {
	args := append([]string{"run"}, s.RunFlags...)
	args = append(args, "--run-id", s.RunID, "--generators", strconv.Itoa(s.Generators),
		"--start-at", s.StartAt.UTC().Format(time.RFC3339Nano))
	if !s.NoMetrics {
		args = append(args, "--metrics-addr", ":"+strconv.Itoa(MetricsPort))
	}
	return append(args, "--format", "marked", "--out", ResultsDir, "-q")
}

// Labels are put on everything the job creates.
func (s Spec) Labels() map[string]string {
	return map[string]string{LabelName: "lockbench", LabelRunID: s.RunID}
}

// SecretFile is the Secret rendered as an environment file (KEY=VALUE lines,
// sorted), the form both `kubectl create secret generic --from-env-file` and
// LOCKBENCH_ENV_FILE read.
func (s Spec) SecretFile() []byte {
	keys := make([]string, 0, len(s.Secret))
	for k := range s.Secret {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, s.Secret[k])
	}
	return []byte(b.String())
}

// MoveSecrets takes every run flag that carries a password out of RunFlags
// into Secret, as the variable lockbench run reads it from (all values of a
// repeated flag, comma-separated, since the variable replaces the flag).
// Flags are recognised by the run flag table: a password anywhere else (a
// flag value that is not a server URL, a stray argument) stays and Validate
// refuses it.
func (s Spec) MoveSecrets() (Spec, error) {
	table := map[string]plan.Flag{}
	for _, f := range plan.RunFlags() {
		table[f.Name] = f
		for _, a := range f.Aliases {
			table[a] = f
		}
	}
	type occurrence struct {
		name  string
		value string
		at    []int // indexes of the tokens it spans
	}
	var occ []occurrence
	for i := 0; i < len(s.RunFlags); i++ {
		tok := s.RunFlags[i]
		if !strings.HasPrefix(tok, "-") {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		f, ok := table[name]
		if !ok || f.Bool {
			continue
		}
		if inline {
			occ = append(occ, occurrence{f.Name, value, []int{i}})
			continue
		}
		if i+1 < len(s.RunFlags) {
			occ = append(occ, occurrence{f.Name, s.RunFlags[i+1], []int{i, i + 1}})
			i++
		}
	}
	secretFlags := map[string]bool{}
	for _, o := range occ {
		if table[o.name].URL && hasPassword(o.value) {
			secretFlags[o.name] = true
		}
	}
	if len(secretFlags) == 0 {
		return s, nil
	}
	drop := map[int]bool{}
	values := map[string][]string{}
	for _, o := range occ {
		if !secretFlags[o.name] {
			continue
		}
		if strings.Contains(o.value, ",") {
			return s, fmt.Errorf("--%s %s: a URL with a comma cannot be given through the environment, which separates values with commas", o.name, redactAll(o.value))
		}
		values[o.name] = append(values[o.name], o.value)
		for _, i := range o.at {
			drop[i] = true
		}
	}
	out := s
	out.RunFlags = nil
	for i, tok := range s.RunFlags {
		if !drop[i] {
			out.RunFlags = append(out.RunFlags, tok)
		}
	}
	out.Secret = map[string]string{}
	for k, v := range s.Secret {
		out.Secret[k] = v
	}
	for name, vs := range values {
		out.Secret[EnvVar(name)] = strings.Join(vs, ",")
	}
	return out, nil
}

// EnvVar is the LOCKBENCH_* variable that mirrors a run flag.
func EnvVar(flag string) string {
	return "LOCKBENCH_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// userinfo finds scheme://user:password@ in a flag value.
var userinfo = regexp.MustCompile(`://[^/@\s]*:([^/@\s]+)@`)

func hasPassword(s string) bool { return userinfo.MatchString(s) }

// redactAll replaces every password in s with xxxxx.
func redactAll(s string) string {
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.LastIndex(m[:len(m)-1], ":")
		return m[:i+1] + "xxxxx@"
	})
}
