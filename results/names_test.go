package results

import (
	"bytes"
	"strings"
	"testing"

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
