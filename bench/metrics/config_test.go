package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results/resultstest"
)

// TestScrapeConfigGolden holds the configuration's text to a golden file
// (go test ./bench/metrics -update rewrites it).
func TestScrapeConfigGolden(t *testing.T) {
	c, err := NewScrapeConfig([]string{"127.0.0.1:9464", "gen-1:9464", "[::1]:9465"}, Swarm{}, 2*time.Second, "lockbench")
	if err != nil {
		t.Fatal(err)
	}
	resultstest.Golden(t, "prometheus.yml", []byte(c.YAML()))
}

// TestScrapeConfigSwarmGolden holds the Swarm mode's text (dns_sd_configs
// on tasks.SERVICE) to a golden file; TestPrometheusScrapesASwarmJob runs
// a real Prometheus on such a configuration.
func TestScrapeConfigSwarmGolden(t *testing.T) {
	c, err := NewScrapeConfig(nil, Swarm{Services: []string{"lockbench-r1", "lockbench-r2"}, Port: 9464}, 500*time.Millisecond, "lockbench")
	if err != nil {
		t.Fatal(err)
	}
	resultstest.Golden(t, "prometheus-swarm.yml", []byte(c.YAML()))
}

func TestNewScrapeConfig(t *testing.T) {
	swarm := Swarm{Services: []string{"lockbench-abc"}, Port: 9464}
	for _, c := range []struct {
		targets  []string
		swarm    Swarm
		interval time.Duration
		job      string
		err      string
	}{
		{[]string{"127.0.0.1:9464"}, Swarm{}, time.Second, "lockbench", ""},
		{[]string{"gen-0:1", "gen-1:65535"}, Swarm{}, 100 * time.Millisecond, "a.b_c-d", ""},
		{nil, swarm, time.Second, "lockbench", ""},
		{[]string{"gen-0:1"}, swarm, time.Second, "lockbench", ""},
		{nil, Swarm{Services: []string{"a"}, Port: 1}, time.Second, "lockbench", ""},
		{nil, Swarm{}, time.Second, "lockbench", "--target: want at least one"},
		{nil, Swarm{Services: []string{"-x"}, Port: 9464}, time.Second, "lockbench", "--swarm-service"},
		{nil, Swarm{Services: []string{"x-"}, Port: 9464}, time.Second, "lockbench", "--swarm-service"},
		{nil, Swarm{Services: []string{"tasks x"}, Port: 9464}, time.Second, "lockbench", "--swarm-service"},
		{nil, Swarm{Services: []string{""}, Port: 9464}, time.Second, "lockbench", "--swarm-service"},
		{nil, Swarm{Services: []string{strings.Repeat("a", 64)}, Port: 9464}, time.Second, "lockbench", "--swarm-service"},
		{nil, Swarm{Services: []string{"a"}}, time.Second, "lockbench", "port 0"},
		{[]string{":9464"}, Swarm{}, time.Second, "lockbench", "a host Prometheus can reach"},
		{[]string{"0.0.0.0:9464"}, Swarm{}, time.Second, "lockbench", "a host Prometheus can reach"},
		{[]string{"host"}, Swarm{}, time.Second, "lockbench", "want HOST:PORT"},
		{[]string{"host:0"}, Swarm{}, time.Second, "lockbench", "want HOST:PORT"},
		{[]string{"host:http"}, Swarm{}, time.Second, "lockbench", "want HOST:PORT"},
		{[]string{"ho'st:1"}, Swarm{}, time.Second, "lockbench", "characters"},
		{[]string{"h:1"}, Swarm{}, 50 * time.Millisecond, "lockbench", "--scrape-interval"},
		{[]string{"h:1"}, Swarm{}, time.Second, "lock bench", "--job"},
		{[]string{"h:1"}, Swarm{}, time.Second, "", "--job"},
	} {
		_, err := NewScrapeConfig(c.targets, c.swarm, c.interval, c.job)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v %v %q: %v", c.targets, c.interval, c.job, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v %v %q: error %v, want one saying %q", c.targets, c.interval, c.job, err, c.err)
		}
	}
}

// FuzzParseTarget: any accepted target is one line a YAML single-quoted
// string holds as is, and the error for a refused one names the flag.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9464", ":9464", "gen-0:1", "[::1]:9", "a'b:1", "x:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTarget(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--target ") || strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error %q", err)
			}
			return
		}
		if got != s || strings.ContainsAny(got, "'\n\r") {
			t.Errorf("accepted %q as %q", s, got)
		}
	})
}

// FuzzSwarmService: an accepted service name is one DNS name a YAML
// single-quoted string holds as is; a refused one is one line naming
// --swarm-service.
func FuzzSwarmService(f *testing.F) {
	for _, s := range []string{"lockbench-r1", "-x", "a'b", "tasks x", "a.b_c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := NewScrapeConfig(nil, Swarm{Services: []string{s}, Port: 9464}, time.Second, "lockbench")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--swarm-service ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q", err)
			}
			return
		}
		if strings.ContainsAny(s, "'\n\r #:") || !strings.Contains(c.YAML(), "'tasks."+s+"'") {
			t.Errorf("accepted %q", s)
		}
	})
}

// FuzzParseOTLPEndpoint: an accepted endpoint is an http(s) URL with a
// path; a refused one is one line naming --otlp.
func FuzzParseOTLPEndpoint(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:4318", "https://otel:4318/v1/metrics", "collector:4318", "http://", "ftp://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseOTLPEndpoint(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--otlp ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q", err)
			}
			return
		}
		if !strings.HasPrefix(got, "http://") && !strings.HasPrefix(got, "https://") {
			t.Errorf("accepted %q as %q", s, got)
		}
	})
}
