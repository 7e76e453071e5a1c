package lockimpl

import (
	"strings"
	"testing"
)

// TestEveryLockBackendIsRegistered walks the lock registry: every lock's
// backend has one line in lockBackends with its builder, and every backend
// but Redis (whose errors are ErrorKind's fallback) classifies its errors.
func TestEveryLockBackendIsRegistered(t *testing.T) {
	seen := map[string]int{}
	for _, b := range lockBackends() {
		seen[b.name]++
		if b.builder == "" {
			t.Errorf("backend %s: no builder named", b.name)
		}
		if (b.errorKind == nil) != (b.name == BackendRedis) {
			t.Errorf("backend %s: classifier set %v, want one for every backend but Redis", b.name, b.errorKind != nil)
		}
	}
	for _, d := range Descriptors() {
		if seen[d.Backend] != 1 {
			t.Errorf("lock %s: backend %q is in lockBackends %d times, want once", d.Name, d.Backend, seen[d.Backend])
		}
	}
}

// TestNewRefusesOtherBackendsLocks: New, which builds the Redis locks,
// refuses each other backend's lock naming the backend and its builder,
// and refuses an unknown name as unknown; it decides by the descriptors.
func TestNewRefusesOtherBackendsLocks(t *testing.T) {
	for _, d := range Descriptors() {
		if d.Backend == BackendRedis {
			continue
		}
		b, _ := lookupLockBackend(d.Backend)
		_, err := New(d.Name, nil, Options{})
		if err == nil || !strings.Contains(err.Error(), "runs on the "+d.Backend+" backend") || !strings.Contains(err.Error(), b.builder) {
			t.Errorf("New(%s) = %v, want a refusal naming %s and %s", d.Name, err, d.Backend, b.builder)
		}
	}
	if _, err := New("sinlge", nil, Options{}); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("New(sinlge) = %v, want unknown", err)
	}
}
