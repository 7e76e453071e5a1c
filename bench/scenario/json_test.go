package scenario

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestWriteVerdictJSON: the JSON verdict carries each variant's sums and
// its trials' run ids, and the gaps only where the scenario measures them.
func TestWriteVerdictJSON(t *testing.T) {
	s, err := Lookup("gc-pause")
	if err != nil {
		t.Fatal(err)
	}
	v := Verdict{Scenario: s, Variants: []VariantVerdict{
		{Variant: s.Variants[0], Violated: 1, Overruns: 7, StaleAccepted: 2, GapsS: []float64{0.5},
			Trials: []Trial{{Result: &results.Result{ID: "run-a"}, Violated: true}}},
	}}
	var buf bytes.Buffer
	if err := WriteVerdictJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Scenario string `json:"scenario"`
		Variants []struct {
			Name          string    `json:"name"`
			Overruns      int64     `json:"overruns"`
			StaleAccepted int64     `json:"stale_writes_accepted"`
			Gaps          []float64 `json:"longest_gap_s"`
			Trials        []struct {
				Run      string `json:"run"`
				Violated bool   `json:"violated"`
			} `json:"trials"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, buf.String())
	}
	if got.Scenario != "gc-pause" || len(got.Variants) != 1 {
		t.Fatalf("got %+v", got)
	}
	vv := got.Variants[0]
	if vv.Name != s.Variants[0].Name || vv.Overruns != 7 || vv.StaleAccepted != 2 || len(vv.Trials) != 1 || vv.Trials[0].Run != "run-a" || !vv.Trials[0].Violated {
		t.Errorf("variant %+v", vv)
	}
	if s.Availability || vv.Gaps != nil {
		t.Errorf("gc-pause measures no availability, yet gaps %v", vv.Gaps)
	}
}
