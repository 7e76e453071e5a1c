// Package suggest finds, for a name a user mistyped, the accepted name it
// most likely meant, so that every refusal of an unknown name (a topology
// kind, a lock, a scenario, a preset, a command) can end "did you mean X?"
// with one rule. It knows nothing of what the names are.
package suggest

import "strings"

// Nearest is the candidate closest to name by edit distance (case
// ignored), when it is close enough to be a typo rather than another word:
// at most a third of the longer name's letters differ. Ties go to the
// earlier candidate. ok is false when no
// candidate is near, or name is empty.
func Nearest(name string, candidates []string) (best string, ok bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return "", false
	}
	bestDist := -1
	for _, c := range candidates {
		d := distance(name, strings.ToLower(c))
		longer := max(len([]rune(name)), len([]rune(c)))
		if d*3 > longer {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist >= 0
}

// DidYouMean is "; did you mean X?" for the candidate nearest name, or ""
// when none is near: a suffix for a refusal line.
func DidYouMean(name string, candidates []string) string {
	if best, ok := Nearest(name, candidates); ok && !strings.EqualFold(best, strings.TrimSpace(name)) {
		return "; did you mean " + best + "?"
	}
	return ""
}

// distance is the optimal-string-alignment edit distance between a and b
// in runes: insertions, deletions, substitutions and swaps of two adjacent
// letters (the commonest typo) each cost one.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows suffice: the swap looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// listBudget is how many characters of a refusal a list of accepted names
// may take, so that the refusal, its flag and the name given fit in 120
// columns.
const listBudget = 48

// Unknown ends a refusal of name among candidates: "did you mean X?" for a
// near candidate, else "want one of A, B, C" cut to what fits a line
// ("…" says more exist; the command's help lists them all).
func Unknown(name string, candidates []string) string {
	if best, ok := Nearest(name, candidates); ok {
		return "did you mean " + best + "?"
	}
	return "want one of " + List(candidates)
}

// List joins names with commas, cut after the names that fit listBudget
// characters and ended with "…" when some were left off.
func List(names []string) string {
	var b strings.Builder
	for i, n := range names {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		if i > 0 && b.Len()+len(sep)+len(n) > listBudget {
			b.WriteString(", …")
			break
		}
		b.WriteString(sep + n)
	}
	return b.String()
}
