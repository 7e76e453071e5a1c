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
}

// NewScrapeConfig checks the user's targets, interval and job name.
func NewScrapeConfig(targets []string, interval time.Duration, job string) (ScrapeConfig, error) {
	c := ScrapeConfig{Interval: interval, Job: job}
	for _, t := range targets {
		target, err := ParseTarget(t)
		if err != nil {
			return ScrapeConfig{}, err
		}
		c.Targets = append(c.Targets, target)
	}
	switch {
	case len(c.Targets) == 0:
		return ScrapeConfig{}, fmt.Errorf("--target: want at least one HOST:PORT")
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
    static_configs:
      - targets:
`, iv, iv, c.Job, iv, iv)
	for _, t := range c.Targets {
		fmt.Fprintf(&b, "          - '%s'\n", t)
	}
	return b.String()
}
