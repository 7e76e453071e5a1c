package compose_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// badURL is a value no backend's URL flag takes.
const badURL = "ftp://"

// TestEveryBackendIsWhole walks the backend registry: each backend is
// registered once, is a backend the locks speak (so some lock runs on it),
// has its kinds (each of which gets the backend's URL flag and takes it as
// a run flag when it runs external servers), accepts its kinds' sample
// URL and refuses a bad one naming its flag, and the targets it owns say
// what a topology without them lacks and are listed by each of its kinds;
// a kind lists an owned target only when its backend owns it. Several
// backends may own one target (every consensus backend has a leader).
func TestEveryBackendIsWhole(t *testing.T) {
	owners := map[compose.FaultTarget][]string{}
	seen := map[string]bool{}
	for _, b := range compose.Backends() {
		info := b.Info()
		t.Run(info.Name, func(t *testing.T) {
			if seen[info.Name] {
				t.Fatalf("registered twice")
			}
			seen[info.Name] = true
			if got, ok := compose.LookupBackend(info.Name); !ok || got.Info().Name != info.Name {
				t.Errorf("LookupBackend(%q) = %v, %v", info.Name, got, ok)
			}
			if len(lockimpl.LocksOn(info.Name)) == 0 {
				t.Errorf("no registered lock speaks %s", info.Name)
			}
			url := info.SampleURL
			// A backend whose servers are named without a scheme
			// (ZooKeeper's host:port,…) lists none.
			if scheme, _, hasScheme := strings.Cut(url, "://"); hasScheme != (len(info.Schemes) > 0) || hasScheme && !slices.Contains(info.Schemes, scheme) {
				t.Errorf("sample URL %q: scheme not among %v", url, info.Schemes)
			}
			if err := b.CheckURL(url); err != nil {
				t.Errorf("CheckURL(%q) = %v", url, err)
			}
			if err := b.CheckURL(badURL); err == nil || !strings.HasPrefix(err.Error(), "--"+info.URLFlag+" ") {
				t.Errorf("CheckURL(%q) = %v, want a refusal naming --%s first", badURL, err, info.URLFlag)
			}
			for target, lacks := range info.Targets {
				if lacks == "" {
					t.Errorf("target %s: no word for a topology without it", target)
				}
				owners[target] = append(owners[target], info.Name)
			}
			kinds := 0
			for _, sh := range compose.Shapes() {
				if sh.Info().Backend != info.Name {
					continue
				}
				kinds++
				spec, err := compose.ParseSpec(sh.Info().Sample)
				if err != nil {
					t.Fatalf("%s: %v", sh.Info().Kind, err)
				}
				kind := spec.Info()
				if kind.URLFlag != info.URLFlag || spec.Backend().Info().Name != info.Name {
					t.Errorf("%s: URL flag %q, backend %q", kind.Kind, kind.URLFlag, spec.Backend().Info().Name)
				}
				if slices.Contains(kind.Providers, compose.ProviderExternal) && !spec.TakesFlag(info.URLFlag) {
					t.Errorf("%s: runs external servers but does not take --%s", kind.Kind, info.URLFlag)
				}
				for target := range info.Targets {
					if !slices.Contains(kind.Targets, target) {
						t.Errorf("%s: its backend owns target %s, which the kind does not list", kind.Kind, target)
					}
				}
			}
			if kinds == 0 {
				t.Errorf("no kind runs it")
			}
		})
	}
	for _, sh := range compose.Shapes() {
		info := sh.Info()
		if _, ok := compose.LookupBackend(info.Backend); !ok {
			t.Errorf("kind %s: backend %q is not registered", info.Kind, info.Backend)
		}
		for _, target := range info.Targets {
			if bs, owned := owners[target]; owned && !slices.Contains(bs, info.Backend) {
				t.Errorf("kind %s lists target %s, which only %v own", info.Kind, target, bs)
			}
		}
	}
}
