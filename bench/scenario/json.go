package scenario

import (
	"encoding/json"
	"io"

	"github.com/lockbench/lockbench/bench/verdict"
)

// verdictJSON is a verdict as --format json gives it: every variant's sums
// and the stored result of each of its trials, so a script reads the
// scenario's answer without parsing the table.
type verdictJSON struct {
	Scenario    string        `json:"scenario"`
	Description string        `json:"description"`
	Violation   string        `json:"violation,omitempty"`
	Variants    []variantJSON `json:"variants"`
	// Differences set each mitigated variant against each unmitigated one
	// (exact test at 95%).
	Differences []string `json:"differences,omitempty"`
}

type variantJSON struct {
	Name      string      `json:"name"`
	Mitigated bool        `json:"mitigated"`
	Trials    []trialJSON `json:"trials"`
	Violated  int         `json:"violated"`
	// Conclusive counts the trials that could have shown the violation;
	// the rate and its 95% interval are over them (absent where the
	// scenario has no violation).
	Conclusive *int      `json:"conclusive,omitempty"`
	Rate       *rateJSON `json:"violation_rate,omitempty"`
	// Verdict is the k-of-n rule's word (violated, safe, undecided,
	// inconclusive) and Decision its evidence: for undecided, the more
	// trials that would decide it.
	Verdict  string                 `json:"verdict,omitempty"`
	Decision *verdict.TrialDecision `json:"decision,omitempty"`
	// IdleAfterFault: no conclusive trial granted anything after its fault.
	IdleAfterFault  bool    `json:"granted_nothing_after_fault,omitempty"`
	Statement       string  `json:"statement,omitempty"`
	DoubleGrants    int64   `json:"double_grants"`
	Overruns        int64   `json:"overruns"`
	StaleAccepted   int64   `json:"stale_writes_accepted"`
	FencingRejected int64   `json:"fencing_rejected"`
	ErrorShare      float64 `json:"failed_attempts_share"`
	AcquireP99US    float64 `json:"acquire_p99_us_median"`
	AcquiredPerS    float64 `json:"acquired_per_s_median"`
	// LongestGapsS is present only for the scenarios that measure
	// availability (a trial's longest time without an acquisition).
	LongestGapsS []float64 `json:"longest_gap_s,omitempty"`
}

type rateJSON struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

type trialJSON struct {
	Run        string `json:"run"`
	Violated   bool   `json:"violated"`
	Conclusive bool   `json:"conclusive"`
	// Why says why a trial is inconclusive.
	Why string `json:"inconclusive_why,omitempty"`
	// Exposure is the holders at risk when the hazard struck; null where
	// the variant has no such hazard.
	Exposure *int64 `json:"exposure"`
}

// WriteVerdictJSON prints v as JSON.
func WriteVerdictJSON(w io.Writer, v Verdict) error {
	out := verdictJSON{Scenario: v.Scenario.Name, Description: v.Scenario.Description, Violation: v.Scenario.Violation,
		Differences: v.Scenario.Differences(v)}
	for _, vv := range v.Variants {
		j := variantJSON{Name: vv.Variant.Name, Mitigated: vv.Variant.Mitigated, Violated: vv.Violated,
			DoubleGrants: vv.DoubleGrants, Overruns: vv.Overruns, StaleAccepted: vv.StaleAccepted, FencingRejected: vv.FencingRejected,
			ErrorShare: vv.ErrorShare, AcquireP99US: vv.AcquireP99US, AcquiredPerS: vv.AcquiredPerS, Trials: []trialJSON{}}
		if v.Scenario.Availability {
			j.LongestGapsS = vv.GapsS
		}
		if v.Scenario.violated != nil {
			n := vv.Conclusive
			j.Conclusive, j.IdleAfterFault, j.Statement = &n, vv.IdleAfterFault, v.Scenario.Statement(vv)
			j.Rate = &rateJSON{Low: vv.Rate.Low, High: vv.Rate.High}
			d := vv.Decision
			j.Verdict, j.Decision = vv.Word(), &d
		}
		for _, t := range vv.Trials {
			id := ""
			if t.Result != nil {
				id = t.Result.ID
			}
			tj := trialJSON{Run: id, Violated: t.Violated, Conclusive: t.Conclusive, Why: t.Why}
			if t.Exposure >= 0 {
				x := t.Exposure
				tj.Exposure = &x
			}
			j.Trials = append(j.Trials, tj)
		}
		out.Variants = append(out.Variants, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
