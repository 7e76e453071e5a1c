package workloads

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRateConstant(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{
		{"", 0}, {"0", 0}, {"500", 500}, {"0.5", 0.5}, {"50/100ms", 500}, {"1/10s", 0.1},
		{"100/s", 100}, {" 60 / 1m ", 1}, {"1e9", 1e9},
	} {
		got, err := ParseRate("rate", tc.s)
		if err != nil || !reflect.DeepEqual(got, ConstantRate(tc.want)) {
			t.Errorf("ParseRate(%q) = %+v, %v; want %v", tc.s, got, err, tc.want)
		}
		if got.Staged() || got.Open() != (tc.want > 0) {
			t.Errorf("ParseRate(%q): staged %v open %v", tc.s, got.Staged(), got.Open())
		}
	}
}

func TestParseRateStages(t *testing.T) {
	for _, tc := range []struct {
		s      string
		want   Rate
		window time.Duration
	}{
		{"100,2000:30s,2000:1m", Rate{Start: 100, Stages: []RateStage{{2000, 30 * time.Second}, {2000, time.Minute}}}, 90 * time.Second},
		{"0,100:10s", Rate{Start: 0, Stages: []RateStage{{100, 10 * time.Second}}}, 10 * time.Second},
		{"500, 0:5s , 500:5s", Rate{Start: 500, Stages: []RateStage{{0, 5 * time.Second}, {500, 5 * time.Second}}}, 10 * time.Second},
		{"10/100ms,1/10ms:1s", Rate{Start: 100, Stages: []RateStage{{100, time.Second}}}, time.Second},
		{"5,0:1s", Rate{Start: 5, Stages: []RateStage{{0, time.Second}}}, time.Second},
	} {
		got, err := ParseRate("rate", tc.s)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v", tc.s, got, err, tc.want)
			continue
		}
		if !got.Staged() || !got.Open() || got.Window() != tc.window {
			t.Errorf("ParseRate(%q): staged %v open %v window %v; want staged, open, %v", tc.s, got.Staged(), got.Open(), got.Window(), tc.window)
		}
	}
}

func TestParseRateRefuses(t *testing.T) {
	for _, tc := range []struct{ s, why string }{
		{"fast", "not a number"}, {"-5", "negative"}, {"NaN", "not a number"}, {"Inf", "not a number"},
		{"5/0s", "positive duration"}, {"5/-1s", "positive duration"}, {"5/x", "positive duration"},
		{"2e9", "more than 1e9"}, {"2/1ns", "more than 1e9"},
		{"x,100:1s", "start rate: not a number"},
		{"100,", `stage 1 "": a stage is TARGET:DURATION`},
		{"100,200", `stage 1 "200": a stage is TARGET:DURATION`},
		{"100,200:0s", "positive duration such as 30s"},
		{"100,200:-1s", "positive duration"},
		{"100,200:soon", "positive duration"},
		{"100,-1:1s", "target: negative"},
		{"100,3e9:1s", "target: more than 1e9"},
		{"100,200:1s,:1s", `stage 2 ":1s": target: not a number`},
		{"0,0:5s", "every rate is 0"},
		{"0,0:5s,0:1s", "every rate is 0"},
		{"1,1:100h,1:100h", "more than 168h0m0s"},
	} {
		_, err := ParseRate("rate", tc.s)
		if err == nil {
			t.Errorf("ParseRate(%q) accepted", tc.s)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, `--rate "`+tc.s+`": `) || !strings.Contains(msg, tc.why) || !strings.HasSuffix(msg, "want e.g. 500, 50/100ms or 100,2000:30s") || strings.Contains(msg, "\n") {
			t.Errorf("ParseRate(%q) error = %q, want one line naming --rate, %q and the accepted forms", tc.s, msg, tc.why)
		}
	}
	if _, err := ParseRate("--rate", "x"); err == nil || !strings.HasPrefix(err.Error(), `--rate "x"`) {
		t.Errorf("dashed name: error = %v", err)
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"", "0", "500", "50/100ms", "1/10s", "100,2000:30s,2000:1m", "0,100:1s", "5,0:1s,5:1s", "1,1:1ns", "1e9,0:1s", "a,b:c", ",,:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate("rate", s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if r.Start < 0 || r.Start > MaxRate {
			t.Fatalf("ParseRate(%q): start %v out of range", s, r.Start)
		}
		for _, st := range r.Stages {
			if st.Target < 0 || st.Target > MaxRate || st.Duration <= 0 {
				t.Fatalf("ParseRate(%q): bad stage %+v", s, st)
			}
		}
		if r.Window() < 0 || r.Window() > MaxStagedWindow {
			t.Fatalf("ParseRate(%q): window %v", s, r.Window())
		}
		if r.Staged() && !r.Open() {
			t.Fatalf("ParseRate(%q): staged but closed loop", s)
		}
		again, err := ParseRate("rate", r.String())
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip %q -> %q -> %+v, %v", s, r.String(), again, err)
		}
	})
}
