package renewal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results"
)

// storing is a Runner as the command's: each run stored in dir with its
// history beside it.
func storing(dir string) Runner {
	return func(ctx context.Context, v plan.Values) (*results.Result, error) {
		v = v.Clone()
		v.Set("out", dir)
		v.Set("history", dir+"/")
		v.Set("quiet", "true")
		plans, err := plan.Expand(v)
		if err != nil {
			return nil, err
		}
		r, err := plan.Execute(ctx, plans[0], plan.Env{})
		if err != nil {
			return nil, err
		}
		if _, err := results.Write(dir, r); err != nil {
			return nil, err
		}
		return r, nil
	}
}

// TestPlantedCells runs two cells on a real Redis whose answers follow
// from first principles, and checks the matrix says them:
//   - overran: process-paused on single. Every holder works half a TTL,
//     then half of them stall two TTLs before writing: a paused process
//     renews nothing, so each stalled holder writes more than half a TTL
//     after its lease ended, and nothing (no fence) stops it.
//   - caught: renewal-failing on single with work far longer than the run.
//     The path to Redis is cut for two TTLs; a holder's lease ends at most
//     a TTL into the cut, its next renewal (every third of a TTL) comes
//     while the path is still cut and fails past the validity, and the
//     holder stops; no holder's work could have ended first.
//
// Each cell's runs are stored with their histories, and lockbench check
// agrees with every run's incidents.
func TestPlantedCells(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis for ten seconds; run without -short")
	}
	dir := t.TempDir()
	paused := caseNamed(t, "process-paused")
	failing := caseNamed(t, "renewal-failing")
	recipe := failing.recipe
	failing.recipe = func(l Lock) plan.Values {
		v := recipe(l)
		v.Set("hold", "const:"+ms(l.TTL, 20, 1))
		return v
	}
	m, _ := runOnSingle(t, []Case{paused, failing}, storing(dir))
	for i, want := range []string{"overran", "caught"} {
		cell := m.Cell(i, 0)
		if cell.Verdict != want || cell.Conclusive == 0 {
			t.Errorf("%s on single: %s over %d conclusive trials; want %s", cell.Case, cell.Verdict, cell.Conclusive, want)
		}
		if cell.Check != "agrees" {
			t.Errorf("%s on single: check %s", cell.Case, cell.Check)
		}
		for _, r := range cell.Runs {
			for _, p := range []string{filepath.Join(dir, r.ID+".json"), r.History} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s on single: run %s: %v", cell.Case, r.ID, err)
				}
			}
		}
	}
	if d := m.Cell(1, 0).Delays; d == nil || d.N == 0 {
		t.Errorf("caught cell without detection delays")
	}
}

// TestPlantedProbes probes single on a real Redis, where the answers
// follow from its scripts: its renewal is PEXPIRE to the TTL, so the key
// has at most a TTL left after a renewal half a TTL in (resets, never
// adds); its release deletes the key and its renewal checks the token on
// a key that must exist, so a renewal after release is lost and no key is
// left (refused, never recreated).
func TestPlantedProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis; run without -short")
	}
	m, text := runOnSingle(t, []Case{caseNamed(t, "adds-or-resets"), caseNamed(t, "renew-after-unlock")}, nil)
	// Every trial with exposure must give the planted answer; a trial the
	// loaded machine made inconclusive (a renewal that slept past the
	// lease's validity has no lease to probe) is left out of k/n, not
	// failed, but at least one of the three must have probed.
	for i, want := range []string{"resets", "refused"} {
		cell := m.Cell(i, 0)
		var k, n int
		var word string
		if _, err := fmt.Sscanf(cell.Short(), "%s %d/%d", &word, &k, &n); err != nil || word != want || k != n || n < 1 {
			t.Errorf("%s on single: %s (%+v); want %s k/k, k ≥ 1", cell.Case, cell.Short(), cell.Trials, want)
		}
		if len(cell.Runs) != 0 || cell.OverranUpper == nil {
			t.Errorf("%s on single: %d runs, bounds %v; want a probe's (no run, bounded)", cell.Case, len(cell.Runs), cell.OverranUpper)
		}
	}
	if !strings.Contains(text, "renewal lost, key absent") {
		t.Errorf("the renew-after-unlock paragraph does not say what the trials saw")
	}
}

// runOnSingle runs cases on single, three trials each, and logs the
// matrix it returns with its text.
func runOnSingle(t *testing.T, cases []Case, run Runner) (Matrix, string) {
	t.Helper()
	m, err := Run(context.Background(), cases, Locks()[:1], 3, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteMatrix(&text, m); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + text.String())
	return m, text.String()
}
