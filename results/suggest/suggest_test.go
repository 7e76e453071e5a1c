package suggest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNearest(t *testing.T) {
	kinds := []string{"single", "redlock", "replicated", "cluster", "etcd", "postgres"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"redlok", "redlock", true},      // a letter left out
		{"rdelock", "redlock", true},     // two letters swapped
		{"Single", "single", true},       // case
		{"singel", "single", true},       // swap at the end
		{"postgresql", "postgres", true}, // a longer spelling
		{"cluser", "cluster", true},
		{"etc", "etcd", true},
		{"zookeeper", "", false}, // another word, not a typo
		{"x", "", false},
		{"", "", false},
		{"   ", "", false},
	} {
		got, ok := Nearest(tc.name, kinds)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Nearest("redlock", nil); ok {
		t.Error("Nearest with no candidates found one")
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"failover", "clock-jump", "gc-pause"}
	if got := DidYouMean("failovr", names); got != "; did you mean failover?" {
		t.Errorf("DidYouMean(failovr) = %q", got)
	}
	if got := DidYouMean("split-brain", names); got != "" {
		t.Errorf("DidYouMean(split-brain) = %q, want nothing", got)
	}
	// The name itself, accepted in another case, is no suggestion.
	if got := DidYouMean("failover", names); got != "" {
		t.Errorf("DidYouMean(failover) = %q, want nothing", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"redlock", "redlok", 1}, {"ünï", "uni", 2},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// FuzzNearest: any input, however odd, gets either nothing or one of the
// candidates, never a panic; a candidate given exactly is its own nearest.
func FuzzNearest(f *testing.F) {
	for _, s := range []string{"redlok:5", "", "\xff\xfe", "ünïcödé", strings.Repeat("a", 300)} {
		f.Add(s)
	}
	cands := []string{"single", "redlock", "cluster", "ünï"}
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := Nearest(name, cands)
		if ok && !contains(cands, got) {
			t.Fatalf("Nearest(%q) = %q, not a candidate", name, got)
		}
		if !ok && got != "" {
			t.Fatalf("Nearest(%q) = %q without ok", name, got)
		}
		s := DidYouMean(name, cands)
		if s != "" && (!strings.HasPrefix(s, "; did you mean ") || !utf8.ValidString(s)) {
			t.Fatalf("DidYouMean(%q) = %q", name, s)
		}
		if d := distance(name, name); d != 0 {
			t.Fatalf("distance(%q, itself) = %d", name, d)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUnknown(t *testing.T) {
	locks := []string{"single", "fenced", "redlock", "naive", "redsync", "redislock", "etcd", "pg-advisory", "pg-advisory-xact", "pg-lease", "occ"}
	for _, tc := range []struct{ name, want string }{
		{"redsyn", "did you mean redsync?"},
		{"zookeeper", "want one of single, fenced, redlock, naive, redsync, …"},
	} {
		if got := Unknown(tc.name, locks); got != tc.want {
			t.Errorf("Unknown(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Unknown("x", []string{"a", "b"}); got != "want one of a, b" {
		t.Errorf("a short list is cut: %q", got)
	}
	// One name longer than the budget is still named.
	long := strings.Repeat("n", 100)
	if got := List([]string{long, "b"}); got != long+", …" {
		t.Errorf("List(long) = %q", got)
	}
}
