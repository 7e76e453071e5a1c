package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRenewalCheckOnSwarm runs one renewal-check cell (process-paused on
// single, two runs) with --engine swarm: each run a Swarm task that writes
// its history into a directory of this machine bound into it. The cell has
// the word its recipe earns from first principles (the whole holder is
// paused past its TTL and writes after it: overran), its runs and their
// histories are in --out on the host, read by the matrix as local ones
// are, and nothing is left: no service, task container, network, Swarm
// state, nor the temporary directories of the histories. Then Ctrl-C in
// the second run keeps the first, with its history, and leaves nothing
// either.
func TestRenewalCheckOnSwarm(t *testing.T) {
	ctx, cli, before := swarmTrialEngine(t)
	image := trialTestImage(t, ctx, cli)
	// The runner's temporary directories go here, to be seen gone.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	out := t.TempDir()
	code, stdout, errs := lockbench(t, "renewal-check", "--cases", "process-paused", "--locks", "single", "--trials", "6", "--budget", "0",
		"--engine", "swarm", "--engine-image", image, "--out", out, "--format", "json", "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, errs, stdout)
	}
	var doc struct {
		Cells [][]struct {
			Case, Lock, Verdict string
			Runs                []struct{ ID, History string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(doc.Cells) != 1 || len(doc.Cells[0]) != 1 {
		t.Fatalf("cells %+v: want one", doc.Cells)
	}
	cell := doc.Cells[0][0]
	if cell.Verdict != "overran" || len(cell.Runs) != 2 {
		t.Errorf("cell %s on %s: %q with %d runs, want overran with 2", cell.Case, cell.Lock, cell.Verdict, len(cell.Runs))
	}
	for _, r := range cell.Runs {
		st, err := os.Stat(r.History)
		switch {
		case err != nil:
			t.Errorf("run %s: its history: %v", r.ID, err)
		case filepath.Dir(r.History) != filepath.Clean(out) || st.Size() == 0:
			t.Errorf("run %s: history %s (%d bytes), want a file in --out", r.ID, r.History, st.Size())
		}
		if _, err := os.Stat(filepath.Join(out, r.ID+".json")); err != nil {
			t.Errorf("run %s: its result: %v", r.ID, err)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("%d temporary entries left (%s...): want none", len(left), left[0].Name())
	}
	if after := snapshot(t, ctx, cli); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the run left the engine changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if strings.Contains(errs, "panic") {
		t.Errorf("stderr: %s", errs)
	}

	// Ctrl-C once the first run is stored: it is kept with its history,
	// the second is stopped in its task, and the task and its temporary
	// directory go.
	out = t.TempDir()
	ictx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	go func() {
		for ictx.Err() == nil {
			if files, _ := filepath.Glob(filepath.Join(out, "*.json")); len(files) > 0 {
				time.Sleep(2 * time.Second) // the second run's task is up
				interrupt()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	var so, se bytes.Buffer
	code = run(ictx, []string{"lockbench", "renewal-check", "--cases", "process-paused", "--locks", "single", "--trials", "6", "--budget", "0",
		"--engine", "swarm", "--engine-image", image, "--out", out, "-q"}, &so, &se)
	t.Logf("interrupted renewal-check on swarm: exit %d\n%s%s", code, se.String(), so.String())
	if code != exitSIGINT {
		t.Errorf("exit %d: want %d", code, exitSIGINT)
	}
	kept, _ := filepath.Glob(filepath.Join(out, "*.json"))
	histories, _ := filepath.Glob(filepath.Join(out, "*.history.jsonl.gz"))
	if len(kept) != 1 || len(histories) != 1 {
		t.Errorf("%d results and %d histories kept: want the first run's, one each", len(kept), len(histories))
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("%d temporary entries left after Ctrl-C (%s...): want none", len(left), left[0].Name())
	}
	if after := snapshot(t, ctx, cli); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the interrupted run left the engine changed:\nbefore %+v\nafter  %+v", before, after)
	}
}
