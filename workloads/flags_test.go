package workloads

import (
	"strings"
	"testing"
)

func TestParseProbability(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{{"0", 0}, {"1", 1}, {"0.2", 0.2}, {" .05 ", 0.05}, {"1e-3", 0.001}, {"-0", 0}} {
		got, err := ParseProbability("pause-prob", tc.s)
		if err != nil || got != tc.want {
			t.Errorf("ParseProbability(%q) = %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "1.5", "-0.1", "NaN", "inf", "5%", "half"} {
		_, err := ParseProbability("pause-prob", s)
		want := `--pause-prob "` + s + `": want a probability from 0 to 1`
		if err == nil || err.Error() != want {
			t.Errorf("ParseProbability(%q) error = %v, want %s", s, err, want)
		}
	}
	if _, err := ParseProbability("--crash-prob", "2"); err == nil || !strings.HasPrefix(err.Error(), `--crash-prob "2"`) {
		t.Errorf("dashed name: error = %v", err)
	}
}
