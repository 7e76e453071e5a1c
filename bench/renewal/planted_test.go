package renewal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench/check"
	"github.com/lockbench/lockbench/bench/history"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
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
		if !says(cell, want) {
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
		if !says(cell, want) {
			t.Errorf("%s on single: %s (%+v); want %s in every conclusive trial, at least one", cell.Case, cell.Short(), cell.Trials, want)
		}
		if len(cell.Runs) != 0 || cell.OverranUpper == nil {
			t.Errorf("%s on single: %d runs, bounds %v; want a probe's (no run, bounded)", cell.Case, len(cell.Runs), cell.OverranUpper)
		}
	}
	if !strings.Contains(text, "renewal lost, key absent") {
		t.Errorf("the renew-after-unlock paragraph does not say what the trials saw")
	}
}

// says reports whether a cell gives the planted answer want by the k-of-n
// rule: a word of harm is the cell's word; a word of safety is either the
// cell's word (enough trials to bound the harm) or, with too few for that,
// undecided with every conclusive trial of that outcome.
func says(cell Cell, want string) bool {
	if cell.Conclusive == 0 {
		return false
	}
	if cell.Verdict == want {
		return true
	}
	return cell.Undecided() && cell.Outcomes[want] == cell.Conclusive
}

// runOnSingle runs cases on single, three trials each, and logs the
// matrix it returns with its text.
func runOnSingle(t *testing.T, cases []Case, run Runner) (Matrix, string) {
	t.Helper()
	return runOn(t, cases, Locks()[:1], run)
}

// runOn runs cases on locks, three trials each, and logs the matrix it
// returns with its text.
func runOn(t *testing.T, cases []Case, locks []Lock, run Runner) (Matrix, string) {
	t.Helper()
	m, err := Run(context.Background(), cases, locks, Options{Trials: 3}, run)
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

// TestPlantedStarvedRenewer runs starved-renewer on single on a real
// Redis with one holder whose every work starts with a burst of two TTLs
// that no goroutine of the process can interrupt; its renewer goroutine
// (every third of a TTL) is starved, so the lease ends a TTL into the
// burst. The answers follow from what comes first after the burst:
//   - overran: the work ends with the burst. The holder checks at once
//     and writes; its renewer needs a round trip to Redis to learn the
//     lease is gone, so it cannot tell the holder before the write.
//   - caught: two TTLs of work remain after the burst. The renewer's
//     renewal, overdue, goes out as the burst ends, finds the key expired
//     (lost) and tells the holder, which stops without writing.
func TestPlantedStarvedRenewer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis for five seconds; run without -short")
	}
	starved := caseNamed(t, "starved-renewer")
	var cases []Case
	for _, hold := range []int{2, 4} {
		c := starved
		c.recipe = func(l Lock) plan.Values {
			v := starved.recipe(l)
			v.Set("concurrency", "1")
			v.Set("keys", "uniform:1")
			v.Set("burst-prob", "1")
			v.Set("hold", "const:"+ms(l.TTL, hold, 1))
			return v
		}
		cases = append(cases, c)
	}
	dir := t.TempDir()
	m, _ := runOnSingle(t, cases, storing(dir))
	for i, want := range []string{"overran", "caught"} {
		cell := m.Cell(i, 0)
		if !says(cell, want) {
			t.Errorf("work of %d TTLs: %s over %d conclusive trials; want %s", 2*(i+1), cell.Verdict, cell.Conclusive, want)
		}
		if cell.Check != "agrees" {
			t.Errorf("work of %d TTLs: check %s", 2*(i+1), cell.Check)
		}
	}
}

// TestPlantedReleaseRace races a renewal held 200 ms in transit (as the
// DelayRequestsProxy holds a request) with the release on a real Redis,
// so that it reaches the server after the release's DEL:
//   - deleted: single's renewal checks the token on a key that must
//     exist; after the DEL it is lost and the key stays absent;
//   - resurrected: a renewal that writes the key without looking (SET NX
//     here, as a naive refresh does) recreates it after the release.
func TestPlantedReleaseRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis; run without -short")
	}
	const transit = 200 * time.Millisecond
	l := Locks()[0]
	plans, err := plan.Expand(base(l))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		renew func(ctx context.Context, inner lockimpl.Locker, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error)
		want  Outcome
	}{
		{name: "deleted", want: Caught, renew: func(ctx context.Context, inner lockimpl.Locker, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
			return inner.Renew(ctx, lease, ttl)
		}},
		{name: "resurrected", want: Overran, renew: func(ctx context.Context, inner lockimpl.Locker, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
			_, o, err := inner.Acquire(ctx, lease.Key, ttl)
			return o, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := plan.WithProbe(context.Background(), plans[0], plan.Env{}, func(ctx context.Context, p plan.Probe) error {
				p.Locker = heldRenewal{Locker: p.Locker, transit: transit, renew: tc.renew}
				for i := range 3 {
					tr, err := releaseRace(ctx, l, p, fmt.Sprintf("%srace:%d", p.Prefix, i), i)
					if err != nil {
						return err
					}
					if tr.Outcome != tc.want || tr.Exposure != 1 {
						t.Errorf("trial %d: %s, exposure %d (%s); want %s", i, tr.Outcome, tr.Exposure, tr.Observed, tc.want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// heldRenewal holds each renewal in transit before renew sends it.
type heldRenewal struct {
	lockimpl.Locker
	transit time.Duration
	renew   func(ctx context.Context, inner lockimpl.Locker, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error)
}

func (h heldRenewal) Renew(ctx context.Context, lease *lockimpl.Lease, ttl time.Duration) (lockimpl.Outcome, error) {
	time.Sleep(h.transit)
	return h.renew(ctx, h.Locker, lease, ttl)
}

// TestPlantedNatsKV runs two cells on a real nats-server (nats:1) whose
// answers follow from first principles, and checks the matrix says them:
//   - overran: process-paused with one worker on one key. Each holder
//     works half a TTL, then stalls two TTLs before writing: a paused
//     holder renews nothing, so its key's TTL (one second) runs out and
//     the write comes more than half a TTL after the lease ended. Nobody
//     else holds the key meanwhile, so no newer revision exists for the
//     fence to reject the write by: it lands.
//   - caught: renewal-failing with work far longer than the run. The
//     server is paused (SIGSTOP) for two TTLs; a holder's lease ends at
//     most a TTL into the pause, its renewals meanwhile get no answer
//     and fail, the first failure past the validity stops the holder,
//     and no holder's work could have ended first.
//
// lockbench check agrees with every run's incidents.
func TestPlantedNatsKV(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nats-server for twenty seconds; run without -short")
	}
	if _, _, err := compose.NatsServerBinary(); err != nil {
		t.Skip(err)
	}
	paused := caseNamed(t, "process-paused")
	pausedRecipe := paused.recipe
	paused.recipe = func(l Lock) plan.Values {
		v := pausedRecipe(l)
		v.Set("concurrency", "1")
		v.Set("keys", "uniform:1")
		v.Set("pause-prob", "1")
		return v
	}
	failing := caseNamed(t, "renewal-failing")
	failingRecipe := failing.recipe
	failing.recipe = func(l Lock) plan.Values {
		v := failingRecipe(l)
		v.Set("hold", "const:"+ms(l.TTL, 20, 1))
		return v
	}
	nats := lockNamed(t, lockimpl.LockNatsKV)
	m, _ := runOn(t, []Case{paused, failing}, []Lock{nats}, storing(t.TempDir()))
	for i, want := range []string{"overran", "caught"} {
		cell := m.Cell(i, 0)
		if !says(cell, want) || cell.Outcomes[want] != cell.Conclusive {
			t.Errorf("%s on nats-kv: %s over %d conclusive trials (%v); want %s in every one", cell.Case, cell.Verdict,
				cell.Conclusive, cell.Outcomes, want)
		}
		if cell.Check != "agrees" {
			t.Errorf("%s on nats-kv: check %s", cell.Case, cell.Check)
		}
	}
	if got := m.Cell(0, 0).FencingRejected; got != 0 {
		t.Errorf("process-paused with one holder: %d writes rejected by the fence; want none (no newer revision)", got)
	}
}

// lockNamed is the matrix's column of lock name.
func lockNamed(t *testing.T, name string) Lock {
	t.Helper()
	for _, l := range Locks() {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no lock %s in the matrix", name)
	return Lock{}
}

// TestPlantedZk runs renewal-failing on a real ZooKeeper member
// (zookeeper:1), as its session analogue: the ensemble ends the session
// every lease of the run lives in, three times. Nothing of the zk lock
// tells a holder (it renews nothing, and the runner does not stop a holder
// on the session's end), and every holder's work ends within its session
// timeout, so a holder inside when the session ended writes after losing
// its node: overran, or fenced where a newer holder wrote first; never
// caught. The lock reports the session's end, which the run records before
// each write: lockbench check then counts every late write the cell saw
// as a write after the lease (and any outside the firings too), as the
// run's incidents do (expired during work), and agrees with them.
func TestPlantedZk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ZooKeeper for ten seconds; run without -short")
	}
	if !compose.ZkInstalled() {
		t.Skip(compose.ErrNoZooKeeper)
	}
	m, err := Run(context.Background(), []Case{caseNamed(t, "renewal-failing")}, []Lock{lockNamed(t, lockimpl.LockZk)}, Options{Trials: 3},
		storing(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cell := m.Cell(0, 0)
	t.Logf("%+v", cell.Outcomes)
	if cell.Conclusive == 0 || cell.Outcomes["caught"] > 0 || cell.Outcomes["overran"]+cell.Outcomes["fenced"] != cell.Conclusive {
		t.Errorf("renewal-failing on zk: %s, %v over %d conclusive trials; want overran or fenced in every one",
			cell.Verdict, cell.Outcomes, cell.Conclusive)
	}
	if cell.Check != "agrees" {
		t.Errorf("renewal-failing on zk: check %s", cell.Check)
	}
	late, checked := lateLeases(cell), int64(0)
	for _, r := range cell.Runs {
		h, err := history.ReadFile(r.History)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := check.Check(h, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		checked += rep.Counts.LateWrites
	}
	// Check reads the whole history, the trials only the firings: a
	// session a stalled host let lapse between the faults (CI saw 5 late
	// leases in the trials and 6 late writes in check) is a late write no
	// trial owns. So check counts at least every late write of the trials.
	if late == 0 || checked < int64(late) {
		t.Errorf("renewal-failing on zk: the cell saw %d late write(s), check counts %d writes after the lease; want at least as many, at least one",
			late, checked)
	}
}

// lateLeases counts the leases of a cell's trials that wrote after
// losing their lease (overran or fenced).
func lateLeases(cell Cell) int {
	n := 0
	for _, tr := range cell.Trials {
		n += tr.Leases[Overran.String()] + tr.Leases[Fenced.String()]
	}
	return n
}

// TestPlantedRunTwice runs starved-renewer on single twice, as a user
// would: whether a holder's burst ends before its renewer learns of the
// loss is a matter of timing, so one run may see only caught trials and
// the next an overrun. By the k-of-n rule neither run may say caught on
// the few trials it has (a word of safety needs its 95% upper bound within
// 10%: at least 29 conclusive trials, every one caught), and the two words
// never contradict: overran and caught together would need 29 clean trials
// in one and an overrun in the other.
func TestPlantedRunTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis twice for a few seconds; run without -short")
	}
	starved := caseNamed(t, "starved-renewer")
	var words []string
	for range 2 {
		m, _ := runOnSingle(t, []Case{starved}, storing(t.TempDir()))
		cell := m.Cell(0, 0)
		if cell.Conclusive > 0 && cell.Conclusive < 29 && cell.Verdict == "caught" {
			t.Errorf("starved-renewer on single: caught on %d conclusive trials; want overran or undecided", cell.Conclusive)
		}
		words = append(words, cell.Decision.Class.String())
	}
	if (words[0] == "harm" && words[1] == "safety") || (words[0] == "safety" && words[1] == "harm") {
		t.Errorf("two runs said %v: a word of harm and a word of safety", words)
	}
}

// TestPlantedProbesDecideWithinBudget: with a budget, an undecided probe
// cell is probed again with the trials that decide it. single's renewal
// resets the key's time to the TTL (its script is PEXPIRE to the TTL), so
// every trial resets, none adds: with 29 or more conclusive trials and no
// harm, the 95% upper bound is within 10% and the cell reads resets.
func TestPlantedProbesDecideWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis; run without -short")
	}
	m, err := Run(context.Background(), []Case{caseNamed(t, "adds-or-resets")}, Locks()[:1], Options{Trials: 3, Budget: 2 * time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cell := m.Cell(0, 0)
	if cell.Verdict != "resets" || cell.Conclusive < 29 || cell.Outcomes["resets"] != cell.Conclusive {
		t.Errorf("adds-or-resets on single: %s over %d conclusive trials (%v); want resets in 29 or more", cell.Short(), cell.Conclusive, cell.Outcomes)
	}
}

// TestPlantedParallel runs process-paused on single (overran, from first
// principles: see TestPlantedCells) as two runs, side by side and one
// after the other: the same word, and the cell's runs in run order.
func TestPlantedParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Redis four times for a few seconds; run without -short")
	}
	paused := caseNamed(t, "process-paused")
	words := map[int]string{}
	for _, parallel := range []int{1, 2} {
		dir := t.TempDir()
		m, err := Run(context.Background(), []Case{paused}, Locks()[:1], Options{Trials: 6, Parallel: parallel}, storing(dir))
		if err != nil {
			t.Fatal(err)
		}
		cell := m.Cell(0, 0)
		if len(cell.Runs) != 2 || !says(cell, "overran") || cell.Check != "agrees" {
			t.Errorf("--parallel %d: %d runs, %s (check %s); want 2 runs, overran, agreeing", parallel, len(cell.Runs), cell.Short(), cell.Check)
		}
		words[parallel] = cell.Verdict
	}
	if words[1] != words[2] {
		t.Errorf("--parallel 2 says %s, --parallel 1 %s", words[2], words[1])
	}
}
