package results

import (
	"fmt"
	"sort"
	"strings"
)

// maxNameParts bounds what a run's name adds to its label to set it apart:
// past two differing settings a short id reads better than a sentence.
const maxNameParts = 2

// RunNames names each of runs so that no two read alike, for legends, tables
// and titles that show them together. A run is named by its label (its id
// when it has none); runs that share a label get what sets them apart
// within that set after it: topology, then lock, then the configuration
// fields that differ ("sbs (single)", "sbs (redlock:3)"), or, when nothing
// in the configuration does (repeats), the end of their id ("sbs (7160e4)").
func RunNames(runs []*Result) []string {
	names := make([]string, len(runs))
	byName := map[string][]int{}
	for i, r := range runs {
		names[i] = RunName(r)
		byName[names[i]] = append(byName[names[i]], i)
	}
	for base, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		set := make([]*Result, len(idx))
		for k, i := range idx {
			set[k] = runs[i]
		}
		for k, part := range distinguishing(set) {
			names[idx[k]] = base + " (" + part + ")"
		}
	}
	return names
}

// distinguishing returns, for each run of set, the settings in which the set
// differs, or the end of its id when they do not tell every run apart.
func distinguishing(set []*Result) []string {
	attrs := []func(r *Result) string{
		func(r *Result) string { return r.Topology.Spec },
		func(r *Result) string { return "lock " + r.Lock.Name },
	}
	for _, k := range configKeys(set) {
		attrs = append(attrs, func(r *Result) string {
			return fmt.Sprintf("%s=%s", k, jsonText(unsetOr(r.Config[k], r.Config[k] != nil)))
		})
	}
	parts := make([][]string, len(set))
	used := 0
	for _, attr := range attrs {
		if used == maxNameParts || !differs(set, attr) {
			continue
		}
		more := make([][]string, len(set))
		for i, r := range set {
			more[i] = append(append([]string(nil), parts[i]...), attr(r))
		}
		if distinctJoined(more) == distinctJoined(parts) {
			continue // implied by what is already there
		}
		used, parts = used+1, more
		if out, ok := uniqueJoined(parts); ok {
			return out
		}
	}
	out := make([]string, len(set))
	for i, r := range set {
		out[i] = strings.Join(append(parts[i], shortID(r.ID)), ", ")
	}
	return out
}

// configKeys are the configuration fields a name may cite: every field but
// those naming one repeat or output, and the lock and topology cited first.
func configKeys(set []*Result) []string {
	keys := map[string]bool{}
	for _, r := range set {
		for k := range r.Config {
			if !isRepeatIdentity(k) && k != "lock" && k != "topology" {
				keys[k] = true
			}
		}
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// uniqueJoined joins each run's parts, and says whether that tells them all apart.
func uniqueJoined(parts [][]string) ([]string, bool) {
	out := make([]string, len(parts))
	seen := map[string]bool{}
	for i, p := range parts {
		out[i] = strings.Join(p, ", ")
		if out[i] == "" || seen[out[i]] {
			return out, false
		}
		seen[out[i]] = true
	}
	return out, true
}

// distinctJoined counts the different names parts make.
func distinctJoined(parts [][]string) int {
	seen := map[string]bool{}
	for _, p := range parts {
		seen[strings.Join(p, ", ")] = true
	}
	return len(seen)
}

func differs(set []*Result, attr func(r *Result) string) bool {
	for _, r := range set[1:] {
		if attr(r) != attr(set[0]) {
			return true
		}
	}
	return false
}

// shortID is the random end of a run id, which is what tells runs of one
// second apart (ids are YYYYMMDD-HHMMSS-xxxxxx).
func shortID(id string) string {
	if i := strings.LastIndex(id, "-"); i >= 0 && i+1 < len(id) && len(id)-i-1 >= 4 {
		return id[i+1:]
	}
	return id
}

// withNames returns shallow copies of runs that RunName calls by their
// RunNames, so that every chart and table of one report tells them apart.
func withNames(runs []*Result) []*Result {
	names := RunNames(runs)
	out := make([]*Result, len(runs))
	for i, r := range runs {
		c := *r
		c.shownName = names[i]
		out[i] = &c
	}
	return out
}
