package failovermap

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
)

func TestParseAxes(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		parse   func(string) ([]time.Duration, error)
		in      string
		want    []time.Duration
		wantErr string
	}{
		{name: "lags with a bare 0", parse: ParseLags, in: "0,5ms, 100ms", want: []time.Duration{0, 5 * ms, 100 * ms}},
		{name: "holds", parse: ParseHolds, in: "1ms,1s", want: []time.Duration{ms, time.Second}},
		{name: "empty lag", parse: ParseLags, in: " ", wantErr: `--lag: " ": empty; want durations from 0s to 5s`},
		{name: "not a duration", parse: ParseLags, in: "0,fast", wantErr: `"fast" is not a duration`},
		{name: "lag past 5s", parse: ParseLags, in: "6s", wantErr: "6s is out of range"},
		{name: "negative lag", parse: ParseLags, in: "-5ms", wantErr: "-5ms is out of range"},
		{name: "a hold of 0", parse: ParseHolds, in: "0", wantErr: "--hold: \"0\": 0s is out of range; want durations from 1ms to 1m0s"},
		{name: "a value twice", parse: ParseHolds, in: "1s,1000ms", wantErr: "1s given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !plan.IsInputError(err) {
					t.Fatalf("err = %v, want an input error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestParseMitigationsTopologyLocks(t *testing.T) {
	if m, err := ParseMitigations("none, wait,waitaof"); err != nil || len(m) != 3 || m[1] != Wait {
		t.Errorf("ParseMitigations = %v, %v", m, err)
	}
	for in, want := range map[string]string{"wiat": "did you mean wait?", "none,none": "none given twice", "": "want none, wait"} {
		if _, err := ParseMitigations(in); err == nil || !strings.Contains(err.Error(), want) || !plan.IsInputError(err) {
			t.Errorf("ParseMitigations(%q) = %v, want an input error with %q", in, err, want)
		}
	}
	for in, want := range map[string]string{"single": "no replica to promote", "redlock:5": "no replica to promote",
		"cluster:3,0": "want replicated or cluster:M,R", "nope": "want replicated or cluster:M,R"} {
		if _, err := ParseTopology(in); err == nil || !strings.Contains(err.Error(), want) || !plan.IsInputError(err) {
			t.Errorf("ParseTopology(%q) = %v, want an input error with %q", in, err, want)
		}
	}
	spec, err := ParseTopology("replicated")
	if err != nil {
		t.Fatal(err)
	}
	if got := DefaultLocks(spec); got != "single,fenced,redislock,redsync" {
		t.Errorf("DefaultLocks(replicated) = %q", got)
	}
	for in, want := range map[string]string{"naive": "single, fenced, redislock, redsync on replicated", "redlock": "on replicated",
		"single,single": "single given twice"} {
		if _, err := ParseLocks(in, spec); err == nil || !strings.Contains(err.Error(), want) || !plan.IsInputError(err) {
			t.Errorf("ParseLocks(%q) = %v, want an input error with %q", in, err, want)
		}
	}
	if _, err := ParseTopology("cluster:3,1"); err != nil {
		t.Errorf("cluster:3,1 refused: %v", err)
	}
}

// FuzzParseAxes: whatever the user types, the axis parsers answer a list
// within bounds or one line naming the flag; they never panic.
func FuzzParseAxes(f *testing.F) {
	for _, s := range []string{"0,100ms,500ms", "1ms", "", ",", "5s,5s", "-1s", "1e9h", "0x10ms", "wait,none", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) ([]time.Duration, error){ParseLags, ParseHolds} {
			ds, err := parse(s)
			if err != nil {
				if strings.Contains(err.Error(), "\n") || !plan.IsInputError(err) {
					t.Fatalf("%q: error not one input line: %v", s, err)
				}
				continue
			}
			if len(ds) == 0 || len(ds) > maxCells {
				t.Fatalf("%q: %d values accepted", s, len(ds))
			}
			for _, d := range ds {
				if d < 0 || d > maxHold {
					t.Fatalf("%q: %v accepted", s, d)
				}
			}
		}
		if _, err := ParseMitigations(s); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("%q: mitigation error not one line: %v", s, err)
		}
	})
}
