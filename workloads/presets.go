package workloads

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results/suggest"
)

// Preset is a named set of run-flag values that sets up one of the questions
// lockbench answers, so users need not rediscover the combination.
type Preset struct {
	// Name is what --preset takes.
	Name string
	// Description says what the preset measures, in one line.
	Description string
	// Flags holds run-flag values by flag name without dashes (keys, hold,
	// think, ttl, pause-prob, pause, crash-prob, renew-every, rate, lock,
	// concurrency, retry, acquire-timeout, naive-gap). Flags the user sets
	// explicitly are meant to win over these.
	Flags map[string]string
}

// Presets returns the named presets in the order help text lists them. Each
// call builds fresh maps, so callers may modify what they get.
func Presets() []Preset {
	return []Preset{
		{
			Name:        "uncontended",
			Description: "one key per worker and no work: the lock's raw cost and throughput ceiling",
			Flags: map[string]string{
				"keys": "unique",
				"hold": "const:0",
			},
		},
		{
			Name:        "hot-key",
			Description: "half the requests on one key: contention, retries and time-to-acquire under a hotspot",
			Flags: map[string]string{
				"keys":            "hot:1000,0.5",
				"retry":           "exp:1ms,50ms",
				"acquire-timeout": "1s",
			},
		},
		{
			Name:        "zipf",
			Description: "zipf-skewed keys (s=1.1 over 10000): realistic skew between uniform and a single hotspot",
			Flags: map[string]string{
				"keys":  "zipf:10000,1.1",
				"retry": "exp:1ms,50ms",
			},
		},
		{
			Name:        "long-work",
			Description: "work near the TTL with renewal every ttl/3: expiry-during-work and what renewal traffic costs",
			Flags: map[string]string{
				"keys":        "unique",
				"ttl":         "2s",
				"hold":        "lognormal:1500ms,0.3",
				"renew-every": "ttl/3",
			},
		},
		{
			Name:        "gc-pause",
			Description: "holders stall past the TTL before writing: overlaps and stale writes fencing must stop",
			Flags: map[string]string{
				"keys":            "uniform:4",
				"ttl":             "100ms",
				"hold":            "const:5ms",
				"pause-prob":      "0.2",
				"pause":           "const:300ms",
				"retry":           "fixed:2ms",
				"acquire-timeout": "2s",
				"concurrency":     "8",
			},
		},
		{
			Name:        "crash-holders",
			Description: "holders die without releasing: how long an abandoned lease blocks its key",
			Flags: map[string]string{
				"keys":            "uniform:8",
				"ttl":             "1s",
				"hold":            "const:2ms",
				"crash-prob":      "0.05",
				"retry":           "fixed:5ms",
				"acquire-timeout": "15s",
				"concurrency":     "8",
			},
		},
		{
			Name:        "naive-release-race",
			Description: "GET-then-DEL release racing expiry: shows the naive lock deleting another holder's lease",
			Flags: map[string]string{
				"lock":            "naive",
				"keys":            "uniform:2",
				"ttl":             "100ms",
				"hold":            "uniform:40ms,70ms",
				"naive-gap":       "40ms",
				"retry":           "fixed:1ms",
				"acquire-timeout": "2s",
				"concurrency":     "8",
			},
		},
	}
}

// LookupPreset returns the preset called name; its error lists the names
// there are, since a typo is the usual cause.
func LookupPreset(name string) (Preset, error) {
	ps := Presets()
	names := make([]string, len(ps))
	for i, p := range ps {
		if p.Name == strings.TrimSpace(name) {
			return p, nil
		}
		names[i] = p.Name
	}
	return Preset{}, fmt.Errorf("unknown preset %q; %s", name, suggest.Unknown(name, names))
}

// Args renders the preset as command-line flags in name order, for help
// output and for recording what a run was given.
func (p Preset) Args() []string {
	keys := make([]string, 0, len(p.Flags))
	for k := range p.Flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	args := make([]string, len(keys))
	for i, k := range keys {
		args[i] = "--" + k + "=" + p.Flags[k]
	}
	return args
}
