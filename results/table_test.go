package results

import "testing"

// TestRateText: a load column shows a rate once per second, never a
// schedule with "/s" glued to it.
func TestRateText(t *testing.T) {
	for rate, want := range map[string]string{
		"500":                  "500/s",
		"50/100ms":             "50/100ms",
		"100,2000:10s,2000:5s": "100..2000/s",
		"2000,0:30s":           "0..2000/s",
		"1,x:1s":               "1,x:1s",
	} {
		if got := rateText(rate); got != want {
			t.Errorf("rateText(%q) = %q, want %q", rate, got, want)
		}
	}
}
