package renewal

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// PlannedRuns lists the runs cell by cell (case by case, lock by lock),
// each cell's runs numbered from 1, ceil(trials / firings) of them; a
// probe (release-race) and a cell that does not apply (process-paused on
// zk, whose lease is a session) have none.
func TestPlannedRuns(t *testing.T) {
	cases := []Case{caseNamed(t, "process-paused"), caseNamed(t, "release-race"), caseNamed(t, "renewal-failing")}
	locks := []Lock{lockNamed(t, lockimpl.LockSingle), lockNamed(t, lockimpl.LockZk)}
	var got []string
	for _, p := range PlannedRuns(cases, locks, 4) {
		got = append(got, fmt.Sprintf("%s/%s/%d", p.Case.Name, p.Lock.Name, p.N))
		if l := p.Values().Get("label"); l != Label(p.Case, p.Lock, p.N) {
			t.Errorf("%s on %s run %d: label %q", p.Case.Name, p.Lock.Name, p.N, l)
		}
	}
	want := []string{
		"process-paused/single/1", "process-paused/single/2",
		"renewal-failing/single/1", "renewal-failing/single/2",
		"renewal-failing/zk/1", "renewal-failing/zk/2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("planned runs %v, want %v", got, want)
	}
	if zk := PlannedRuns(cases, locks, 4)[4]; zk.Values().Get("lock") != lockimpl.LockZk || zk.Case.recipe == nil {
		t.Errorf("zk's run: flags %v: want its session form's, on zk", zk.Values())
	}
	if n := len(PlannedRuns([]Case{caseNamed(t, "release-race")}, locks, 3)); n != 0 {
		t.Errorf("a probe case: %d planned runs, want none", n)
	}
}

// Run starts its planned runs in PlannedRuns' order, each with exactly the
// flags PlannedRuns gives it (what a pod of the Indexed Job runs and
// stores, and --resume then looks up): the two cannot drift apart.
func TestRunFollowsPlannedRuns(t *testing.T) {
	cases := []Case{caseNamed(t, "process-paused"), caseNamed(t, "renewal-failing")}
	locks := []Lock{lockNamed(t, lockimpl.LockSingle), lockNamed(t, lockimpl.LockZk)}
	dir := t.TempDir()
	var mu sync.Mutex
	var ran []plan.Values
	fake := func(_ context.Context, v plan.Values) (*results.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, v.Clone())
		id := fmt.Sprintf("run-%d", len(ran))
		path := filepath.Join(dir, id+".history.jsonl.gz")
		if err := history.WriteFile(path, &history.History{Header: history.Header{Schema: history.Schema, RunID: id}, Trailer: &history.Trailer{}}); err != nil {
			return nil, err
		}
		return &results.Result{Schema: results.Schema, ID: id, History: path}, nil
	}
	m, err := Run(context.Background(), cases, locks, Options{Trials: 6}, fake)
	if err != nil {
		t.Fatal(err)
	}
	planned := PlannedRuns(cases, locks, 6)
	if len(ran) != len(planned) {
		t.Fatalf("Run ran %d runs, PlannedRuns lists %d", len(ran), len(planned))
	}
	for k, p := range planned {
		if want := p.Values(); !reflect.DeepEqual(ran[k], want) {
			t.Errorf("run %d: Run ran %v, PlannedRuns gives %v", k, ran[k], want)
		}
	}
	if runs := m.Cell(1, 1).Runs; len(runs) != 2 || runs[0].ID != "run-5" || runs[1].ID != "run-6" {
		t.Errorf("renewal-failing on zk: runs %+v, want run-5 and run-6", runs)
	}
}
