package main

import (
	"strings"
	"testing"
)

// TestRenewalCheckBadInput: every refusal is one line naming the flag,
// exit 2, before anything starts.
func TestRenewalCheckBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"renewal-check", "--cases", "gc-pause"}, "--cases"},
		{[]string{"renewal-check", "--locks", "single,naive"}, "--locks"},
		{[]string{"renewal-check", "--trials", "0"}, "--trials"},
		{[]string{"renewal-check", "--trials", "31"}, "--trials"},
		{[]string{"renewal-check", "--format", "csv"}, "--format"},
		{[]string{"renewal-check", "--html", "/nonexistent/dir/page.html"}, "--html"},
		{[]string{"renewal-check", "extra"}, "takes no arguments"},
	} {
		code, _, errs := lockbench(t, tc.args...)
		if code != exitBadInput || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q", tc.args, code, errs, tc.says)
		}
	}
}
