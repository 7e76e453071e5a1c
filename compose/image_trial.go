package compose

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// TrialImage is the tag of the image BuildTrialImage makes: lockbench with
// the servers of a trial, for trials run as Swarm tasks on this machine's
// engine (scenario --engine swarm) without a registry.
const TrialImage = "lockbench/trial:local"

// trialPrograms are the server programs the trial image carries: the ones
// the local provider starts for the Redis kinds (a sentinel is
// redis-server --sentinel, also reachable as redis-sentinel).
var trialPrograms = []string{"redis-server"}

// TrialImageOptions configures BuildTrialImage.
type TrialImageOptions struct {
	// Tag names the image; empty means TrialImage.
	Tag string
	// Binary is the static lockbench to copy; empty means the running one.
	Binary string
	// RedisServer is the redis-server binary to copy; empty looks it up on
	// PATH.
	RedisServer string
	// Log, when set, receives what goes into the image and the engine's
	// build output.
	Log io.Writer
}

// trialDockerfile runs lockbench as nobody in /tmp, where the local
// provider makes its servers' directories; the trial prints its result to
// the log, where it is collected.
const trialDockerfile = `FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
WORKDIR /tmp
USER 65534:65534
ENTRYPOINT ["lockbench"]
CMD ["help"]
`

// BuildTrialImage assembles a FROM scratch image of a static lockbench and
// this machine's redis-server (also named redis-sentinel) with every shared
// library ldd lists for it, through the engine's API and without pulling
// anything, as BuildLocalImage does. A trial inside it brings up its own
// servers as local processes, exactly as it would on this machine.
func BuildTrialImage(ctx context.Context, opts TrialImageOptions) (ImageInfo, error) {
	if opts.Tag == "" {
		opts.Tag = TrialImage
	}
	bin, err := staticLockbench(opts.Binary)
	if err != nil {
		return ImageInfo{}, err
	}
	server := opts.RedisServer
	if server == "" {
		p, err := exec.LookPath("redis-server")
		if err != nil {
			return ImageInfo{}, ErrNoRedisServer
		}
		server = p
	}
	files, err := withLibraries(ctx, []imageFile{{src: bin, dst: "/usr/local/bin/lockbench"},
		{src: server, dst: "/usr/local/bin/redis-server"}}, []string{server})
	if err != nil {
		return ImageInfo{}, fmt.Errorf("trial image: %w", err)
	}
	links := []imageLink{{name: "/usr/local/bin/redis-sentinel", target: "redis-server"}}
	return buildImage(ctx, opts.Tag, trialDockerfile, files, links, opts.Log,
		map[string]string{"org.lockbench.image": "trial-local", "org.lockbench.redis-server": server})
}

// TrialImageMisfit says in one line why a run of topology (a --topology
// value; "" is the default, single) with faults (--fault values) cannot
// run inside the trial image: a server program the image does not carry,
// or a fault that needs what it lacks (the clock shim's C compiler). It is
// "" when the run fits; a topology or fault that does not parse is left to
// the run's own refusal.
func TrialImageMisfit(topology string, faults []string) string {
	if topology == "" {
		topology = string(KindSingle)
	}
	spec, err := ParseSpec(topology)
	if err != nil {
		return ""
	}
	if p := spec.Info().Program; !slices.Contains(trialPrograms, p) {
		return fmt.Sprintf("its servers (%s, topology %s) are not in the trial image, which carries %s", p, topology, strings.Join(trialPrograms, ", "))
	}
	var fs []FaultSpec
	for _, f := range faults {
		if spec, err := ParseFault(f); err == nil {
			fs = append(fs, spec)
		}
	}
	var armed UpOptions
	armed.ArmFaults(fs)
	if armed.ClockShim {
		return "its clock fault needs a C compiler (cc) to build the clock shim, which the trial image does not carry"
	}
	return ""
}

// TrialImageNextStep says how to make TrialImage on this machine, for a
// command that needs it and found it missing: from binary (this lockbench)
// where it is static, else from a static build.
func TrialImageNextStep(binary string) string {
	if checkStatic(binary) == nil {
		return "lockbench image build trial makes it from this lockbench and this machine's redis-server"
	}
	return "this lockbench is not a static executable: CGO_ENABLED=0 go build -o lockbench-static ./cmd/lockbench, then lockbench-static image build trial"
}
