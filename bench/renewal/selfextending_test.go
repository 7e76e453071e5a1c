package renewal

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// TestSelfExtendingCases: on rueidislock and valkeylock, restart-empty
// runs its self-extending form (no renewal by the holder, work under one
// TTL, master 0 restarted), and every other case is n/a with a reason of
// its own: no column is absent.
func TestSelfExtendingCases(t *testing.T) {
	for _, name := range []string{lockimpl.LockRueidislock, lockimpl.LockValkeylock} {
		var l Lock
		for _, c := range Locks() {
			if c.Name == name {
				l = c
			}
		}
		if !l.SelfExtending || l.Absent != "" {
			t.Fatalf("%s: %+v; want a self-extending column, not absent", name, l)
		}
		for _, c := range All() {
			ok, why := c.Applies(l)
			if c.Name != "restart-empty" {
				if ok || why == "" {
					t.Errorf("%s on %s: applies %v (%q); want n/a with why", c.Name, name, ok, why)
				}
				continue
			}
			if !ok {
				t.Fatalf("restart-empty on %s: n/a (%s)", name, why)
			}
			f := c.Flags(l)
			hold := strings.TrimPrefix(f.Get("hold"), "uniform:")
			_, hi, _ := strings.Cut(hold, ",")
			if d, err := time.ParseDuration(hi); err != nil || d >= l.TTL || f.Get("renew-every") != "" {
				t.Errorf("restart-empty on %s: hold %s, renew-every %q; want work under the TTL %v and no renewal", name, f.Get("hold"), f.Get("renew-every"), l.TTL)
			}
			if n := len(f["fault"]); n != faultsPerRun || !strings.Contains(f["fault"][0], "restart node=0") {
				t.Errorf("restart-empty on %s: faults %q", name, f["fault"])
			}
			if c.on(l).Loss != LossAtFault {
				t.Errorf("restart-empty on %s: loss %v, want at the fault", name, c.on(l).Loss)
			}
		}
	}
}
