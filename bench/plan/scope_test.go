package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// scopeSamples are a valid value, away from its default, of every scoped
// flag; needsMet are the other flags that meet a flag's Needs. A scoped flag
// added to the table without a sample fails TestEveryFlagOutOfScopeIsRefused.
var scopeSamples = map[string]string{
	"redis": "redis://127.0.0.1:1", "etcd": "http://127.0.0.1:1", "provider": "docker", "image": "redis:7.2",
	"persistence": "aof-always", "node-timeout": "5ms", "drift-factor": "0.02", "fail-fast": "true",
	"peer-option": "tries=2", "naive-gap": "1ms", "wait-replicas": "1", "wait-timeout": "50ms",
	"restart-delay": "1s", "think": "1ms", "pause": "const:1ms", "pipeline": "auto", "pool-size": "4",
	"postgres": "postgres://127.0.0.1:1/db", "renewer": "goroutine", "burst": "const:1ms",
	"zookeeper": "127.0.0.1:1", "nats": "nats://127.0.0.1:1", "unfenced-writes": "true",
	"driver-procs": "shared", "driver-timeout": "1s",
}

var needsMet = map[string]Values{
	"wait-timeout":   {"wait-replicas": {"1"}, "lock": {"single"}},
	"restart-delay":  {"fault": {"at=1s restart node=0"}},
	"think":          {},
	"pause":          {"pause-prob": {"0.1"}},
	"renewer":        {"renew-every": {"ttl/3"}},
	"burst":          {"burst-prob": {"0.1"}},
	"driver-procs":   {"lock": {"exec:prog"}},
	"driver-timeout": {"lock": {"exec:prog"}},
}

var needsUnmet = map[string]Values{
	"wait-timeout":   {},
	"restart-delay":  {"fault": {"at=1s kill node=0"}},
	"think":          {"rate": {"100"}},
	"pause":          {},
	"renewer":        {"renew-every": {"off"}},
	"burst":          {},
	"driver-procs":   {},
	"driver-timeout": {},
}

// runContext is one run the walk tries a flag on: a lock on a topology from
// a provider.
type runContext struct {
	lock, topology, provider string
}

func (rc runContext) values(topo compose.Spec) Values {
	v := Values{"lock": {rc.lock}, "topology": {rc.topology}}
	switch rc.provider {
	case compose.ProviderDocker:
		v.Set("provider", "docker")
	case compose.ProviderExternal:
		n := max(1, topo.Shape().URLs(topo))
		flag, url := topo.Info().URLFlag, scopeSamples[topo.Info().URLFlag]
		for range n {
			v[flag] = append(v[flag], url)
		}
	}
	return v
}

// inScope says whether f's lock, kind and provider scope hold for rc.
func inScope(f Flag, rc runContext, topo compose.Spec) bool {
	sc := f.Scope
	return (sc.Locks == nil || slices.Contains(sc.Locks, rc.lock)) &&
		(!sc.ByKind || topo.TakesFlag(f.Name)) &&
		(sc.Providers == nil || slices.Contains(sc.Providers, rc.provider))
}

// TestEveryFlagOutOfScopeIsRefused walks the flag table: every scoped flag,
// on every lock × topology kind × provider where a run is valid without it,
// is refused naming the flag when out of its scope (and when its Needs are
// not met), and is not refused by the scope rule within it.
func TestEveryFlagOutOfScopeIsRefused(t *testing.T) {
	var contexts []runContext
	for _, lock := range lockimpl.Names() {
		for _, sh := range compose.Shapes() {
			for _, prov := range []string{compose.ProviderLocal, compose.ProviderDocker, compose.ProviderExternal} {
				contexts = append(contexts, runContext{lock, sh.Info().Sample, prov})
			}
		}
	}
	for _, f := range RunFlags() {
		sc := f.Scope
		if sc.Locks == nil && !sc.ByKind && sc.Providers == nil && sc.Needs == nil {
			continue
		}
		sample, ok := scopeSamples[f.Name]
		if !ok {
			t.Errorf("--%s is scoped but has no sample value in scopeSamples", f.Name)
			continue
		}
		refused, accepted := 0, 0
		for _, rc := range contexts {
			topo, _ := compose.ParseSpec(rc.topology)
			for _, met := range []bool{true, false} {
				if sc.Needs == nil && !met {
					continue
				}
				base := rc.values(topo)
				extra := needsMet[f.Name]
				if !met {
					extra = needsUnmet[f.Name]
				}
				for k, v := range extra {
					base[k] = v
				}
				if f.Name == "provider" && rc.provider != compose.ProviderExternal {
					base.Set("provider", sample)
					if topo.CheckProvider(sample) != nil {
						continue
					}
				}
				if _, err := Expand(base); err != nil {
					continue // not a valid run without the flag either
				}
				with := base.Clone()
				if f.Multi {
					with[f.Name] = append(with[f.Name], sample)
				} else {
					with.Set(f.Name, sample)
				}
				if f.Name == "redis" || f.Name == "etcd" {
					// The kind's own URL flag is in the run already
					// when it is external: in scope and accepted.
					if topo.Info().URLFlag == f.Name {
						if rc.provider == compose.ProviderExternal {
							accepted++
						}
						continue
					}
					with.Set(f.Name, sample)
				}
				_, err := Expand(with)
				want := inScope(f, rc, topo) && met
				scopeRefusal := err != nil && IsInputError(err) && strings.HasPrefix(err.Error(), "--"+f.Name+":") &&
					(strings.Contains(err.Error(), "ignore") || strings.Contains(err.Error(), "never configured"))
				switch {
				case want && scopeRefusal:
					t.Errorf("--%s %s on %+v (needs met %v) is in scope, but refused: %v", f.Name, sample, rc, met, err)
				case !want && !scopeRefusal:
					t.Errorf("--%s %s on %+v (needs met %v) is out of scope, but: %v", f.Name, sample, rc, met, err)
				case want:
					accepted++
				default:
					refused++
				}
			}
		}
		if refused == 0 || accepted == 0 {
			t.Errorf("--%s: refused in %d runs and accepted in %d; the walk should find both", f.Name, refused, accepted)
		}
	}
}

// TestIssueCasesAreRefused are the cases issue 23 found accepted and
// recorded as if applied.
func TestIssueCasesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		v    Values
		flag string
	}{
		{Values{"redis": {"redis://127.0.0.1:1"}, "persistence": {"aof-always"}}, "persistence"},
		{Values{"redis": {"redis://127.0.0.1:1"}, "provider": {"docker"}}, "provider"},
		{Values{"restart-delay": {"5s"}}, "restart-delay"},
		{Values{"restart-delay": {"5s"}, "topology": {"redlock:3"}, "fault": {"at=1s kill node=0"}}, "restart-delay"},
		{Values{"naive-gap": {"1ms"}, "lock": {"fenced"}}, "naive-gap"},
		{Values{"wait-timeout": {"1s"}, "topology": {"replicated"}}, "wait-timeout"},
		{Values{"fail-fast": {"true"}}, "fail-fast"},
		{Values{"drift-factor": {"0.02"}}, "drift-factor"},
		{Values{"node-timeout": {"5ms"}}, "node-timeout"},
		{Values{"pause": {"const:1s"}}, "pause"},
		{Values{"think": {"1ms"}, "rate": {"100"}}, "think"},
		{Values{"provider": {"docker"}, "topology": {"cluster:3"}}, "provider"},
		{Values{"redis": {"redis://127.0.0.1:1"}, "topology": {"redlock:3"}}, "redis"},
	} {
		_, err := Expand(tc.v)
		if err == nil || !IsInputError(err) || !strings.HasPrefix(err.Error(), "--"+tc.flag+":") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line of bad input naming --%s", tc.v, err, tc.flag)
		}
	}
}

// TestCommandFlags: a command's flags leave out those it refuses or
// replaces, and carry its own defaults.
func TestCommandFlags(t *testing.T) {
	names := func(fs []Flag) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	tune, refused := CommandFlags("tune-ttl")
	if slices.Contains(names(tune), "ttl") || refused["ttl"] == "" || refused["renew-every"] == "" {
		t.Errorf("tune-ttl takes %v, refuses %v", names(tune), refused)
	}
	for _, f := range tune {
		if want := map[string]string{"crash-prob": "0.05", "retry": "exp:1ms,50ms", "workload": "long-work", "duration": "8s"}[f.Name]; want != "" && f.Default != want {
			t.Errorf("tune-ttl --%s default %q, want %q", f.Name, f.Default, want)
		}
	}
	cost, _ := CommandFlags("lock-cost")
	for _, n := range []string{"lock", "topology", "fault", "format"} {
		if slices.Contains(names(cost), n) {
			t.Errorf("lock-cost takes run flag --%s, which it replaces or refuses", n)
		}
	}
	v, err := WithCommandDefaults("tune-ttl", Values{"workload": {"crash-holders"}})
	if err != nil || v.Has("crash-prob") || v.Get("retry") != "" || v.Get("duration") != "8s" {
		t.Errorf("tune-ttl over crash-holders: %v (%v); want the preset's crash-prob and retry kept, the window 8s", v, err)
	}
}

// TestLockScopedFlagsFollowTheRegistry: a flag scoped to locks applies to
// exactly the locks whose descriptor lists it, and every flag a descriptor
// lists is in the table, so a lock cannot name a flag plan does not have.
func TestLockScopedFlagsFollowTheRegistry(t *testing.T) {
	scoped := map[string]bool{}
	for _, f := range RunFlags() {
		if f.Scope.Locks == nil {
			continue
		}
		scoped[f.Name] = true
		if want := lockimpl.LocksTakingFlag(f.Name); !slices.Equal(f.Scope.Locks, want) {
			t.Errorf("--%s applies to %v; the lock registry lists it on %v", f.Name, f.Scope.Locks, want)
		}
	}
	for _, d := range lockimpl.Descriptors() {
		for _, name := range d.RunFlags {
			if !scoped[name] {
				t.Errorf("lock %s takes --%s, which is not a lock-scoped flag of the table", d.Name, name)
			}
		}
	}
}

// TestEveryBackendIsArmed: each backend compose registers has an arm
// function, and plan arms nothing compose does not bring up.
func TestEveryBackendIsArmed(t *testing.T) {
	arms := armers()
	for _, b := range compose.Backends() {
		if _, ok := arms[b.Info().Name]; !ok {
			t.Errorf("backend %s has no arm function in armers (backends.go)", b.Info().Name)
		}
	}
	for name := range arms {
		if _, ok := compose.LookupBackend(name); !ok {
			t.Errorf("armers arms %q, which compose does not register", name)
		}
	}
}

// TestResourceBackendByScheme: --resource picks the backend keeping the
// resource by the URL's scheme, and anything else goes to Redis, whose
// refusal names the other forms.
func TestResourceBackendByScheme(t *testing.T) {
	for _, tc := range []struct{ url, backend string }{
		{"redis://127.0.0.1:6379", lockimpl.BackendRedis},
		{"rediss://127.0.0.1:6379", lockimpl.BackendRedis},
		{"postgres://u@127.0.0.1:5432/db", lockimpl.BackendPostgres},
		{"postgresql://u@127.0.0.1:5432/db", lockimpl.BackendPostgres},
		{"http://127.0.0.1:2379", lockimpl.BackendRedis}, // etcd keeps no resource
		{"ftp://x", lockimpl.BackendRedis},
	} {
		if b, pb := resourceBackend(tc.url); b.Info().Name != tc.backend || pb.resource == nil {
			t.Errorf("%s: backend %s (resource %v), want %s", tc.url, b.Info().Name, pb.resource != nil, tc.backend)
		}
	}
	for _, tc := range []struct{ url, bad string }{
		{"redis://127.0.0.1:6379", ""},
		{"postgres://u@127.0.0.1:5432/db", ""},
		{"ftp://x", "(or postgres://…)"},
		{"http://127.0.0.1:2379", "(or postgres://…)"},
	} {
		p := &parser{}
		p.checkResourceURL(tc.url)
		switch {
		case tc.bad == "" && p.err != nil:
			t.Errorf("%s: refused: %v", tc.url, p.err)
		case tc.bad != "" && (p.err == nil || !strings.Contains(p.err.Error(), tc.bad) || !strings.Contains(p.err.Error(), "resource")):
			t.Errorf("%s: %v, want a --resource refusal naming %q", tc.url, p.err, tc.bad)
		}
	}
}

// TestCheckCommandRefusals checks the flag table's conditional refusal:
// capacity refuses -c unless --rate is given, and other commands take it.
func TestCheckCommandRefusals(t *testing.T) {
	for _, tc := range []struct {
		command string
		given   Values
		refused bool
	}{
		{"capacity", Values{"concurrency": {"8"}}, true},
		{"capacity", Values{"concurrency": {"8"}, "rate": {"500"}}, false},
		{"capacity", Values{"rate": {"500"}}, false},
		{"capacity", Values{}, false},
		{"run", Values{"concurrency": {"8"}}, false},
	} {
		err := CheckCommandRefusals(tc.command, tc.given)
		if (err != nil) != tc.refused {
			t.Errorf("%s %v: error %v, want refused %v", tc.command, tc.given, err, tc.refused)
		}
		if err != nil && (!IsInputError(err) || !strings.HasPrefix(err.Error(), "--concurrency: capacity ramps concurrency itself")) {
			t.Errorf("%s %v: %q is not one line naming the flag and the command", tc.command, tc.given, err)
		}
	}
	takes, refused := CommandFlags("capacity")
	if _, ok := refused["concurrency"]; ok || !slices.ContainsFunc(takes, func(f Flag) bool { return f.Name == "concurrency" }) {
		t.Error("capacity's -c, refused only without --rate, left out of its flags")
	}
}
