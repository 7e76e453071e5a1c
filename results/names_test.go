package results

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockbench/lockbench/workloads"
)

// TestListAndCompareNameRuns: a listing is headed by names given in full, a
// group of one run listed is that run (no g1 footnote), a preset whose flags
// were changed is marked as changed with the flags named, and compare heads
// each run by its name with its id beside it in the legend.
func TestListAndCompareNameRuns(t *testing.T) {
	runs := groupsFixture(t)[0].Runs
	named := *runs[0]
	named.ID, named.Label = "n1", "ttl=400ms renew-every=ttl/3"
	named.Config = cloneConfig(runs[0].Config)
	named.Config["group"] = "g-cell-3"
	setPreset(t, named.Config, "long-work")
	named.Config["hold"] = "20ms"
	other := *runs[1]
	other.ID, other.Label = "n2", "gc-pause / fenced / trial 1"
	other.Config = cloneConfig(runs[1].Config)
	setPreset(t, other.Config, "long-work")
	delete(other.Config, "group")

	var buf bytes.Buffer
	if err := WriteList(&buf, []*Result{&named, &other}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"name ", "ttl=400ms renew-every=ttl/3  n1", "gc-pause / fenced / trial 1  n2",
		"long-work*", "long-work*: long-work with its hold changed"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "g1") || strings.Contains(out, "…") {
		t.Errorf("listing footnotes a one-run group or cuts a name:\n%s", out)
	}
	if PresetChanges(&other) != nil {
		t.Errorf("a run with the preset's own values is marked changed: %v", PresetChanges(&other))
	}

	buf.Reset()
	if err := Compare([]*Result{&named, &other}).Write(&buf, "table"); err != nil {
		t.Fatal(err)
	}
	out = buf.String()
	for _, want := range []string{"ttl=400ms renew-every=ttl/3 (n1): ", "gc-pause / fenced / trial 1 (n2): ", "ratio to ttl=400ms renew-every=ttl/3"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	// Two runs of one name are told apart by their ids.
	twin := other
	twin.ID, twin.Label = "n3", other.Label
	cols := Compare([]*Result{&named, &other, &twin}).Columns
	if cols[1].Key != "n2" || cols[2].Key != "n3" || cols[0].Key != named.Label {
		t.Errorf("columns %q %q %q; want the name, then ids where names repeat", cols[0].Key, cols[1].Key, cols[2].Key)
	}
}

// setPreset gives config the preset's own flag values, as a run of it without
// changes has them.
func setPreset(t *testing.T, config map[string]any, name string) {
	t.Helper()
	p, err := workloads.LookupPreset(name)
	if err != nil {
		t.Fatal(err)
	}
	config["workload"] = name
	for k, v := range p.Flags {
		config[k] = v
	}
}

func cloneConfig(c map[string]any) map[string]any {
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// TestCompareNamesUnlabelledRunsBySettings: runs nobody named are headed by
// the settings that set them apart, and keep their ids when their settings
// do not (repeats); rows that are 0 in every column fold into one line.
func TestCompareNamesUnlabelledRunsBySettings(t *testing.T) {
	runs := groupsFixture(t)[0].Runs
	a, b := *runs[0], *runs[1]
	a.ID, a.Label, a.Config = "20260101-000000-aaaaaa", "", cloneConfig(runs[0].Config)
	b.ID, b.Label, b.Config = "20260101-000001-bbbbbb", "", cloneConfig(runs[0].Config)
	b.Config["concurrency"] = 64
	cols := Compare([]*Result{&a, &b}).Columns
	if cols[0].Key != "concurrency=8" || cols[1].Key != "concurrency=64" {
		t.Errorf("unlabelled runs differing in concurrency headed %q, %q; want concurrency=8, concurrency=64", cols[0].Key, cols[1].Key)
	}
	b.Config = cloneConfig(a.Config)
	cols = Compare([]*Result{&a, &b}).Columns
	if cols[0].Key != a.ID || cols[1].Key != b.ID {
		t.Errorf("repeats headed %q, %q; want their ids", cols[0].Key, cols[1].Key)
	}
	var buf bytes.Buffer
	if err := Compare([]*Result{&a, &b}).Write(&buf, "table"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "| double_grants ") {
		t.Errorf("a row of zeros is still a row:\n%s", out)
	}
	_, zeros, _ := strings.Cut(out, "0 in every column: ")
	if !strings.Contains(zeros, "double_grants") {
		t.Errorf("the zero rows are not named under the table:\n%s", buf.String())
	}
}

// TestCompareSplitsWideTables: runs whose names make one table wider than a
// terminal are shown in several tables, each within MaxTableWidth and each
// with the baseline's column, so every ratio stays beside its base.
func TestCompareSplitsWideTables(t *testing.T) {
	base := groupsFixture(t)[0].Runs[0]
	var runs []*Result
	for i := range 5 {
		r := *base
		r.ID = fmt.Sprintf("20260101-00000%d-aaaaa%d", i, i)
		r.Label = fmt.Sprintf("a rather long name for run number %d", i)
		runs = append(runs, &r)
	}
	var buf bytes.Buffer
	if err := Compare(runs).Write(&buf, "table"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > MaxTableWidth {
			t.Errorf("line of %d columns: %s", n, line)
		}
	}
	headers := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " metric ") {
			headers++
			if !strings.Contains(line, runs[0].Label) {
				t.Errorf("a table without the baseline's column: %s", line)
			}
		}
	}
	if headers < 2 {
		t.Errorf("%d tables for 5 long-named runs; want them split:\n%s", headers, out)
	}
	for _, r := range runs {
		if !strings.Contains(out, "| "+r.Label) && !strings.Contains(out, r.Label+" |") {
			t.Errorf("run %q has no column", r.Label)
		}
	}
}
