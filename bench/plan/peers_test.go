package plan

import (
	"strings"
	"testing"
)

func TestPeerLocksOnTopologies(t *testing.T) {
	for _, tc := range []struct {
		lock, topology string
		ok             bool
	}{
		{"redsync", "single", true},
		{"redsync", "redlock:5", true},
		{"redsync", "replicated", true},
		{"redislock", "single", true},
		{"redislock", "replicated", true},
		{"redislock", "redlock:3", false},
		{"single", "redlock:3", false},
		{"redlock", "replicated", false},
	} {
		t.Run(tc.lock+"@"+tc.topology, func(t *testing.T) {
			plans, err := Expand(Values{"lock": {tc.lock}, "topology": {tc.topology}})
			switch {
			case tc.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !tc.ok && (err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--lock")):
				t.Fatalf("got %v, want an input error naming --lock", err)
			case tc.ok && plans[0].Lock != tc.lock:
				t.Fatalf("plan lock %q", plans[0].Lock)
			}
		})
	}
}

func TestPeerOptionFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Values
		bad  string // the flag the error must name; "" for none
		want []string
	}{
		{name: "redsync tries", v: Values{"lock": {"redsync"}, "peer-option": {"tries=32", "retry-delay=5ms"}}},
		{name: "redislock metadata", v: Values{"lock": {"redislock"}, "peer-option": {"metadata=x"}}},
		{name: "on lockbench's own lock", v: Values{"peer-option": {"tries=2"}}, bad: "peer-option", want: []string{"single"}},
		{name: "not the lock's", v: Values{"lock": {"redislock"}, "peer-option": {"fail-fast"}}, bad: "peer-option", want: []string{"redsync's"}},
		{name: "a redlock flag redsync would ignore", v: Values{"lock": {"redsync"}, "fail-fast": {"true"}}, bad: "fail-fast", want: []string{"--peer-option fail-fast"}},
		{name: "node timeout on redsync", v: Values{"lock": {"redsync"}, "node-timeout": {"5ms"}}, bad: "node-timeout", want: []string{"timeout-factor"}},
		{name: "drift factor on redislock", v: Values{"lock": {"redislock"}, "drift-factor": {"0.02"}}, bad: "drift-factor", want: []string{"metadata=TEXT"}},
		{name: "wait-replicas on redislock", v: Values{"lock": {"redislock"}, "topology": {"replicated"}, "wait-replicas": {"1"}}, bad: "wait-replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, err := Expand(tc.v)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.bad != "" && (err == nil || !IsInputError(err) || !strings.HasPrefix(err.Error(), "--"+tc.bad+":")):
				t.Fatalf("got %v, want an input error naming --%s", err, tc.bad)
			case tc.bad == "" && plans[0].LockOptions.Peer.Tries < 1:
				t.Fatalf("peer options %+v", plans[0].LockOptions.Peer)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// One short run per peer records the library, its version and the settings
// used; every run, lockbench's own single too, records the client's CPU per
// acquisition.
func TestPeerRunRecordsLibraryAndClientCPU(t *testing.T) {
	for _, lock := range []string{"redsync", "redislock", "single"} {
		t.Run(lock, func(t *testing.T) {
			r := execute(t, "lock", lock, "concurrency", "2", "duration", "500ms")
			if r.Contention.Acquired == 0 || r.TotalErrors() != 0 {
				t.Fatalf("acquired %d, errors %v", r.Contention.Acquired, r.Errors)
			}
			if lock == "single" && (r.Lock.Library != "" || r.Lock.Settings != nil) {
				t.Fatalf("lockbench's own lock recorded as a library: %+v", r.Lock)
			}
			if lock != "single" && (r.Lock.Library == "" || r.Lock.Version == "" || r.Lock.Settings["tries"] != "1" || r.Lock.LibraryDefaults["tries"] == "") {
				t.Fatalf("lock %+v", r.Lock)
			}
			if !r.Client.Measured() || r.Client.CPUUS <= 0 || r.Client.CPUUSPerAcquire == nil || *r.Client.CPUUSPerAcquire <= 0 {
				t.Fatalf("client %+v", r.Client)
			}
		})
	}
}
