package plan

import (
	"strings"
	"testing"
)

// TestRedisChecksRefuseRenewalOfSelfExtendingLocks: rueidislock and
// valkeylock take no --renew-every (their library extends the keys); the
// Redis locks that renew still take it, and without it the peers plan.
func TestRedisChecksRefuseRenewalOfSelfExtendingLocks(t *testing.T) {
	for _, tc := range []struct {
		lock, renew string
		refused     bool
	}{
		{"rueidislock", "100ms", true},
		{"valkeylock", "ttl/3", true},
		{"rueidislock", "0", false},
		{"valkeylock", "", false},
		{"redislock", "100ms", false},
		{"single", "ttl/3", false},
	} {
		v := Values{"lock": {tc.lock}}
		if tc.renew != "" {
			v["renew-every"] = []string{tc.renew}
		}
		_, err := Expand(v)
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(), "--renew-every") || !strings.Contains(err.Error(), tc.lock)):
			t.Errorf("%s --renew-every %s: %v, want a refusal naming both", tc.lock, tc.renew, err)
		case !tc.refused && err != nil:
			t.Errorf("%s --renew-every %q: %v", tc.lock, tc.renew, err)
		}
	}
}
