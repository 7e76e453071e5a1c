package cli

import (
	"strings"
	"testing"
)

func TestScenarioLockBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"scenario", "naive-release", "--lock", "redsync"}, "takes no --lock"},
		{[]string{"scenario", "redlock-node-down", "--lock", "redislock"}, "--lock"},
		{[]string{"scenario", "gc-pause", "--peer-option", "tries=2"}, "give --lock too"},
		{[]string{"scenario", "gc-pause", "--lock", "redislock", "--peer-option", "fail-fast"}, "--peer-option"},
	} {
		code, _, errs := lockbench(t, tc.args...)
		if code != exitBadInput || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q", tc.args, code, errs, tc.says)
		}
	}
}
