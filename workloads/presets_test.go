package workloads

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// presetFlagNames are the run flags a preset may set; a name outside it
// would be silently ignored by the CLI.
func presetFlagNames() []string {
	return []string{"keys", "hold", "think", "ttl", "pause-prob", "pause", "crash-prob", "renew-every",
		"rate", "lock", "concurrency", "retry", "acquire-timeout", "naive-gap"}
}

// checkPresetFlag parses one preset value with the parser its flag uses,
// given the preset's TTL (which --renew-every depends on).
func checkPresetFlag(name, value string, ttl time.Duration) error {
	var err error
	switch name {
	case "keys":
		_, err = ParseKeys(value)
	case "hold", "think", "pause":
		_, err = ParseDist(value)
	case "pause-prob", "crash-prob":
		_, err = ParseProbability(name, value)
	case "renew-every":
		_, err = ParseRenewEvery(value, ttl)
	case "rate":
		_, err = ParseRate(name, value)
	case "ttl", "acquire-timeout", "naive-gap":
		var d time.Duration
		if d, err = time.ParseDuration(value); err == nil && d <= 0 {
			err = strconv.ErrRange
		}
	case "concurrency":
		var n int
		if n, err = strconv.Atoi(value); err == nil && n < 1 {
			err = strconv.ErrRange
		}
	case "retry":
		// lockimpl owns the retry syntax; only its shape is checked here so
		// that this package's tests do not depend on lockimpl.
		kind, args, _ := strings.Cut(value, ":")
		switch kind {
		case "fixed":
			_, err = time.ParseDuration(args)
		case "exp":
			base, ceiling, _ := strings.Cut(args, ",")
			if _, err = time.ParseDuration(base); err == nil {
				_, err = time.ParseDuration(ceiling)
			}
		case "none":
		default:
			err = strconv.ErrSyntax
		}
	case "lock":
		if !slices.Contains([]string{"single", "fenced", "redlock", "naive"}, value) {
			err = strconv.ErrSyntax
		}
	}
	return err
}

func TestPresetsParse(t *testing.T) {
	ps := Presets()
	want := []string{"uncontended", "hot-key", "zipf", "long-work", "gc-pause", "crash-holders", "naive-release-race"}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
		if p.Description == "" || strings.Contains(p.Description, "\n") {
			t.Errorf("preset %s: description %q, want one line", p.Name, p.Description)
		}
		ttl := 30 * time.Second // stands in for the CLI default
		if v, ok := p.Flags["ttl"]; ok {
			var err error
			if ttl, err = time.ParseDuration(v); err != nil {
				t.Errorf("preset %s: ttl %q: %v", p.Name, v, err)
			}
		}
		for name, value := range p.Flags {
			if !slices.Contains(presetFlagNames(), name) {
				t.Errorf("preset %s: unknown flag %q", p.Name, name)
				continue
			}
			if err := checkPresetFlag(name, value, ttl); err != nil {
				t.Errorf("preset %s: --%s=%s: %v", p.Name, name, value, err)
			}
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("preset names %v, want %v", names, want)
	}
}

func TestPresetValues(t *testing.T) {
	p, err := LookupPreset("long-work")
	if err != nil {
		t.Fatal(err)
	}
	ttl, _ := time.ParseDuration(p.Flags["ttl"])
	hold, _ := ParseDist(p.Flags["hold"])
	every, _ := ParseRenewEvery(p.Flags["renew-every"], ttl)
	// The preset exists to put work near the TTL with renewal well inside it.
	if hold.Mean() < ttl/2 || hold.Mean() >= ttl || every != ttl/3 {
		t.Errorf("long-work: ttl %v, hold mean %v, renew every %v", ttl, hold.Mean(), every)
	}
	p, _ = LookupPreset("gc-pause")
	pause, _ := ParseDist(p.Flags["pause"])
	ttl, _ = time.ParseDuration(p.Flags["ttl"])
	if pause.Mean() <= ttl {
		t.Errorf("gc-pause: pause %v does not outlast ttl %v", pause.Mean(), ttl)
	}
	p, _ = LookupPreset("naive-release-race")
	hold, _ = ParseDist(p.Flags["hold"])
	gap, _ := time.ParseDuration(p.Flags["naive-gap"])
	ttl, _ = time.ParseDuration(p.Flags["ttl"])
	// The race needs releases whose GET comes before expiry and whose DEL
	// comes after it, often enough to show up in a short run.
	rng, racy := testRNG(), 0
	for range 10_000 {
		if h := hold.Sample(rng); h < ttl && h+gap >= ttl {
			racy++
		}
	}
	if racy < 1000 {
		t.Errorf("naive-release-race: only %d of 10000 releases straddle the ttl %v", racy, ttl)
	}
}

func TestLookupPreset(t *testing.T) {
	for _, p := range Presets() {
		got, err := LookupPreset(p.Name)
		if err != nil || got.Name != p.Name {
			t.Errorf("LookupPreset(%q) = %v, %v", p.Name, got.Name, err)
		}
	}
	for name, want := range map[string]string{
		"hotkey":  `unknown preset "hotkey"; did you mean hot-key?`,
		"nothing": `unknown preset "nothing"; want one of uncontended, hot-key, zipf, long-work, gc-pause, …`,
	} {
		if _, err := LookupPreset(name); err == nil || err.Error() != want {
			t.Errorf("LookupPreset(%s) error = %v, want %s", name, err, want)
		}
	}
}

func TestPresetsAreFresh(t *testing.T) {
	p, _ := LookupPreset("zipf")
	p.Flags["keys"] = "unique"
	if q, _ := LookupPreset("zipf"); q.Flags["keys"] != "zipf:10000,1.1" {
		t.Error("modifying a returned preset changed the next lookup")
	}
}

func TestPresetArgs(t *testing.T) {
	p, _ := LookupPreset("hot-key")
	got := strings.Join(p.Args(), " ")
	want := "--acquire-timeout=1s --keys=hot:1000,0.5 --retry=exp:1ms,50ms"
	if got != want {
		t.Errorf("Args() = %q, want %q", got, want)
	}
}
