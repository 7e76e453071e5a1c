package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindRunsNamesBrokenFilesAsBroken: a reference that names a result file
// lockbench cannot read (by id, prefix or suffix, in a directory with or
// without good results) gets that file's fault, as results ls reports it,
// never "no such file".
func TestFindRunsNamesBrokenFilesAsBroken(t *testing.T) {
	for _, withGood := range []bool{false, true} {
		dir := t.TempDir()
		if withGood {
			if _, err := Write(dir, fixture(t, "20250314-092653-a1b2c3", fixtureOpts{})); err != nil {
				t.Fatal(err)
			}
		}
		broken := filepath.Join(dir, "20250314-092700-badbad.json")
		if err := os.WriteFile(broken, []byte(`{"schema": "lockbench/v1", "id": "trunc`), 0o644); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(dir, "notes.json")
		if err := os.WriteFile(other, []byte(`{"hello": 1}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, skipped, err := List(dir)
		if err != nil || len(skipped) != 2 {
			t.Fatalf("List skipped %v, %v; want both files", skipped, err)
		}
		for ref, want := range map[string]string{
			"20250314-092700-badbad": "invalid or truncated JSON",
			"badbad":                 "invalid or truncated JSON",
			"20250314-0927":          "invalid or truncated JSON",
			"notes":                  `no "schema" field`,
		} {
			_, err := FindRuns(dir, ref)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not a lockbench result") || strings.Contains(err.Error(), "no such file") {
				t.Errorf("good runs %v: FindRuns(%q) err = %v; want the file named as %s", withGood, ref, err, want)
			}
		}
		if _, err := FindRuns(dir, "nothing-like-it"); err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("FindRuns(nothing-like-it) err = %v; want no such file", err)
		}
	}
}

// TestFindRunsByLabel: a label names its run, or its group of repeats; a
// label over runs that are neither is refused with their ids.
func TestFindRunsByLabel(t *testing.T) {
	dir := t.TempDir()
	write := func(r *Result) {
		t.Helper()
		if _, err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	one := fixture(t, "20250314-092653-aaaaaa", fixtureOpts{})
	one.Label = "baseline"
	write(one)
	for i, id := range []string{"20250314-092654-bbbbbb", "20250314-092655-cccccc"} {
		r := fixture(t, id, fixtureOpts{group: "g-20250314-092654-ffffff", repeat: i})
		r.Label = "repeated"
		write(r)
	}
	for _, id := range []string{"20250314-092656-dddddd", "20250314-092657-eeeeee"} {
		r := fixture(t, id, fixtureOpts{})
		r.Label = "sbs"
		write(r)
	}
	cases := []struct {
		ref     string
		wantIDs []string
		wantErr string
	}{
		{"baseline", []string{"20250314-092653-aaaaaa"}, ""},
		{"repeated", []string{"20250314-092654-bbbbbb", "20250314-092655-cccccc"}, ""},
		{"sbs", nil, "label \"sbs\" names 2 runs that are not one group of repeats (20250314-092656-dddddd, 20250314-092657-eeeeee)"},
		{"bas", nil, "no such file"},
	}
	for _, c := range cases {
		rs, err := FindRuns(dir, c.ref)
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("FindRuns(%q) = %v, %v; want error %q", c.ref, ids, err, c.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(ids, ",") != strings.Join(c.wantIDs, ",") {
			t.Errorf("FindRuns(%q) = %v, %v; want %v", c.ref, ids, err, c.wantIDs)
		}
	}
}
