package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/job"
	"github.com/lockbench/lockbench/compose/longtest"
	"github.com/lockbench/lockbench/results"
)

// oneCellMap is a failover map of one cell: single without a mitigation,
// no lag, holds of 100 ms, whose failovers take about 10 s each.
var oneCellMap = []string{"failover-map", "--lock", "single", "--mitigation", "none", "--lag", "0", "--hold", "100ms"}

// failoverMapJSON runs a failover map with --format json and decodes it.
type failoverMapJSON struct {
	Plan struct {
		PerCell int `json:"per_cell"`
	} `json:"plan"`
	Cells []struct {
		Fresh      bool `json:"fresh"`
		Conclusive int  `json:"conclusive"`
		Failovers  []struct {
			RunID      string `json:"run"`
			Status     string `json:"status"`
			OnTopology int    `json:"on_topology"`
			Conclusive bool   `json:"conclusive"`
		} `json:"failovers"`
	} `json:"cells"`
	Measured int `json:"measured"`
}

// --engine k8s prints an Indexed Job of the planned failovers, every one
// asked for (no budget fits them: a 1 s budget would hold none), one index
// each, --parallel pods at once; each pod's command is the map's axes with
// --trial-index from the completion index.
func TestFailoverMapK8sJob(t *testing.T) {
	j := k8sTrialJob(t, "failover-map", "--lock", "single", "--mitigation", "none", "--lag", "0,100ms", "--hold", "100ms", "--failovers", "3",
		"--parallel", "4", "--engine", "k8s", "--engine-image", testJobImage)
	if *j.Completions != 6 || *j.Parallelism != 4 {
		t.Fatalf("job %+v: want 6 indexes (2 cells × 3 failovers), 4 at once", j)
	}
	want := "failover-map --topology replicated --lag 0,100ms --hold 100ms --mitigation none --wait-timeout 100ms --failovers 3 --lock single --out " +
		job.ResultsDir + " -q --trial-index $(JOB_COMPLETION_INDEX)"
	if got := podArgs(j); got != want {
		t.Errorf("pod args %q: want %q", got, want)
	}
}

// The pods of --engine k8s, run here: each index runs the failover the
// local map would run at that place, on a fresh topology, and prints it
// between the markers; results collect stores what their logs hold, and
// --fresh --resume folds them into the map, running none again: both
// failovers reused, each from a fresh topology.
func TestFailoverMapTrialIndexMergesAsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real failovers")
	}
	longtest.Skip(t)
	var logs strings.Builder
	for k := range 2 {
		code, out, errs := lockbench(t, append(append([]string{}, oneCellMap...), "--failovers", "2", "--out", t.TempDir(), "-q",
			"--trial-index", strconv.Itoa(k))...)
		if code != 0 {
			t.Fatalf("index %d: exit %d, stderr %q", k, code, errs)
		}
		// As kubectl logs --prefix writes them.
		logs.WriteString(prefixLines(fmt.Sprintf("[pod/fm-%d/trial] ", k), out))
	}
	store := collectPodLogs(t, logs.String())
	before, _ := os.ReadDir(store)
	code, out, errs := lockbench(t, append(append([]string{}, oneCellMap...), "--failovers", "2", "--fresh", "--resume", "--out", store, "--format", "json", "-q")...)
	if code != 0 {
		t.Fatalf("--resume: exit %d, stderr %q", code, errs)
	}
	// Without --fresh the map would run them all again: refused, naming
	// the flag.
	if code, _, errs := lockbench(t, append(append([]string{}, oneCellMap...), "--failovers", "2", "--resume", "--out", store, "-q")...); code != exitBadInput ||
		!strings.Contains(errs, "give --fresh") {
		t.Errorf("--resume without --fresh: exit %d, stderr %q: want exit 2 naming --fresh", code, errs)
	}
	var m failoverMapJSON
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(before) != 2 || len(m.Cells) != 1 || !m.Cells[0].Fresh {
		t.Fatalf("%d stored before --resume, map %+v: want 2 stored, one fresh cell", len(before), m)
	}
	// Both stored failovers are reused, each from a fresh topology. A
	// loaded host can leave one inconclusive (its clients stalled past the
	// kill); only then does --resume top the cell up, one measured failover
	// for each inconclusive one (a top-up's own included), and store each.
	fs := m.Cells[0].Failovers
	reused, inconclusive := 0, 0
	for _, f := range fs {
		if f.OnTopology != 0 {
			t.Errorf("failover %+v: want one from a fresh topology", f)
		}
		if f.Status == "reused" {
			reused++
		}
		if !f.Conclusive {
			inconclusive++
		}
	}
	after, _ := os.ReadDir(store)
	if reused != 2 || m.Measured != len(fs)-2 || len(after) != 2+m.Measured {
		t.Fatalf("map %+v, %d stored after: want both stored failovers reused, each top-up measured and stored", m, len(after))
	}
	if m.Measured > inconclusive {
		t.Errorf("map %+v: %d failovers run again for %d inconclusive ones: want none beyond them", m, m.Measured, inconclusive)
	}
}

// TestFailoverMapOnSwarm runs a one-cell map of two failovers with
// --engine swarm --parallel 2: each failover a Swarm task on a fresh
// topology inside the trial image, both side by side. Both are measured
// and stored on the host, the map says each had a fresh topology, and
// nothing is left on the engine.
func TestFailoverMapOnSwarm(t *testing.T) {
	ctx, cli, before := swarmTrialEngine(t)
	image := trialTestImage(t, ctx, cli)
	out := t.TempDir()
	// --budget 1m: top-ups (of a failover the stalled machine made
	// inconclusive) stay few.
	code, stdout, errs := lockbench(t, append(append([]string{}, oneCellMap...), "--failovers", "2", "--parallel", "2", "--budget", "1m",
		"--engine", "swarm", "--engine-image", image, "--out", out, "--format", "json", "-q")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, errs, stdout)
	}
	var m failoverMapJSON
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(m.Cells) != 1 || !m.Cells[0].Fresh || len(m.Cells[0].Failovers) < 2 || m.Measured != len(m.Cells[0].Failovers) {
		t.Fatalf("map %+v: want one fresh cell of 2 or more failovers, every one measured", m)
	}
	for _, f := range m.Cells[0].Failovers {
		if f.OnTopology != 0 {
			t.Errorf("failover %+v: want a fresh topology", f)
		}
		if _, err := os.Stat(filepath.Join(out, f.RunID+".json")); err != nil {
			t.Errorf("failover %s: its result on the host: %v", f.RunID, err)
		}
	}
	// Stored as a local failover is: in the map's group.
	stored, _, err := results.List(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range stored {
		if r.Config["group"] != "failover-map" {
			t.Errorf("stored failover %s: group %v, want failover-map", r.ID, r.Config["group"])
		}
	}
	if after := snapshot(t, ctx, cli); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the run left the engine changed:\nbefore %+v\nafter  %+v", before, after)
	}
}
