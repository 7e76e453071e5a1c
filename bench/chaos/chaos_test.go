package chaos

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

func choicesOf(t *testing.T, topo string) []compose.FaultSpec {
	t.Helper()
	s, err := compose.ParseSpec(topo)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compose.ChaosChoices(s, compose.ProviderLocal, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGenerateIsSeeded: one seed draws one schedule, another seed another,
// and every drawn schedule keeps its draw's rules.
func TestGenerateIsSeeded(t *testing.T) {
	for _, topo := range []string{"single", "replicated", "etcd:3", "redlock:3", "zookeeper:5", "cluster:3,1"} {
		t.Run(topo, func(t *testing.T) {
			choices := choicesOf(t, topo)
			d := DefaultDraw(time.Minute)
			a, b, c := Generate(42, choices, d), Generate(42, choices, d), Generate(43, choices, d)
			if a.Format(topo) != b.Format(topo) {
				t.Fatalf("seed 42 drew two schedules:\n%s\n%s", a.Format(topo), b.Format(topo))
			}
			if a.Format(topo) == c.Format(topo) {
				t.Errorf("seeds 42 and 43 drew the same schedule:\n%s", a.Format(topo))
			}
			if len(a.Faults) == 0 {
				t.Fatalf("no fault drawn in a minute at 6 a minute")
			}
			checkDraw(t, a, d)
		})
	}
}

// checkDraw holds the draw's rules: inside lead and tail, at most
// MaxOverlap at once, never two of a kind or on a target at once.
func checkDraw(t *testing.T, s Schedule, d Draw) {
	t.Helper()
	end := func(f compose.FaultSpec) time.Duration {
		if f.TakesFor() {
			return f.At + f.For
		}
		return f.At + d.Hold
	}
	for i, f := range s.Faults {
		if f.At < d.Lead || end(f) > d.Window-d.Tail {
			t.Errorf("%s outside %s..%s", f, d.Lead, d.Window-d.Tail)
		}
		if f.TakesFor() && (f.For < d.MinFor || f.For > d.MaxFor) {
			t.Errorf("%s: for= outside %s..%s", f, d.MinFor, d.MaxFor)
		}
		n := 0
		for j, g := range s.Faults {
			if j == i || g.At > f.At || end(g) <= f.At {
				continue
			}
			n++
			if g.Kind == f.Kind || !apart(g, f) {
				t.Errorf("%s and %s in effect together", f, g)
			}
		}
		if n+1 > d.MaxOverlap {
			t.Errorf("%s: %d faults in effect at once, max %d", f, n+1, d.MaxOverlap)
		}
	}
}

// TestScheduleRoundTrip: a drawn schedule written as a file reads back the
// same, and replays with the same faults.
func TestScheduleRoundTrip(t *testing.T) {
	s := Generate(7, choicesOf(t, "etcd:3"), DefaultDraw(2*time.Minute))
	text := s.Format("etcd:3")
	back, err := Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if back.Format("etcd:3") != text {
		t.Errorf("round trip changed it:\n%s\n%s", text, back.Format("etcd:3"))
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"at=1s pause node=0 for=1s\n", "no window line"},
		{"window 10s\nwindow 11s\n", "line 2: window given twice"},
		{"window ten\n", "line 1: window \"ten\""},
		{"window 10s\nseed x\n", "line 2: seed \"x\""},
		{"window 10s\nat=1s pause node=0\n", "line 2: fault"},
		{"window 10s\nat=12s pause node=0 for=1s\n", "not inside the window"},
		{"window 10s\nexplode\n", "line 2: "},
	} {
		_, err := Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", tc.text, err, tc.want)
		}
	}
	s, err := Parse("# a comment\n\nwindow 10s\nseed 3\nat=1s pause node=0 for=1s\n")
	if err != nil || len(s.Faults) != 1 || !s.Drawn || s.Seed != 3 || s.Window != 10*time.Second {
		t.Errorf("Parse = %+v, %v", s, err)
	}
}

// FuzzParse: whatever a schedule file holds, Parse refuses it in one line
// or reads it to a schedule that formats and reads back the same.
func FuzzParse(f *testing.F) {
	f.Add("window 10s\nat=1s pause node=0 for=1s\n")
	f.Add("seed 4\nwindow 1m\nat=2s latency node=1 300ms for=2s\nat=3s clock-jump node=0 +9s for=1s\n")
	f.Add("window 5s\n# c\nat=0s restart node=0\n")
	f.Add("window 10s\nat=1s isolate leader for=2s\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		again, err := Parse(s.Format("x"))
		if err != nil {
			t.Fatalf("reading back %q: %v", s.Format("x"), err)
		}
		if again.Format("x") != s.Format("x") {
			t.Fatalf("round trip changed %q to %q", s.Format("x"), again.Format("x"))
		}
	})
}

// TestShrinkFindsTheCulprit: with a fake run that is unsafe exactly when a
// pause of node=1 is in the schedule, the shrink ends on that fault alone,
// minimal, with the window cut.
func TestShrinkFindsTheCulprit(t *testing.T) {
	s, err := Parse("window 60s\nat=2s latency node=0 200ms for=4s\nat=10s pause node=1 for=4s\nat=20s partition node=2 for=3s\nat=30s restart node=0\n")
	if err != nil {
		t.Fatal(err)
	}
	culprit := func(_ context.Context, s Schedule) (bool, error) {
		return slices.ContainsFunc(s.Faults, func(f compose.FaultSpec) bool { return f.Kind == "pause" }), nil
	}
	got, err := Shrink(context.Background(), s, ShrinkOptions{Tries: 100, MinFor: time.Second, Tail: 3 * time.Second}, culprit)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Minimal || len(got.Smallest.Faults) != 1 || got.Smallest.Faults[0].Kind != "pause" {
		t.Fatalf("shrunk to %+v (minimal %v, %d tries)", got.Smallest.Specs(), got.Minimal, len(got.Tries))
	}
	if f := got.Smallest.Faults[0]; f.For != time.Second || got.Smallest.Window > f.At+f.For+3*time.Second {
		t.Errorf("not shortened: %s, window %s", f, got.Smallest.Window)
	}
	bounded, err := Shrink(context.Background(), s, ShrinkOptions{Tries: 3, MinFor: time.Second, Tail: time.Second}, culprit)
	if err != nil || bounded.Minimal || len(bounded.Tries) != 3 || bounded.Stopped == "" {
		t.Errorf("a shrink of 3 tries: minimal %v, %d tries, stopped %q, %v", bounded.Minimal, len(bounded.Tries), bounded.Stopped, err)
	}
}

// TestShrinkTriesEachScheduleOnce: a schedule that did not reproduce (no
// fault at all) is not run again in a later round.
func TestShrinkTriesEachScheduleOnce(t *testing.T) {
	s, err := Parse("window 30s\nat=2s pause node=0 for=4s\nat=10s pause node=1 for=4s\n")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	run := func(_ context.Context, s Schedule) (bool, error) {
		seen[s.Format("")]++
		return len(s.Faults) > 0, nil
	}
	got, err := Shrink(context.Background(), s, ShrinkOptions{Tries: 100, MinFor: time.Second, Tail: time.Second}, run)
	if err != nil || !got.Minimal {
		t.Fatalf("minimal %v, %v", got.Minimal, err)
	}
	for text, n := range seen {
		if n > 1 {
			t.Errorf("ran %d times:\n%s", n, text)
		}
	}
}
