package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
)

// PrometheusImage is the tag of the image BuildPrometheusImage makes.
const PrometheusImage = "lockbench/prometheus:local"

// PrometheusConfigPath is where the Prometheus image reads its
// configuration: copy one there (lockbench metrics prometheus-config
// writes it) before the container starts.
const PrometheusConfigPath = "/etc/prometheus/prometheus.yml"

// PrometheusPort is the port the image's Prometheus listens on.
const PrometheusPort = 9090

// ErrNoPrometheus is returned by BuildPrometheusImage when no prometheus
// binary is given and none is on PATH.
var ErrNoPrometheus = errors.New("prometheus not found on PATH: install Debian's prometheus (make prometheus)")

// PrometheusImageOptions configures BuildPrometheusImage.
type PrometheusImageOptions struct {
	// Tag names the image; empty means PrometheusImage.
	Tag string
	// Prometheus is the binary to copy; empty looks it up on PATH.
	Prometheus string
	// Log, when set, receives what goes into the image and the engine's
	// build output.
	Log io.Writer
}

// prometheusDockerfile runs Prometheus as nobody with its data in /tmp and
// native histograms kept (lockbench exports its latencies as both).
const prometheusDockerfile = `FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
WORKDIR /tmp
USER 65534:65534
EXPOSE 9090
ENTRYPOINT ["prometheus", "--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/tmp/prometheus", "--web.listen-address=:9090", "--enable-feature=native-histograms"]
`

// BuildPrometheusImage assembles a FROM scratch image of this machine's
// prometheus (Debian's is dynamically linked: the libraries ldd lists and
// the loader go in with it), for a Prometheus on a Swarm job's overlay
// network, where it finds the generators by the engine's DNS. As
// BuildLocalImage, nothing is pulled.
func BuildPrometheusImage(ctx context.Context, opts PrometheusImageOptions) (ImageInfo, error) {
	if opts.Tag == "" {
		opts.Tag = PrometheusImage
	}
	bin := opts.Prometheus
	if bin == "" {
		p, err := exec.LookPath("prometheus")
		if err != nil {
			return ImageInfo{}, ErrNoPrometheus
		}
		bin = p
	}
	files, err := withLibraries(ctx, []imageFile{{src: bin, dst: "/usr/local/bin/prometheus"}}, []string{bin})
	if err != nil {
		return ImageInfo{}, fmt.Errorf("prometheus image: %w", err)
	}
	return buildImage(ctx, opts.Tag, prometheusDockerfile, files, nil, opts.Log,
		map[string]string{"org.lockbench.image": "prometheus-local", "org.lockbench.prometheus": bin})
}
