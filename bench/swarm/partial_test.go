package swarm

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/results"
)

// An interrupted job keeps what its generators printed as they stopped:
// each generator's own result, by slot, marked partial (one that finished
// before the interruption too: the run did not); a generator without a
// result, a log cut off inside one, or another run's result is missing.
func TestCollectPartial(t *testing.T) {
	s := spec(t, "--keys", "1")
	printed := func(ids ...string) io.Reader {
		var b bytes.Buffer
		b.WriteString("lockbench: interrupted\n")
		for _, id := range ids {
			r := &results.Result{Schema: results.Schema, ID: id, Partial: id == s.RunID+"-g0"}
			if err := job.WriteMarked(&b, r); err != nil {
				t.Fatal(err)
			}
		}
		return &b
	}
	var cut bytes.Buffer
	if err := job.WriteMarked(&cut, &results.Result{Schema: results.Schema, ID: s.RunID + "-g3"}); err != nil {
		t.Fatal(err)
	}
	cutOff := strings.NewReader(cut.String()[:cut.Len()/2])

	rs, missing := collectPartial(s, map[int]io.Reader{
		0: printed(s.RunID + "-g0"),
		1: printed(s.RunID + "-g1"), // finished before the interruption
		2: printed("another-run-g2"),
		3: cutOff,
	})
	if len(rs) != 2 || rs[0].ID != s.RunID+"-g0" || rs[1].ID != s.RunID+"-g1" {
		t.Fatalf("collected %v, want generators 0 and 1", ids(rs))
	}
	for _, r := range rs {
		if !r.Partial {
			t.Errorf("%s not marked partial", r.ID)
		}
	}
	if len(missing) != 2 || missing[0] != 2 || missing[1] != 3 {
		t.Errorf("missing %v, want [2 3]", missing)
	}

	if rs, missing := collectPartial(s, nil); len(rs) != 0 || len(missing) != s.Generators {
		t.Errorf("no logs: %v, missing %v", ids(rs), missing)
	}
}

func ids(rs []*results.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}
