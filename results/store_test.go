package results

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := fixture(t, "run-a", fixtureOpts{incidents: true, servers: true, series: true})
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "run-a.json" {
		t.Errorf("path = %s", path)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, got) != jsonOf(t, r) {
		t.Errorf("read back differs from written:\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, r))
	}
	// No temp file is left next to the result.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only the result", len(entries))
	}
}

func TestListAndFind(t *testing.T) {
	dir := t.TempDir()
	for i, id := range []string{"alpha-1", "alpha-2", "beta-1"} {
		r := fixture(t, id, fixtureOpts{group: "g-" + id[:4], repeat: i})
		if _, err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, skipped, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].ID != "beta-1" {
		t.Errorf("List = %d runs, first %q; want 3, newest (beta-1) first", len(rs), rs[0].ID)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "notes.json") {
		t.Errorf("skipped = %v, want one error naming notes.json", skipped)
	}
	if r, err := Find(dir, "beta"); err != nil || r.ID != "beta-1" {
		t.Errorf("Find(beta) = %v, %v", r, err)
	}
	if _, err := Find(dir, "alpha"); !errors.Is(err, errAmbiguous) {
		t.Errorf("Find(alpha) err = %v, want ambiguous", err)
	}
	runs, err := FindRuns(dir, "g-alph")
	if err != nil || len(runs) != 2 || runs[0].ID != "alpha-1" {
		t.Errorf("FindRuns(g-alph) = %d runs, %v; want alpha-1, alpha-2", len(runs), err)
	}
	runs, err = FindRuns(dir, "alpha-2")
	if err != nil || len(runs) != 1 {
		t.Errorf("FindRuns(alpha-2) = %d runs, %v", len(runs), err)
	}
	if _, err := FindRuns(dir, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("FindRuns(nope) err = %v", err)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := json.Marshal(fixture(t, "ok", fixtureOpts{}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, content, want string
	}{
		{"truncated.json", string(good[:len(good)/2]), "invalid or truncated JSON"},
		{"empty.json", "", "invalid or truncated JSON"},
		{"schema.json", `{"schema": "lockbench/v9", "id": "x"}`, `unknown schema "lockbench/v9"`},
		{"schema-type.json", `{"schema": 1}`, `"schema" is not a string`},
		{"other.json", `{"name": "package.json", "version": "1.0.0"}`, `no "schema" field`},
		{"array.json", `[1, 2, 3]`, "not a JSON object"},
		{"noid.json", `{"schema": "lockbench/v1"}`, "result has no id"},
		{"badfield.json", `{"schema": "lockbench/v1", "id": "x", "duration_s": "long"}`, "duration_s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(path)
			if err == nil {
				t.Fatalf("Read(%s) succeeded", c.name)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read(%s) = %q, want it to name the file and say %q", c.name, err, c.want)
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Read(missing) = %v", err)
	}
}

func TestEmptyDir(t *testing.T) {
	dir := t.TempDir()
	rs, skipped, err := List(dir)
	if err != nil || len(rs) != 0 || len(skipped) != 0 {
		t.Errorf("List(empty) = %v, %v, %v", rs, skipped, err)
	}
	for name, find := range map[string]func() error{
		"Find":     func() error { _, err := Find(dir, "x"); return err },
		"FindRuns": func() error { _, err := FindRuns(dir, "x"); return err },
	} {
		err := find()
		if !errors.Is(err, ErrNoResults) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s in empty dir = %v, want ErrNoResults naming %s", name, err, dir)
		}
	}
	if _, _, err := List(filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("List(absent) = %v", err)
	}
}

// FuzzDecode checks that no byte string makes Decode panic, and that what it
// accepts can be summarised, compared and merged without panicking either.
func FuzzDecode(f *testing.F) {
	good, err := json.Marshal(fixture(f, "seed", fixtureOpts{incidents: true, servers: true, series: true}))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(good), string(good[:100]), `{"schema":"lockbench/v1","id":"x"}`,
		`{"schema":"lockbench/v1","id":"x","ops":{"acquire":{"count":1,"hdr":"HISTFAAAA"}}}`,
		`{"schema":"lockbench/v1","id":"x","series":[{"elapsed_s":-1}],"servers":{}}`, `null`, `[]`, `{"schema":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode("fuzz.json", b)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		_ = WriteSummary(discard{}, r)
		_ = Compare([]*Result{r, r}).WriteTable(discard{})
		_, _ = Merge([]*Result{r})
		_ = WriteReport(discard{}, []*Result{r})
	})
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
