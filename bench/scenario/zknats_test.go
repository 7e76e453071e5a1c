package scenario

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/longtest"
)

// TestZkNatsRecipes checks the two recipes' shape without servers: each
// variant's flags plan on its topology (the unfenced variant takes
// --unfenced-writes, which only fencing locks take), and the exposure is
// read at the fault the base schedules.
func TestZkNatsRecipes(t *testing.T) {
	for _, tc := range []struct{ name, fault string }{
		{"zk-session-expiry", "expire holder"},
		{"nats-leader-loss", "kill leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Lookup(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if s.violated == nil || s.exposure == nil || s.exposure.what != tc.fault {
				t.Fatalf("want a violation and exposure at %q, got exposure %+v", tc.fault, s.exposure)
			}
			if !strings.Contains(strings.Join(s.Base["fault"], " "), tc.fault) {
				t.Fatalf("base faults %v do not schedule %q", s.Base["fault"], tc.fault)
			}
			var mitigated, unmitigated int
			for _, v := range s.Variants {
				if _, err := variantPlans(s, v); err != nil {
					t.Errorf("%s: %v", v.Name, err)
				}
				if v.Mitigated {
					mitigated++
					if v.Flags.Has("unfenced-writes") {
						t.Errorf("%s: a mitigated variant without its fence", v.Name)
					}
				} else {
					unmitigated++
				}
			}
			if mitigated != 1 || unmitigated != 1 {
				t.Errorf("%d mitigated, %d unmitigated variants; want the fence and the same lock without it", mitigated, unmitigated)
			}
		})
	}
}

// TestZkNatsRecipeRefused: the planning TestZkNatsRecipes relies on does
// refuse a recipe that could not run: expire on nats, the fence dropped
// from a lock without one.
func TestZkNatsRecipeRefused(t *testing.T) {
	zk, _ := Lookup("zk-session-expiry")
	for _, flags := range []plan.Values{
		vals("topology", "nats:3", "lock", "nats-kv"),
		vals("topology", "single", "lock", "single"),
	} {
		if _, err := variantPlans(zk, Variant{Name: "bad", Flags: flags}); err == nil {
			t.Errorf("%v over zk-session-expiry planned; want a refusal", flags)
		}
	}
}

// TestZkNatsScenarios runs the recipes with 3 trials on real servers: an
// expired session's holder writes after the next holder, which the czxid
// fence rejects and an unfenced write lets through; the KV stream's leader
// loss lets no stale write through the revision fence; the stream leader
// cut off from the other servers grants no key twice; nothing of the
// servers is left.
func TestZkNatsScenarios(t *testing.T) {
	longtest.Waiting(t)
	for _, name := range []string{"zk-session-expiry", "nats-leader-loss", "nats-leader-isolated"} {
		t.Run(name, func(t *testing.T) {
			if name == "zk-session-expiry" && !compose.ZkInstalled() {
				t.Skip(compose.ErrNoZooKeeper)
			}
			s, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			// Every trial conclusive. Trials with no acquisition in the
			// window were the zk lock left on a session the ensemble had
			// expired without closing its connection (lockimpl's
			// dropExpired), and trials whose expire was reported failed
			// although it had ended the session (closedEarlier).
			v, err := Run(context.Background(), s, Options{Trials: 3}, execute)
			if err != nil {
				t.Fatal(err)
			}
			if left := append(compose.ZkLeftovers(os.Getpid()), compose.NatsLeftovers(os.Getpid())...); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
			var sb strings.Builder
			_ = WriteVerdict(&sb, v)
			t.Log("\n" + sb.String())
			for _, vv := range v.Variants {
				if vv.Conclusive < minConclusive(name, len(vv.Trials)) {
					t.Errorf("%s / %s: %d of %d trials conclusive (%s), want %d", name, vv.Variant.Name, vv.Conclusive,
						len(vv.Trials), whyInconclusive(vv.Trials), minConclusive(name, len(vv.Trials)))
				}
			}
			for _, vv := range v.Variants {
				switch {
				case vv.Variant.Mitigated && vv.StaleAccepted != 0:
					t.Errorf("%s: %d stale writes accepted through the fence", vv.Variant.Name, vv.StaleAccepted)
				case name == "nats-leader-isolated" && vv.DoubleGrants != 0:
					t.Errorf("%s: %d double grants with the stream leader cut off", vv.Variant.Name, vv.DoubleGrants)
				case name == "zk-session-expiry" && !vv.Variant.Mitigated && vv.Violated == 0:
					t.Errorf("%s: no stale write accepted in %d trials of four expiries", vv.Variant.Name, len(vv.Trials))
				}
			}
		})
	}
}

// minConclusive is how many of a scenario's trials TestZkNatsScenarios
// wants conclusive. zk's inconclusive trials were lockbench's bugs, so it
// wants all. A NATS trial is inconclusive when no acquisition fell in its
// window: with holds of a heavy tail and the stream's election taking
// seconds (5–8 s on a CI host sharing two cores with the suite), a loaded
// host once saw a trial whose four keys were held across the second
// before the kill and the election outlasted the rest of the 10 s. That
// is the server's time, not a fault of the lock, and the verdict says so
// ("inconclusive"); the test wants a majority, so a verdict still stands
// on evidence.
func minConclusive(scenario string, trials int) int {
	if scenario == "nats-leader-loss" {
		return trials/2 + 1
	}
	return trials
}

// variantPlans plans one variant's flags as Run would run them, without
// running them.
func variantPlans(s Scenario, v Variant) ([]plan.Plan, error) {
	flags := s.Base.Clone()
	for k, val := range v.Flags {
		flags[k] = append([]string(nil), val...)
	}
	return plan.Expand(flags)
}
