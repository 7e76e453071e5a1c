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

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{
		{"", 0}, {"0", 0}, {"500", 500}, {"0.5", 0.5}, {"50/100ms", 500}, {"1/10s", 0.1},
		{"100/s", 100}, {" 60 / 1m ", 1}, {"1e9", 1e9},
	} {
		got, err := ParseRate("rate", tc.s)
		if err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ s, why string }{
		{"fast", "not a number"}, {"-5", "negative"}, {"NaN", "not a number"}, {"Inf", "not a number"},
		{"5/0s", "positive duration"}, {"5/-1s", "positive duration"}, {"5/x", "positive duration"},
		{"2e9", "more than 1e9"}, {"1/1ns", ""}, {"2/1ns", "more than 1e9"},
	} {
		_, err := ParseRate("rate", tc.s)
		if tc.why == "" {
			if err != nil {
				t.Errorf("ParseRate(%q): %v", tc.s, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), `--rate "`+tc.s+`": `) || !strings.Contains(err.Error(), tc.why) || !strings.HasSuffix(err.Error(), RateHelp) {
			t.Errorf("ParseRate(%q) error = %v, want --rate and %q", tc.s, err, tc.why)
		}
	}
}
