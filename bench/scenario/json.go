package scenario

import (
	"encoding/json"
	"io"
)

// verdictJSON is a verdict as --format json gives it: every variant's sums
// and the stored result of each of its trials, so a script reads the
// scenario's answer without parsing the table.
type verdictJSON struct {
	Scenario    string        `json:"scenario"`
	Description string        `json:"description"`
	Violation   string        `json:"violation,omitempty"`
	Variants    []variantJSON `json:"variants"`
}

type variantJSON struct {
	Name            string      `json:"name"`
	Mitigated       bool        `json:"mitigated"`
	Trials          []trialJSON `json:"trials"`
	Violated        int         `json:"violated"`
	DoubleGrants    int64       `json:"double_grants"`
	Overruns        int64       `json:"overruns"`
	StaleAccepted   int64       `json:"stale_writes_accepted"`
	FencingRejected int64       `json:"fencing_rejected"`
	ErrorShare      float64     `json:"failed_attempts_share"`
	AcquireP99US    float64     `json:"acquire_p99_us_median"`
	AcquiredPerS    float64     `json:"acquired_per_s_median"`
	// LongestGapsS is present only for the scenarios that measure
	// availability (a trial's longest time without an acquisition).
	LongestGapsS []float64 `json:"longest_gap_s,omitempty"`
}

type trialJSON struct {
	Run      string `json:"run"`
	Violated bool   `json:"violated"`
}

// WriteVerdictJSON prints v as JSON.
func WriteVerdictJSON(w io.Writer, v Verdict) error {
	out := verdictJSON{Scenario: v.Scenario.Name, Description: v.Scenario.Description, Violation: v.Scenario.Violation}
	for _, vv := range v.Variants {
		j := variantJSON{Name: vv.Variant.Name, Mitigated: vv.Variant.Mitigated, Violated: vv.Violated,
			DoubleGrants: vv.DoubleGrants, Overruns: vv.Overruns, StaleAccepted: vv.StaleAccepted, FencingRejected: vv.FencingRejected,
			ErrorShare: vv.ErrorShare, AcquireP99US: vv.AcquireP99US, AcquiredPerS: vv.AcquiredPerS, Trials: []trialJSON{}}
		if v.Scenario.Availability {
			j.LongestGapsS = vv.GapsS
		}
		for _, t := range vv.Trials {
			id := ""
			if t.Result != nil {
				id = t.Result.ID
			}
			j.Trials = append(j.Trials, trialJSON{Run: id, Violated: t.Violated})
		}
		out.Variants = append(out.Variants, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
