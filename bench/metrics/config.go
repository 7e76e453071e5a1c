package metrics

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ScrapeConfig is a Prometheus configuration that scrapes lockbench
// generators: what `lockbench metrics prometheus-config` writes.
type ScrapeConfig struct {
	// Targets are the generators' --metrics-addr, HOST:PORT each.
	Targets []string
	// Interval is how often each is scraped; at most a run's window over
	// two, so that rate() over the run has two samples.
	Interval time.Duration
	// Job is the job_name, which Prometheus adds as the job label.
	Job string
	// SwarmServices are Docker Swarm services whose tasks are generators
	// (lockbench swarm job's NAME-RUNID): Prometheus finds them by the
	// engine's DNS, tasks.SERVICE, from a container on the job's network.
	SwarmServices []string
	// SwarmPort is the port the tasks serve /metrics on.
	SwarmPort int
}

// swarmService is a Swarm service name as the engine takes it (a DNS
// label: tasks.NAME must resolve).
var swarmService = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?$`)

// Swarm is where Prometheus finds generators run as Docker Swarm tasks.
type Swarm struct {
	// Services are the services whose tasks are generators.
	Services []string
	// Port is the port every task serves /metrics on.
	Port int
}

// NewScrapeConfig checks the user's targets, Swarm services, interval and
// job name: at least one target or service.
func NewScrapeConfig(targets []string, sw Swarm, interval time.Duration, job string) (ScrapeConfig, error) {
	c := ScrapeConfig{Interval: interval, Job: job, SwarmPort: sw.Port}
	for _, t := range targets {
		target, err := ParseTarget(t)
		if err != nil {
			return ScrapeConfig{}, err
		}
		c.Targets = append(c.Targets, target)
	}
	for _, s := range sw.Services {
		if !swarmService.MatchString(s) {
			return ScrapeConfig{}, fmt.Errorf("--swarm-service %q: want a Swarm service name (letters, digits, - _ ., at most 63; swarm job's is NAME-RUNID)", s)
		}
		c.SwarmServices = append(c.SwarmServices, s)
	}
	switch {
	case len(c.Targets) == 0 && len(c.SwarmServices) == 0:
		return ScrapeConfig{}, fmt.Errorf("--target: want at least one HOST:PORT (or a --swarm-service)")
	case len(c.SwarmServices) > 0 && (sw.Port < 1 || sw.Port > 65535):
		return ScrapeConfig{}, fmt.Errorf("swarm tasks' port %d: want 1 to 65535", sw.Port)
	case interval < 100*time.Millisecond:
		return ScrapeConfig{}, fmt.Errorf("--scrape-interval %v: want 100ms or more", interval)
	case !regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`).MatchString(job):
		return ScrapeConfig{}, fmt.Errorf("--job %q: want letters, digits, . _ - (at most 64)", job)
	}
	return c, nil
}

// ParseTarget checks one --target: HOST:PORT with a port number, as
// Prometheus's static_configs takes it (a wildcard host is refused: a
// scraper needs an address to reach).
func ParseTarget(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	switch {
	case err != nil || perr != nil || n < 1 || n > 65535:
		return "", fmt.Errorf("--target %q: want HOST:PORT of a generator's --metrics-addr, e.g. 127.0.0.1:9464", s)
	case host == "" || host == "0.0.0.0" || host == "::":
		return "", fmt.Errorf("--target %q: want a host Prometheus can reach, e.g. 127.0.0.1:%s or gen-0:%s", s, port, port)
	case strings.ContainsAny(host, "'\"\n #"):
		return "", fmt.Errorf("--target %q: the host has characters no address has", s)
	}
	return s, nil
}

// YAML renders the configuration. Prometheus needs
// --enable-feature=native-histograms (2.40 and later, up to 3.x) to keep
// the native histograms; without it, it keeps the classic buckets.
func (c ScrapeConfig) YAML() string {
	var b strings.Builder
	iv := c.Interval.String()
	fmt.Fprintf(&b, `# Prometheus scrape configuration for lockbench generators, written by
# lockbench metrics prometheus-config. Start Prometheus with
#   prometheus --config.file=THIS --enable-feature=native-histograms
# to keep lockbench_latency_seconds as native histograms (without the flag
# it keeps the classic _bucket series). Give each generator
# --metrics-linger of two scrape intervals or more, so the last scrape
# reads its final figures.
global:
  scrape_interval: %s
  evaluation_interval: %s
scrape_configs:
  - job_name: %s
    scrape_interval: %s
    scrape_timeout: %s
`, iv, iv, c.Job, iv, iv)
	if len(c.Targets) > 0 {
		b.WriteString("    static_configs:\n      - targets:\n")
		for _, t := range c.Targets {
			fmt.Fprintf(&b, "          - '%s'\n", t)
		}
	}
	if len(c.SwarmServices) > 0 {
		// tasks.SERVICE answers one A record per running task; refreshed
		// every interval, since a job's tasks start and finish within
		// seconds (Prometheus's default is 30 s).
		fmt.Fprintf(&b, "    dns_sd_configs:\n      - names:\n")
		for _, s := range c.SwarmServices {
			fmt.Fprintf(&b, "          - 'tasks.%s'\n", s)
		}
		fmt.Fprintf(&b, "        type: A\n        port: %d\n        refresh_interval: %s\n", c.SwarmPort, iv)
	}
	return b.String()
}
