package renewal

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

// fixtureMatrix is the whole matrix with seven measured cells planted by
// hand (overran with fencing apart, caught with delays but too few trials
// to decide, kept in 30 of 30 (decided), a starved
// renewer caught once and overran once, and three probes: one resets, one
// recreated, one absent after a race and one trial without) and every
// other cell as Run leaves a cell without runs.
func fixtureMatrix() Matrix {
	m := Matrix{Cases: All(), Locks: Locks()}
	planted := map[string][]Trial{
		"process-paused/fenced": {{Run: "r1", Exposure: 1, Outcome: Overran, Leases: map[string]int{"overran": 1}, OverrunNS: []int64{4e8}},
			{Run: "r1", Exposure: 1, Outcome: Fenced, Leases: map[string]int{"fenced": 1}, OverrunNS: []int64{3e8}}},
		"renewal-failing/single": {{Run: "r2", Exposure: 3, Outcome: Caught, Leases: map[string]int{"caught": 3}, DelaysNS: []int64{2e8, 2.1e8, 3e8}},
			{Run: "r2", Exposure: 0}},
		"restart-empty/redlock": slices.Repeat([]Trial{{Run: "r3", Exposure: 2, Outcome: Kept, Leases: map[string]int{"kept": 2}}}, 30),
		"adds-or-resets/single": {{Exposure: 1, Outcome: Caught, Observed: "300ms left after a renewal at TTL/2"},
			{Exposure: 1, Outcome: Caught, Observed: "299ms left after a renewal at TTL/2"}},
		"renew-after-unlock/redsync": {{Exposure: 1, Outcome: Overran, Observed: "renewal ok, key present"},
			{Observed: "release failed"}},
		"starved-renewer/single": {{Run: "r4", Exposure: 1, Outcome: Caught, Leases: map[string]int{"caught": 1}, DelaysNS: []int64{6e8}},
			{Run: "r4", Exposure: 1, Outcome: Overran, Leases: map[string]int{"overran": 1}, OverrunNS: []int64{1e6}}},
		"starved-renewer/redsync": slices.Repeat([]Trial{{Run: "r5", Exposure: 1, Outcome: Caught, Leases: map[string]int{"caught": 1}, DelaysNS: []int64{5e8}}}, 3),
		"release-race/etcd": {{Exposure: 1, Outcome: Caught, Observed: "renewal held 0s: lost, key absent"},
			{Observed: "renewal held 3ms: ok before the release: no race"}},
	}
	for _, c := range m.Cases {
		var row []Cell
		for _, l := range m.Locks {
			cell := Cell{Case: c.Name, Lock: l.Name, Runs: []RunRef{}, Trials: []Trial{}, Outcomes: map[string]int{}}
			if trials, ok := planted[c.Name+"/"+l.Name]; ok {
				cell.Trials = trials
				if c.probe == nil {
					cell.Runs = []RunRef{{ID: trials[0].Run, History: "runs/" + trials[0].Run + ".history.jsonl.gz"}}
					cell.Check = "agrees"
				}
				if l.Fencing {
					cell.FencingRejected = 1
				}
				cell.judge(c, verdict.DefaultLevel)
			} else if ok, why := c.Applies(l); !ok {
				cell.Verdict, cell.Why = emptyVerdict(c.on(l), l), why
			} else {
				cell.Verdict = Inconclusive.String()
			}
			row = append(row, cell)
		}
		m.Cells = append(m.Cells, row)
	}
	return m
}

// TestMatrixGolden renders the matrix as text, JSON and HTML against golden
// files; every text line is within the table width, and every measured
// cell of the page links to its run and history.
func TestMatrixGolden(t *testing.T) {
	m := fixtureMatrix()
	var text, js, page bytes.Buffer
	if err := WriteMatrix(&text, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrixJSON(&js, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrixHTML(&page, m, "runs", "."); err != nil {
		t.Fatal(err)
	}
	resultstest.Golden(t, "matrix.txt", text.Bytes())
	resultstest.Golden(t, "matrix.json", js.Bytes())
	resultstest.Golden(t, "matrix.html", page.Bytes())
	for _, line := range strings.Split(text.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > results.MaxTableWidth {
			t.Errorf("line of %d columns: %s", n, line)
		}
	}
	for _, want := range []string{`href="runs/r1.json"`, `href="runs/r2.history.jsonl.gz"`, `href="#renewal-failing--single"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, want := range []string{"overran 1/2", "undecided 0/1 (≤95%)", "kept 30/30", "undecided", "absent",
		"starved-renewer: overran on single (1/2) against undecided 0/3 (≤64%) on redsync (0/3): no difference shown", "deleted or resurrected (release-race)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("matrix lacks %q", want)
		}
	}
}
