package verdict

import (
	"math"
	"strings"
	"testing"
)

// TestDecideTrials: the classes follow from first principles: a harm word
// needs one observed case; with none, 0 of n bounds the share under
// 1 − 0.05^(1/n), which is within 10% from n = 29 on (0.05^(1/29) ≈ 0.9018).
func TestDecideTrials(t *testing.T) {
	for _, tc := range []struct {
		harm, n int
		level   float64
		class   Class
		more    int
	}{
		{0, 0, 0.1, NoEvidence, 0},
		{1, 1, 0.1, Harm, 0},
		{2, 6, 0.1, Harm, 0},
		{0, 3, 0.1, Undecided, 26},
		{0, 28, 0.1, Undecided, 1},
		{0, 29, 0.1, SafeShown, 0},
		{0, 59, 0.05, SafeShown, 0},
		{0, 58, 0.05, Undecided, 1},
		{0, 7, 0.5, SafeShown, 0},
	} {
		d := DecideTrials(tc.harm, tc.n, tc.level)
		if d.Class != tc.class || d.More != tc.more {
			t.Errorf("DecideTrials(%d, %d, %g) = %s more %d; want %s more %d", tc.harm, tc.n, tc.level, d.Class, d.More, tc.class, tc.more)
		}
	}
}

// TestDecisionsNeverContradict: over every pair of outcomes of n trials
// each, a word of harm and a word of safety never come from evidence with
// no harm seen in either, and safety is never given with a harm observed.
func TestDecisionsNeverContradict(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for k := 0; k <= n; k++ {
			d := DecideTrials(k, n, DefaultLevel)
			if d.Class == SafeShown && k > 0 {
				t.Fatalf("%d of %d harmful read safe", k, n)
			}
			if d.Class == Harm && k == 0 {
				t.Fatalf("0 of %d read harm", n)
			}
		}
	}
}

// TestIntervalNeverSpansEverything: no figure printed spans 0%–100%.
func TestIntervalNeverSpansEverything(t *testing.T) {
	for _, tc := range []struct {
		harm, n int
		want    string
	}{
		{0, 0, ""},
		{0, 3, "≤64%"},
		{3, 3, "≥36%"},
		{2, 6, "4.3%–78%"},
	} {
		d := DecideTrials(tc.harm, tc.n, DefaultLevel)
		if got := d.Interval(); got != tc.want {
			t.Errorf("Interval(%d of %d) = %q; want %q", tc.harm, tc.n, got, tc.want)
		}
		if strings.Contains(d.Short("overran", "caught", tc.n), "0%–100%") {
			t.Errorf("Short(%d of %d) prints a figure that says nothing", tc.harm, tc.n)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.1", 0.1, true}, {"10%", 0.1, true}, {" 0.05 ", 0.05, true},
		{"0", 0, false}, {"1", 0, false}, {"-0.1", 0, false}, {"150%", 0, false}, {"x", 0, false}, {"", 0, false}, {"NaN", 0, false},
	} {
		got, err := ParseLevel("safety-level", tc.in)
		if (err == nil) != tc.ok || (tc.ok && math.Abs(got-tc.want) > 1e-12) {
			t.Errorf("ParseLevel(%q) = %g, %v; want %g ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--safety-level") {
			t.Errorf("error %q does not name the flag", err)
		}
	}
}

func FuzzParseLevel(f *testing.F) {
	for _, s := range []string{"0.1", "10%", "1e-3", "%", "0x1p-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseLevel("safety-level", s)
		if err == nil && !(v > 0 && v < 1) {
			t.Fatalf("ParseLevel(%q) accepted %g", s, v)
		}
	})
}

// TestDifferTrials: Fisher's exact test against values worked by hand.
// 0 of 10 against 10 of 10: p = 2/C(20,10) = 1.08e-5. 1 of 3 against 2 of 3:
// every table as likely or less, p = 1. 0 of 5 against 5 of 5: p = 2/252.
func TestDifferTrials(t *testing.T) {
	for _, tc := range []struct {
		k1, n1, k2, n2 int
		p              float64
		shown          bool
	}{
		{0, 10, 10, 10, 2 / 184756.0, true},
		{1, 3, 2, 3, 1, false},
		{0, 5, 5, 5, 2 / 252.0, true},
		{2, 6, 0, 7, 0.1923, false},
		{0, 0, 1, 1, 1, false},
	} {
		d := DifferTrials(tc.k1, tc.n1, tc.k2, tc.n2)
		if d.Shown != tc.shown || math.Abs(d.P-tc.p) > 1e-3*math.Max(tc.p, 1e-3) {
			t.Errorf("DifferTrials(%d/%d, %d/%d) = %+v; want p %g shown %v", tc.k1, tc.n1, tc.k2, tc.n2, d, tc.p, tc.shown)
		}
	}
}

// TestDifferCounts: with equal exposure, 0 against 6 events is
// 2 × 0.5^6 = 0.03125 (shown); 1 against 3 is 0.625 (not shown).
func TestDifferCounts(t *testing.T) {
	if d := DifferCounts(0, 10, 6, 10); !d.Shown || math.Abs(d.P-0.03125) > 1e-9 {
		t.Errorf("0 vs 6: %+v", d)
	}
	if d := DifferCounts(1, 10, 3, 10); d.Shown || math.Abs(d.P-0.625) > 1e-9 {
		t.Errorf("1 vs 3: %+v", d)
	}
	if d := DifferCounts(1, 0, 3, 10); d.Shown {
		t.Errorf("no exposure: %+v", d)
	}
}
