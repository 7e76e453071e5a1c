package check_test

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench/bench/check"
	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/workloads"
)

// TestCheckAgreesWithTheRunOnEveryPreset runs every workload preset briefly
// on a local redis-server with a history, and checks that lockbench check
// counts exactly the run's own incidents: double grants, overruns, stale
// writes accepted and rejected. (The scenario recipes are checked the same
// way by the scenario package's tests.) The history is checked both in
// memory and streamed from its file.
func TestCheckAgreesWithTheRunOnEveryPreset(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server; run without -short")
	}
	for _, p := range workloads.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			dir := t.TempDir()
			v := plan.Values{}
			v.Set("workload", p.Name)
			v.Set("duration", "1s")
			v.Set("warmup", "0")
			v.Set("quiet", "true")
			v.Set("out", dir)
			v.Set("history", dir+"/h-{id}.jsonl.gz")
			if p.Flags["concurrency"] == "" {
				// The default 16 workers of an uncontended preset make a
				// hundred thousand events a second: more time, no more proof.
				v.Set("concurrency", "4")
			}
			if p.Flags["ttl"] == "" {
				// Presets that keep the default 10 s TTL would outlast the test.
				v.Set("ttl", "1s")
			}
			plans, err := plan.Expand(v)
			if err != nil {
				t.Fatal(err)
			}
			r, err := plan.Execute(context.Background(), plans[0], plan.Env{})
			if err != nil {
				t.Fatal(err)
			}
			h, err := history.ReadFile(r.History)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.Check(h, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Agree(r.Incidents); err != nil {
				t.Fatal(err)
			}
			// Streamed from the file, as lockbench check reads it.
			streamed, err := check.CheckFiles([]string{r.History}, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := streamed.Agree(r.Incidents); err != nil {
				t.Fatalf("streamed: %v", err)
			}
			if streamed.Counts != rep.Counts || streamed.CheckedEvents != rep.CheckedEvents {
				t.Fatalf("streamed %+v over %d events, in memory %+v over %d", streamed.Counts, streamed.CheckedEvents, rep.Counts, rep.CheckedEvents)
			}
			if r.Contention.Acquired == 0 || rep.CheckedEvents == 0 {
				t.Fatalf("nothing acquired (%d) or checked (%d): the agreement proves nothing", r.Contention.Acquired, rep.CheckedEvents)
			}
			t.Logf("%s: acquired %d, double grants %d, overruns %d, stale accepted %d, rejected %d; %d events",
				p.Name, r.Contention.Acquired, rep.Counts.DoubleGrants, rep.Counts.Overruns, rep.Counts.StaleAccepted, rep.Counts.FencingRejected, rep.CheckedEvents)
		})
	}
}
