package cli

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

// TestRunFormatsArePlans checks that run prints every --format plan accepts
// and that plan refuses the formats run has no writer for: --format is a
// run flag, parsed by plan, written by runOutput.
func TestRunFormatsArePlans(t *testing.T) {
	offered := runOutput().Formats()
	for _, f := range []results.Format{results.FormatTable, results.FormatJSON, results.FormatCSV, results.FormatMarked, results.FormatHTML, "xml"} {
		_, err := plan.Expand(plan.Values{"format": {string(f)}})
		if accepted := err == nil; accepted != slices.Contains(offered, f) {
			t.Errorf("--format %s: plan accepts it %v (%v), run offers %v", f, accepted, err, offered)
		}
	}
}
