package compose_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// TestEveryKindIsWhole checks each registered kind against itself: its
// sample parses and renders back, it has a default lock, faults only from
// providers it runs from, and its canonical fault fits it by the same rule
// plan applies before a run.
func TestEveryKindIsWhole(t *testing.T) {
	seen := map[compose.Kind]bool{}
	for _, sh := range compose.Shapes() {
		info := sh.Info()
		if seen[info.Kind] {
			t.Errorf("kind %s registered twice", info.Kind)
		}
		seen[info.Kind] = true
		spec, err := compose.ParseSpec(info.Sample)
		if err != nil || spec.Kind != info.Kind || spec.String() != info.Sample {
			t.Errorf("%s: sample %q parsed to %+v (%v), rendered %q", info.Kind, info.Sample, spec, err, spec.String())
		}
		if spec.DefaultLock() == "" || spec.LockMisfit(spec.DefaultLock()) != "" {
			t.Errorf("%s: default lock %q does not run on it", info.Kind, spec.DefaultLock())
		}
		for p := range info.Faults {
			if !slices.Contains(info.Providers, p) {
				t.Errorf("%s: faults from provider %s, which it does not run from", info.Kind, p)
			}
		}
		if info.ClockShim == (info.ClockNote != "") {
			t.Errorf("%s: ClockShim %v with note %q: a kind the shim cannot move says why, and only then", info.Kind, info.ClockShim, info.ClockNote)
		}
		if !strings.Contains(compose.SpecHelp(), info.Syntax) {
			t.Errorf("%s: SpecHelp %q does not name %q", info.Kind, compose.SpecHelp(), info.Syntax)
		}
		f, window := spec.CanonicalFault(2*time.Second, 10*time.Second)
		if err := compose.FitFault(f, spec, compose.ProviderLocal); err != nil || window < 10*time.Second || f.At >= window {
			t.Errorf("%s: canonical fault %q over %v does not fit: %v", info.Kind, f.String(), window, err)
		}
		if back, err := compose.ParseFault(f.String()); err != nil || back != f {
			t.Errorf("%s: canonical fault %q does not read back: %+v %v", info.Kind, f.String(), back, err)
		}
		for _, lock := range info.Locks {
			if !slices.Contains(lockimpl.LocksOn(info.Backend), lock) {
				t.Errorf("%s: runs lock %q, which the lock registry does not have on backend %s", info.Kind, lock, info.Backend)
			}
		}
		for lock := range info.LockNotes {
			if _, ok := lockimpl.Describe(lock); !ok || slices.Contains(info.Locks, lock) {
				t.Errorf("%s: a note on lock %q, which is unregistered or runs on it", info.Kind, lock)
			}
		}
	}
}

// TestEveryLockRunsSomewhere: each registered lock runs on at least one
// kind, so --lock help never lists a lock no topology can run.
func TestEveryLockRunsSomewhere(t *testing.T) {
	for _, lock := range lockimpl.Names() {
		if len(compose.KindsWithLock(lock)) == 0 {
			t.Errorf("lock %s runs on no kind", lock)
		}
	}
}

// TestFitFault is the one rule before start-up: a target the kind lacks, a
// fault its provider cannot apply, a node past its nodes.
func TestFitFault(t *testing.T) {
	for _, tc := range []struct {
		topo, provider, fault, bad string
	}{
		{"redlock:3", compose.ProviderLocal, "at=1s kill node=2", ""},
		{"redlock:3", compose.ProviderLocal, "at=1s kill node=3", "out of range"},
		{"redlock:3", compose.ProviderLocal, "at=1s kill primary", "no primary"},
		{"redlock:3", compose.ProviderExternal, "at=1s kill node=0", "external"},
		{"redlock:3", compose.ProviderExternal, "at=1s latency node=0 5ms for=1s", ""},
		{"redlock:3", compose.ProviderDocker, "at=1s clock-jump node=0 +1s", "docker"},
		{"single", compose.ProviderLocal, "at=1s failover shard=0", "shard=S is on cluster:M"},
		{"replicated", compose.ProviderLocal, "at=1s lag-replica for=1s", ""},
		{"cluster:3", compose.ProviderLocal, "at=1s kill primary", "no primary"},
		{"cluster:3", compose.ProviderLocal, "at=1s kill master=3", "shards 0 to 2"},
		{"cluster:3,0", compose.ProviderLocal, "at=1s failover shard=0", "no replicas"},
		{"cluster:3", compose.ProviderExternal, "at=1s failover shard=0", ""},
		{"etcd:3", compose.ProviderLocal, "at=1s kill leader", ""},
		{"etcd:3", compose.ProviderLocal, "at=1s clock-jump node=0 +1s", "Go reads the time"},
		{"single", compose.ProviderLocal, "at=1s kill leader", "leader is on etcd:N"},
		{"postgres", compose.ProviderLocal, "at=1s terminate holder", ""},
		{"postgres", compose.ProviderExternal, "at=1s terminate holder", ""},
		{"postgres", compose.ProviderLocal, "at=1s restart node=0", ""},
		{"postgres", compose.ProviderExternal, "at=1s kill node=0", "external"},
		{"postgres", compose.ProviderLocal, "at=1s kill holder", "target of terminate"},
		{"postgres", compose.ProviderLocal, "at=1s clock-jump node=0 +1s", "clock"},
		{"postgres", compose.ProviderLocal, "at=1s kill primary", "no primary"},
		{"single", compose.ProviderLocal, "at=1s terminate holder", "holder is on postgres"},
		{"zookeeper:3", compose.ProviderLocal, "at=1s expire holder", ""},
		{"zookeeper:3", compose.ProviderExternal, "at=1s expire holder", ""},
		{"zookeeper:3", compose.ProviderLocal, "at=1s kill holder", "target of expire"},
		{"zookeeper:3", compose.ProviderLocal, "at=1s terminate holder", "terminate on zookeeper:3"},
		{"postgres", compose.ProviderLocal, "at=1s expire holder", "expire on postgres"},
		{"nats:3", compose.ProviderLocal, "at=1s expire holder", "nats:3 has no holder"},
		{"etcd:3", compose.ProviderLocal, "at=1s expire holder", "etcd:3 has no holder"},
		{"etcd:3", compose.ProviderLocal, "at=1s isolate leader for=2s", ""},
		{"etcd:3", compose.ProviderLocal, "at=1s isolate node=2 for=2s", ""},
		{"etcd:3", compose.ProviderExternal, "at=1s isolate leader for=2s", "external"},
		{"zookeeper:3", compose.ProviderLocal, "at=1s isolate leader for=2s", ""},
		{"zookeeper:3", compose.ProviderExternal, "at=1s isolate node=1 for=2s", "external"},
		{"nats:3", compose.ProviderLocal, "at=1s isolate leader for=2s", ""},
		{"nats:3", compose.ProviderLocal, "at=1s isolate minority for=2s", ""},
		{"nats:3", compose.ProviderLocal, "at=1s isolate ring for=2s", "nats:3 has no ring"},
		{"nats:1", compose.ProviderLocal, "at=1s isolate node=0 for=2s", "nats:1 has none"},
		{"nats:3", compose.ProviderExternal, "at=1s isolate node=0 for=2s", "external"},
		{"replicated", compose.ProviderLocal, "at=1s isolate primary for=2s", ""},
		{"replicated", compose.ProviderLocal, "at=1s isolate replica for=2s", ""},
		{"replicated", compose.ProviderLocal, "at=1s isolate minority for=2s", "replicated has no minority"},
		{"replicated", compose.ProviderDocker, "at=1s isolate primary for=2s", "docker"},
		{"cluster:3", compose.ProviderLocal, "at=1s isolate master=0 for=2s", ""},
		{"cluster:3", compose.ProviderExternal, "at=1s isolate master=0 for=2s", "external"},
		{"etcd:1", compose.ProviderLocal, "at=1s isolate leader for=2s", "etcd:1 has none"},
		{"single", compose.ProviderLocal, "at=1s isolate node=0 for=2s", "isolate is on "},
		{"redlock:3", compose.ProviderLocal, "at=1s isolate node=0 for=2s", "redlock's servers do not run through"},
		{"postgres", compose.ProviderLocal, "at=1s isolate holder for=2s", "isolate is on replicated, cluster:M, etcd:N, zookeeper:N, nats:N"},
	} {
		spec, err := compose.ParseSpec(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		f, err := compose.ParseFault(tc.fault)
		if err != nil {
			t.Fatal(err)
		}
		err = compose.FitFault(f, spec, tc.provider)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s from %s: %q refused: %v", tc.topo, tc.provider, tc.fault, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s from %s: %q = %v, want an error about %q", tc.topo, tc.provider, tc.fault, err, tc.bad)
		}
	}
}

// TestUnknownKind: a spec with an unregistered kind refuses everything
// rather than panicking.
func TestUnknownKind(t *testing.T) {
	spec := compose.Spec{Kind: "nope"}
	if spec.String() != "nope" || spec.DefaultLock() != "" || spec.LockMisfit("single") == "" || spec.CheckProvider(compose.ProviderLocal) == nil {
		t.Errorf("unknown kind %+v accepted something", spec)
	}
	if _, err := compose.ParseSpec("nope:3"); err == nil || !strings.Contains(err.Error(), "redlock:N") {
		t.Errorf("ParseSpec(nope:3) = %v", err)
	}
}

// TestEveryCanonicalFaultIsInTheHelp walks every lock and every kind it
// runs on: the kind's canonical fault parses back, its words (for
// --with-fault's help) name what the fault does, and the help lists them on
// the kind. A kind added without its words, or with words of another fault,
// fails here.
func TestEveryCanonicalFaultIsInTheHelp(t *testing.T) {
	verb := map[compose.FaultKind]string{compose.FaultKill: "killed", compose.FaultPause: "pause", compose.FaultTerminate: "terminated",
		compose.FaultExpire: "expired", compose.FaultRestart: "restarted", compose.FaultPartition: "partition"}
	help := compose.CanonicalFaultHelp()
	for _, lock := range lockimpl.Names() {
		var shapes []compose.Shape
		for _, sh := range compose.Shapes() {
			if slices.Contains(sh.Info().Locks, lock) {
				shapes = append(shapes, sh)
			}
		}
		if len(shapes) == 0 {
			t.Errorf("lock %s runs on no kind, so --with-fault has no fault for it", lock)
		}
		for _, sh := range shapes {
			k := sh.Info().Kind
			info := sh.Info()
			f, _ := sh.CanonicalFault(2*time.Second, 10*time.Second)
			if _, err := compose.ParseFault(f.String()); err != nil {
				t.Errorf("%s on %s: canonical fault %q does not parse: %v", lock, k, f.String(), err)
			}
			if w, ok := verb[f.Kind]; !ok || !strings.Contains(info.CanonicalFaultText, w) {
				t.Errorf("%s: canonical fault %s, but its words %q do not say %q", k, f.Kind, info.CanonicalFaultText, w)
			}
			listed := strings.Contains(help, info.CanonicalFaultText+" on "+info.Example) ||
				strings.Contains(help, " and "+info.Example)
			if info.CanonicalFaultText == "" || !listed {
				t.Errorf("%s: --with-fault help %q does not list %q on %s", k, help, info.CanonicalFaultText, info.Example)
			}
		}
	}
}
