package sweep

import (
	"encoding/json"
	"strings"
	"testing"
)

func perAcq(v float64) *float64 { return &v }

// A tune-ttl candidate that made no acquisition has no attempts per
// acquisition: n/a in the table and null in the JSON, never 0.00.
func TestTuneAttemptsPerAcquisitionOverNone(t *testing.T) {
	cells := tuneFixture()
	cells[0].Acquired, cells[0].AttemptsPerAcquire = 0, nil
	var out strings.Builder
	if err := WriteTune(&out, cells, Recommend(cells, 0.001)); err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, " 1s |") && strings.Contains(line, " off |") {
			row = line
		}
	}
	if !strings.Contains(row, "n/a") || strings.Contains(row, "0.00 ") {
		t.Errorf("row of the candidate without acquisitions %q, want attempts/acquire n/a\n%s", row, out.String())
	}
	raw, err := json.Marshal(cells[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"attempts_per_acquire":null`) {
		t.Errorf("JSON %s, want attempts_per_acquire null", raw)
	}
}
