package check

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/results"
)

var (
	update          = flag.Bool("update", false, "rewrite the check's golden outputs")
	updateHistories = flag.Bool("update-histories", false, "rewrite the synthetic histories under testdata/histories")
)

// synthSets are the synthetic histories kept under testdata/histories: a
// name and how it was made.
var synthSets = []struct {
	name string
	opts synthOpts
}{
	{"synth-small", synthOpts{seed: 1, workers: 3, keys: 2, sections: 40, generators: 1, bufMin: 1, bufSize: 4}},
	{"synth-recorded", synthOpts{seed: 2, workers: 8, keys: 4, sections: 400, generators: 1, recordOutcomes: true, bufMin: 4, bufSize: 16}},
	{"synth-fenced", synthOpts{seed: 3, workers: 8, keys: 4, sections: 400, fencing: true, generators: 1, recordOutcomes: true, bufMin: 4, bufSize: 16}},
	{"synth-hot", synthOpts{seed: 4, workers: 16, keys: 1, sections: 2500, generators: 1, recordOutcomes: true, bufMin: 8, bufSize: 64}},
	{"synth-many-keys", synthOpts{seed: 5, workers: 32, keys: 64, sections: 1280, generators: 1, bufMin: 1, bufSize: 64}},
	{"synth-gen2", synthOpts{seed: 6, workers: 4, keys: 3, sections: 300, generators: 2, recordOutcomes: true, bufMin: 2, bufSize: 8}},
	{"synth-gen2-shared", synthOpts{seed: 7, workers: 4, keys: 3, sections: 300, generators: 2, shared: true, recordOutcomes: true, bufMin: 2, bufSize: 8}},
}

// writeSynth writes a synthetic history, one file per generator, each
// generator's times from an origin of its own.
func writeSynth(t *testing.T, name string, h *history.History) {
	t.Helper()
	for g := range h.Header.Generators {
		shift := int64(g) * 7 * ms
		one := &history.History{Header: h.Header, Trailer: h.Trailer}
		one.Header.Generator, one.Header.Generators = g, 1
		one.Header.Origin = h.Header.Origin.Add(time.Duration(shift))
		for _, e := range h.Events {
			if e.Generator != g {
				continue
			}
			e.Call -= shift
			e.Return -= shift
			if e.Valid != 0 {
				e.Valid -= shift
			}
			if e.Op == history.OpEnter {
				e.Granted -= shift
			}
			one.Events = append(one.Events, e)
		}
		if g == 0 {
			one.Faults = h.Faults
		}
		path := filepath.Join("testdata", "histories", name+".jsonl.gz")
		if h.Header.Generators > 1 {
			path = filepath.Join("testdata", "histories", fmt.Sprintf("%s.g%d.jsonl.gz", name, g))
		}
		if err := writeHistory(path, one); err != nil {
			t.Fatal(err)
		}
	}
}

// writeHistory writes h to path with its trailer's event count.
func writeHistory(path string, h *history.History) error {
	return history.WriteFile(path, h)
}

// storedHistories groups the files under testdata/histories by history:
// a multi-generator history's files (NAME.gN.jsonl) go together.
func storedHistories(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no stored histories: %v", err)
	}
	out := map[string][]string{}
	for _, f := range files {
		base := filepath.Base(f)
		name := strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".jsonl")
		if i := strings.Index(name, ".g"); i > 0 {
			name = name[:i]
		}
		out[name] = append(out[name], f)
	}
	for _, fs := range out {
		slices.Sort(fs)
	}
	return out
}

// summary is everything a check reports, as text: the rendered report,
// the counts and keys as JSON, and the disagreements Agree lists.
func summary(r *Report) string {
	var sb strings.Builder
	r.Render(&sb)
	type key struct {
		Key
		Counts
		Violations int    `json:"violations"`
		Porcupine  string `json:"linearizability"`
	}
	j := struct {
		Counts    Counts `json:"window"`
		Outside   Counts `json:"outside_window"`
		Keys      int    `json:"keys_checked"`
		Events    int    `json:"events_checked"`
		Porcupine string `json:"linearizability"`
		Complete  bool   `json:"complete"`
		Illegal   int    `json:"illegal_segments"`
		Unsafe    bool   `json:"unsafe"`
		Failing   []key  `json:"failing_keys"`
	}{r.Counts, r.Outside, r.CheckedKeys, r.CheckedEvents, string(r.Porcupine), r.Complete, r.Illegal(), r.Unsafe(), nil}
	for _, k := range r.Keys {
		j.Failing = append(j.Failing, key{k.Key, k.Counts, k.ViolationsFound, string(k.Porcupine)})
	}
	b, _ := json.MarshalIndent(j, "", "  ")
	sb.WriteString("--- json\n")
	sb.Write(b)
	sb.WriteString("\n--- agree with a run that counted nothing\n")
	if err := r.Agree(results.Incidents{}); err != nil {
		sb.WriteString(err.Error())
	}
	sb.WriteString("\n")
	return sb.String()
}

// TestCheckMatchesGoldens checks every stored history (real runs' and
// synthetic ones) and compares everything the check reports with the
// golden captured from the checker that read the whole history into
// memory: the streaming checker must say the same on each.
func TestCheckMatchesGoldens(t *testing.T) {
	if *updateHistories {
		for _, s := range synthSets {
			writeSynth(t, s.name, synth(s.opts))
		}
	}
	for name, files := range storedHistories(t) {
		t.Run(name, func(t *testing.T) {
			rep, err := CheckFiles(files, Options{Visualize: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.reread {
				t.Errorf("%s: read into memory, not streamed", name)
			}
			got := summary(rep)
			path := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("%s: the check differs from its golden %s:\n%s", name, path, firstDiff(got, string(want)))
			}
			if rep.Illegal() > 0 {
				var sb strings.Builder
				if err := rep.Visualize(&sb); err != nil {
					t.Fatal(err)
				}
			}
			// The watermark moved after every few events: the keys are
			// stepped a little at a time, leases let go as they end.
			for _, every := range []int{1, 7, 100} {
				rep, err := CheckFiles(files, Options{Visualize: true, flushEvery: every})
				if err != nil {
					t.Fatal(err)
				}
				if got := summary(rep); got != string(want) || rep.reread {
					t.Fatalf("%s, watermark moved every %d event(s) (reread %v): the check differs from its golden %s:\n%s", name, every,
						rep.reread, path, firstDiff(got, string(want)))
				}
			}
			// In memory, the same.
			h, err := history.ReadFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			for _, every := range []int{1, 4096} {
				rep, err := Check(h, Options{Visualize: true, flushEvery: every})
				if err != nil {
					t.Fatal(err)
				}
				if got := summary(rep); got != string(want) {
					t.Fatalf("%s, in memory, every %d: the check differs from its golden %s:\n%s", name, every, path, firstDiff(got, string(want)))
				}
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  got  %s\n  want %s", i+1, a, b)
		}
	}
	return "(equal)"
}

// TestCheckRereadsAHistoryOutOfOrder: a history whose events are not in
// each worker's order (here: backwards) is noticed, read into memory and
// checked as a whole; the counts and verdicts are the same.
func TestCheckRereadsAHistoryOutOfOrder(t *testing.T) {
	files := storedHistories(t)["synth-recorded"]
	h, err := history.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(h.Events)
	path := filepath.Join(t.TempDir(), "backwards.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	rep, err := CheckFiles([]string{path}, Options{Visualize: true, flushEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "synth-recorded.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.reread {
		t.Fatal("a history backwards was streamed")
	}
	// The events the report names come in the history's order, which is
	// backwards here: the counts and verdicts must be the same.
	counts := func(s string) string { return s[strings.Index(s, "--- json"):strings.Index(s, "--- agree")] }
	if got := summary(rep); counts(got) != counts(string(want)) {
		t.Fatalf("reread: the check differs from its golden:\n%s", firstDiff(counts(got), counts(string(want))))
	}
}

// TestReplayIsPorcupine holds the checker's own verdict on each segment
// (its replay of the model, see segment) to Porcupine's search of the same
// segment, on every stored history: they must agree on every segment, and
// some segments must be illegal, or the test would prove nothing.
func TestReplayIsPorcupine(t *testing.T) {
	illegal := 0
	for name, files := range storedHistories(t) {
		for _, every := range []int{1, 0} {
			rep, err := CheckFiles(files, Options{crossCheck: true, flushEvery: every})
			if err != nil {
				t.Fatal(err)
			}
			if rep.mismatch != 0 {
				t.Errorf("%s, watermark every %d: Porcupine's search contradicts the replay on %d segment(s)", name, every, rep.mismatch)
			}
			if rep.Porcupine == porcupine.Unknown {
				t.Errorf("%s: unknown without a budget", name)
			}
			illegal += rep.Illegal()
		}
	}
	if illegal == 0 {
		t.Fatal("no stored history has an illegal segment: the agreement is untested")
	}
}
