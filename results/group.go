package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Group is a set of repeats: runs of one configuration, compared as one
// column whose figures are ranges rather than single values.
type Group struct {
	// Key is Config["group"] when the runner set it, otherwise a digest of
	// the configuration (see GroupKey).
	Key string
	// Runs are the repeats, in the order they were given.
	Runs []*Result
}

// normField folds flag-style and JSON-style names ("generator-id",
// "generator_id") together, since Config is keyed by flag name and the
// runner's spelling is not ours to fix.
func normField(k string) string { return strings.ReplaceAll(strings.ToLower(k), "-", "_") }

// isOutputField says whether a config field only chooses where or how a run
// is reported; such fields never make two measurements differ.
func isOutputField(k string) bool {
	switch normField(k) {
	case "out", "output", "report", "format", "quiet", "progress", "json", "count", "results_dir":
		return true
	}
	return false
}

// isRepeatIdentity says whether a config field names one repeat rather than
// the configuration: two repeats of a configuration differ in exactly these.
func isRepeatIdentity(k string) bool {
	switch normField(k) {
	case "id", "run_id", "repeat", "group", "generator_id", "started_at", "start_at", "seed":
		return true
	}
	return isOutputField(k)
}

// isGeneratorIdentity says whether a config field names one generator of a
// distributed run: the only fields in which the parts of a merge may differ.
// "generators" (how many there were) is deliberately not one of them.
func isGeneratorIdentity(k string) bool {
	switch normField(k) {
	case "id", "run_id", "generator_id", "group", "started_at", "start_at", "seed":
		return true
	}
	return isOutputField(k)
}

// GroupKey returns the key that puts repeats of one configuration together:
// Config["group"] when it is a non-empty string, otherwise "cfg-" and a short
// digest of the configuration without its per-repeat fields (id, repeat,
// generator id, start time, seed, output options), the lock and the topology.
func GroupKey(r *Result) string {
	if g, ok := r.Config["group"].(string); ok && g != "" {
		return g
	}
	cfg := map[string]any{}
	for k, v := range r.Config {
		if !isRepeatIdentity(k) {
			cfg[normField(k)] = v
		}
	}
	// json.Marshal sorts map keys and renders 8 and 8.0 alike, so a result
	// still in memory and the same result read back get the same key.
	b, err := json.Marshal(struct {
		Config   map[string]any `json:"config"`
		Lock     LockInfo       `json:"lock"`
		Topology string         `json:"topology"`
	}{cfg, r.Lock, r.Topology.Spec})
	if err != nil {
		// Config came from JSON or from flags, so it always marshals; fall
		// back to the run's own id rather than grouping unrelated runs.
		return r.ID
	}
	sum := sha256.Sum256(b)
	return "cfg-" + hex.EncodeToString(sum[:6])
}

// GroupRuns partitions runs into groups of repeats by GroupKey, keeping the
// order in which each group first appears and, within a group, the order given.
func GroupRuns(runs []*Result) []Group {
	var groups []Group
	index := map[string]int{}
	for _, r := range runs {
		k := GroupKey(r)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, Group{Key: k})
		}
		groups[i].Runs = append(groups[i].Runs, r)
	}
	return groups
}

// FindRuns resolves a reference to one or more runs, so a command can take a
// run and a group of repeats alike: a path to a result file, then an exact
// run id, then an exact group key (Config["group"]), then a label that names
// one run or one group, then a unique prefix (or suffix) of a run id or group
// key. A group resolves to all of its runs, oldest first. A reference that
// names a file lockbench cannot read gets that file's fault, not "no such
// run": the file is there, and broken.
func FindRuns(dir, ref string) ([]*Result, error) {
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		r, err := Read(ref)
		if err != nil {
			return nil, err
		}
		return []*Result{r}, nil
	}
	r, err := Read(filepath.Join(dir, FileName(ref)))
	switch {
	case err == nil:
		return []*Result{r}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("run %q: %w", ref, err)
	}
	rs, broken, err := List(dir)
	if err != nil {
		return nil, fmt.Errorf("run %q: %w", ref, err)
	}
	if g := groupMembers(rs, func(k string) bool { return k == ref }); len(g) > 0 {
		return g, nil
	}
	if labelled, err := findByLabel(rs, ref); len(labelled) > 0 || err != nil {
		return labelled, err
	}
	found, err := findByPrefix(rs, dir, ref)
	if err != nil && !errors.Is(err, errAmbiguous) {
		if b := brokenNamed(broken, ref); b != nil {
			return nil, fmt.Errorf("run %q: %w", ref, b)
		}
		if len(rs) == 0 {
			return nil, fmt.Errorf("run %q: no such file, and %w in %s", ref, ErrNoResults, dir)
		}
	}
	return found, err
}

// findByLabel returns the runs labelled ref when they are one run or one
// group of repeats; runs of one label that are neither (side-by-side
// topologies, two separate runs) are named by their ids in the error.
func findByLabel(rs []*Result, ref string) ([]*Result, error) {
	var out []*Result
	groups := map[string]bool{}
	for _, r := range rs {
		if r.Label == ref {
			out = append(out, r)
			g, _ := r.Config["group"].(string)
			groups[g] = true
		}
	}
	if len(out) <= 1 {
		return out, nil
	}
	if len(groups) == 1 && !groups[""] {
		sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
		return out, nil
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.ID
	}
	sort.Strings(ids)
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], ", …"
	}
	return nil, fmt.Errorf("run %q: label %q names %d runs that are not one group of repeats (%s%s); name one by its id, or give them all to results compare or report",
		ref, ref, len(out), strings.Join(ids, ", "), more)
}

// brokenNamed is the unreadable file ref names, the way a run is named (its
// id, or a unique prefix or suffix of it), or nil.
func brokenNamed(broken []error, ref string) *BrokenFile {
	var match []*BrokenFile
	for _, e := range broken {
		var b *BrokenFile
		if !errors.As(e, &b) {
			continue
		}
		id := strings.TrimSuffix(filepath.Base(b.Path), ".json")
		if id == ref {
			return b
		}
		if strings.HasPrefix(id, ref) || strings.HasSuffix(id, ref) {
			match = append(match, b)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return nil
}

// findByPrefix matches ref as a prefix of run ids and group keys, or, when
// nothing starts with it, as a suffix (ids start with the date and end with
// random digits, so the end is what tells runs apart); it must name exactly
// one run or one group.
func findByPrefix(rs []*Result, dir, ref string) ([]*Result, error) {
	found, err := findBy(rs, dir, ref, strings.HasPrefix)
	if err != nil && !errors.Is(err, errAmbiguous) {
		if bySuffix, serr := findBy(rs, dir, ref, strings.HasSuffix); serr == nil || errors.Is(serr, errAmbiguous) {
			return bySuffix, serr
		}
	}
	return found, err
}

func findBy(rs []*Result, dir, ref string, match func(s, ref string) bool) ([]*Result, error) {
	matches := func(s string) bool { return match(s, ref) }
	names := map[string]bool{}
	var byID []*Result
	for _, r := range rs {
		if matches(r.ID) {
			byID = append(byID, r)
			names["run "+r.ID] = true
		}
	}
	groups := map[string]bool{}
	for _, r := range rs {
		if k, ok := r.Config["group"].(string); ok && k != "" && matches(k) {
			groups[k] = true
			names["group "+k] = true
		}
	}
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("run %q: no such file, and no run, group or label of that name in %s (lockbench results ls lists them)", ref, dir)
	case len(names) > 1:
		list := sortedKeys(names)
		more := ""
		if len(list) > 5 {
			list, more = list[:5], ", …"
		}
		return nil, fmt.Errorf("run %q: %w: %d runs and groups match (%s%s); give more of the id", ref, errAmbiguous, len(names), strings.Join(list, ", "), more)
	case len(byID) == 1:
		return byID, nil
	}
	return groupMembers(rs, func(k string) bool { return groups[k] }), nil
}

// groupMembers returns the runs whose Config["group"] satisfies match, oldest
// first (List returns newest first; repeats read best in the order they ran).
func groupMembers(rs []*Result, match func(string) bool) []*Result {
	var out []*Result
	for _, r := range rs {
		if k, ok := r.Config["group"].(string); ok && k != "" && match(k) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out
}

// stats are the spread of one figure over a group's runs.
type stats struct {
	n                int
	min, median, max float64
}

// statsOf computes min, median and max of the values present; the median of
// an even count is the mean of the middle two, as benchstat reports it.
func statsOf(vals []float64) stats {
	if len(vals) == 0 {
		return stats{}
	}
	return stats{n: len(vals), min: slices.Min(vals), median: Median(vals), max: slices.Max(vals)}
}

// statsFor evaluates f over every run of a group.
func statsFor(f Figure, runs []*Result) stats {
	var vals []float64
	for _, r := range runs {
		if v, err := f.Value(r); err == nil {
			vals = append(vals, v)
		}
	}
	return statsOf(vals)
}
