package advise

import (
	"strings"
	"testing"
)

// TestFaultVerdictNamesInconclusive: a fault experiment whose fault found
// nobody inside, or that acquired nothing, could not have failed; the page
// says so instead of reading its zero incidents as a pass. One that failed
// is conclusive whatever its exposure, and one not measured says nothing.
func TestFaultVerdictNamesInconclusive(t *testing.T) {
	zero, some := int64(0), int64(12)
	for _, tc := range []struct {
		name string
		cell Cell
		want string
	}{
		{"nobody inside", Cell{Candidate: "single@replicated", Fault: "kill primary", Acquired: 40, Exposed: &zero},
			"Inconclusive: nobody was inside when the fault fired"},
		{"nothing acquired", Cell{Candidate: "single@replicated", Fault: "kill primary", Exposed: &some},
			"Inconclusive: nothing was acquired"},
		{"holders inside", Cell{Candidate: "single@replicated", Fault: "kill primary", Acquired: 40, Exposed: &some}, ""},
		{"a failure is conclusive", Cell{Candidate: "single@replicated", Fault: "kill primary", Acquired: 40, Exposed: &zero, DoubleGrants: 2}, ""},
		{"exposure not recorded", Cell{Candidate: "single@replicated", Fault: "kill primary", Acquired: 40}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var text strings.Builder
			for _, p := range faultVerdict([]Cell{tc.cell}).Answer {
				text.WriteString(p.Text)
			}
			got := text.String()
			if tc.want == "" && strings.Contains(got, "Inconclusive") || !strings.Contains(got, tc.want) {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
		})
	}
}
