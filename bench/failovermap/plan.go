package failovermap

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/advise"
	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Cell is one point of the map: a lock with its mitigation, at one lag and
// one mean hold time.
type Cell struct {
	Lock       string        `json:"lock"`
	Mitigation Mitigation    `json:"mitigation"`
	Lag        time.Duration `json:"lag"`
	Hold       time.Duration `json:"hold"`
	// Fresh runs every failover of the cell on a fresh topology of its
	// own, where it would otherwise follow the last one on a shared
	// topology (Successive): so the plan has it on an engine, whose tasks
	// each bring up their own servers (Plan.SetFresh).
	Fresh bool `json:"fresh,omitempty"`
}

// String names the cell, as progress lines and the disagreements do.
func (c Cell) String() string {
	return fmt.Sprintf("%s/%s lag=%v hold=%v", c.Lock, c.Mitigation, c.Lag, c.Hold)
}

// The workload every failover runs: keys few enough that each has waiters
// (so a key lost in the failover is asked for again at once), holds spread
// ±50% around the cell's mean so that the grants of the keys drift out of
// step and land evenly in time (a constant hold keeps them in bursts, and
// whether a burst falls inside the lag would decide the cell).
const (
	// grantRate is the grants per second a cell aims at around the kill:
	// the double grants a failover can show grow with it (Predict), and at
	// 8 keys held 5 s (1.6/s) no number of failovers told 0 from 0.4 per
	// failover. At 24/s the default grid's largest cell (500 ms of lag,
	// 3 s holds) predicts about 4 per failover. Keys are the rate × the
	// mean hold, within [minKeys, maxKeys]; the per-10,000-acquisitions
	// figure carries comparisons across rates.
	grantRate = 40
	minKeys   = 8
	maxKeys   = 128
	// waitersPerKey makes the workers twice the keys: a key released is
	// taken again within a retry.
	waitersPerKey = 3
	holdSpread    = 0.5
	retryEvery    = 20 * time.Millisecond
	// ttlMargin is how far the TTL lies above the longest hold: short, so
	// that a release lost with the primary (the replica keeps the earlier
	// holder's entry) does not block the key past the promotion for long.
	ttlMargin = 500 * time.Millisecond
	// stallAfterKill is how long the lag outlasts the kill: the replica
	// drops what it held when the link to its dead primary breaks.
	stallAfterKill = 300 * time.Millisecond
	// restoreAfter is when, after the kill, the dead primary is started
	// again (empty) to become the new primary's replica on a fresh
	// topology per failover: after the promotion (≈ 2 s with the
	// sentinels' 1 s down-after, 1.5 s node timeout on a cluster), so that
	// it cannot come back as the primary.
	restoreAfter = 4 * time.Second
	// resync is the time the restored replica takes to sync.
	resync = 2 * time.Second
	// sentinelRejoin is how long after its restart the sentinels turn the
	// dead primary into the new one's replica: they act on its INFO, which
	// they read every 10 s, once it has called itself master for their
	// failover timeout (3 s). Until then WAIT 1 has no replica to answer it,
	// so the WAIT cells wait for it (a cluster's node rejoins by itself).
	sentinelRejoin = 14 * time.Second
	// promoted is how long after the kill a successive failover's window
	// goes on at least, so that the promotion and the first grant after it
	// (the unavailability) fall inside it: ≈ 2–3 s here.
	promoted = 4 * time.Second
	// restoreCost is what a successive failover costs besides its warm-up
	// and window, in place of a bring-up: the dead primary started again,
	// synced, reached by the sentinels, the state verified, the run's
	// clients and workers set up and its keys cleaned up (measured ≈ 4–5 s
	// a failover on a 2-core host at load 13–19).
	restoreCost = 4 * time.Second
	// drain covers stopping the servers and holders still inside.
	drain = time.Second
)

// keysOf is the cell's key count: the grant rate × the mean hold, within
// [minKeys, maxKeys]. workersOf is its workers.
func keysOf(hold time.Duration) int {
	return min(maxKeys, max(minKeys, int(math.Ceil(grantRate*hold.Seconds()))))
}

func workersOf(hold time.Duration) int { return waitersPerKey * keysOf(hold) }

// Successive says whether the cell's failovers follow one another on one
// topology (the dead primary restored as a replica between them) rather
// than each on a fresh one: on replicated, without WAIT. A WAIT cell needs
// the replica back inside its window (WAIT 1 grants nothing without one),
// which the window's restart fault gives only on a fresh topology, where
// the dead primary is node 0.
func (c Cell) Successive(spec compose.Spec) bool {
	return !c.Fresh && spec.Kind == compose.KindReplicated && c.Mitigation != Wait
}

// Timing is when one failover's events fall, from its window's start.
type Timing struct {
	Warmup  time.Duration `json:"warmup"`
	KillAt  time.Duration `json:"kill_at"`
	Restore time.Duration `json:"restore_at"`
	Window  time.Duration `json:"window"`
}

// holdRange is the cell's hold distribution, uniform over [lo, hi].
func holdRange(mean time.Duration) (lo, hi time.Duration) {
	d := time.Duration(float64(mean) * holdSpread).Round(time.Millisecond)
	return mean - d, mean + d
}

// ttlOf is the cell's TTL: just above the longest hold.
func ttlOf(hold time.Duration) time.Duration {
	_, hi := holdRange(hold)
	return hi + ttlMargin
}

// timingOf places the kill once a hold time of warm-up put the keys'
// grants out of step and two whole seconds measured the grant rate, and after
// the lag began. On a fresh topology the window ends once the restored
// replica synced and every holder granted around the kill has left; on a
// successive one once the promotion came and those holders left (the
// restore follows the run; Restore is 0).
func timingOf(c Cell, spec compose.Spec) Timing {
	_, hi := holdRange(c.Hold)
	t := Timing{Warmup: max(time.Second, c.Hold), KillAt: max(2*time.Second, c.Lag+500*time.Millisecond).Round(time.Second)}
	if t.KillAt < c.Lag+500*time.Millisecond {
		t.KillAt += time.Second
	}
	if c.Successive(spec) {
		t.Window = t.KillAt + max(promoted, hi) + 500*time.Millisecond
		return t
	}
	t.Restore = t.KillAt + restoreAfter
	t.Window = t.Restore + resync + hi + 500*time.Millisecond
	if c.Mitigation == Wait && spec.Kind == compose.KindReplicated {
		t.Window += sentinelRejoin
	}
	return t
}

// Values are the run flags of one failover of the cell.
func (c Cell) Values(spec compose.Spec, waitTimeout time.Duration) plan.Values {
	t := timingOf(c, spec)
	lo, hi := holdRange(c.Hold)
	v := plan.Values{}
	set := func(k, val string) { v[k] = append(v[k], val) }
	set("topology", spec.String())
	set("lock", c.Lock)
	set("keys", fmt.Sprintf("uniform:%d", keysOf(c.Hold)))
	set("concurrency", fmt.Sprint(workersOf(c.Hold)))
	set("hold", fmt.Sprintf("uniform:%s,%s", ms(lo), ms(hi)))
	set("ttl", ms(ttlOf(c.Hold)))
	set("retry", "fixed:"+ms(retryEvery))
	set("acquire-timeout", ms(t.Window))
	set("warmup", ms(t.Warmup))
	set("duration", ms(t.Window))
	lag, kill := "lag-replica", killSpec(spec)
	if spec.Kind == compose.KindCluster {
		lag = "lag-replica shard=0"
	}
	if c.Lag > 0 {
		set("fault", fmt.Sprintf("at=%s %s for=%s", ms(t.KillAt-c.Lag), lag, ms(c.Lag+stallAfterKill)))
	}
	set("fault", fmt.Sprintf("at=%s %s", ms(t.KillAt), kill))
	if !c.Successive(spec) {
		// Node 0 is the primary (the master of shard 0) the failover
		// killed on a fresh topology.
		set("fault", fmt.Sprintf("at=%s restart node=0", ms(t.Restore)))
	}
	if c.Mitigation == Wait {
		set("wait-replicas", "1")
		set("wait-timeout", ms(waitTimeout))
	}
	return v
}

// killSpec is the kill fault's target words, which also find it in a
// result. On a cluster it is node 0, shard 0's master on a fresh topology:
// master=0 is resolved through CLUSTER NODES first, which delayed the kill
// by 130 ms past its lag, a 100 ms cell's whole lag.
func killSpec(spec compose.Spec) string {
	if spec.Kind == compose.KindCluster {
		return "kill node=0"
	}
	return "kill primary"
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// Panel is one lock with one mitigation: a lag × hold grid, or the reason it
// is not measured.
type Panel struct {
	Lock       string     `json:"lock"`
	Mitigation Mitigation `json:"mitigation"`
	// Unavailable says why the panel is not measured; empty when it is.
	Unavailable string `json:"unavailable,omitempty"`
}

// Plan is the failovers failover-map runs, fitted to the budget.
type Plan struct {
	Axes Axes `json:"axes"`
	// Failovers is the failovers per cell asked for; PerCell how many fit.
	Failovers int `json:"failovers"`
	PerCell   int `json:"per_cell"`
	// Panels are every lock × mitigation, measured or not.
	Panels []Panel `json:"panels"`
	// Cells are the measured panels' cells, in panel, lag, hold order.
	Cells []Cell `json:"cells"`
	// LeftOut are cells no failover of which fits the budget.
	LeftOut []Cell `json:"left_out,omitempty"`
	// Budget and Estimate are the wall time allowed and expected.
	Budget   time.Duration `json:"budget"`
	Estimate time.Duration `json:"estimate"`
	// Out is where the results are stored.
	Out string `json:"out"`
	// Parallel is how many failovers run at once, each on its own
	// servers (--parallel); omitted for one at a time.
	Parallel int `json:"parallel,omitempty"`

	spec compose.Spec
	// all are every measured panel's cells, before the budget left some out.
	all []Cell
}

// Estimate is one failover's expected wall time: start-up (a restore on a
// successive topology), warm-up, window and drain.
func (c Cell) Estimate(spec compose.Spec) time.Duration {
	t := timingOf(c, spec)
	if c.Successive(spec) {
		return restoreCost + t.Warmup + t.Window + drain
	}
	return spec.Info().StartUp + t.Warmup + t.Window + drain
}

// NewPlan makes the plan: the panels, and as many failovers per cell (up to
// failovers) as fit 0.9 of the budget; when not even one each fits, the
// cells past the budget are left out. serverVersion is the Redis the
// topology runs (see LocalVersion), which decides WAITAOF.
func NewPlan(axes Axes, failovers int, budget time.Duration, out, serverVersion string) (Plan, error) {
	spec, err := ParseTopology(axes.Topology)
	if err != nil {
		return Plan{}, err
	}
	if failovers < 1 || failovers > 1000 {
		return Plan{}, &plan.InputError{Flag: "failovers", Msg: fmt.Sprintf("%d: want a whole number from 1 to 1000", failovers)}
	}
	p := Plan{Axes: axes, Failovers: failovers, Budget: budget, Out: out, spec: spec}
	for _, l := range axes.Locks {
		for _, m := range axes.Mitigations {
			pn := Panel{Lock: l, Mitigation: m, Unavailable: unavailable(l, m, serverVersion)}
			p.Panels = append(p.Panels, pn)
			if pn.Unavailable != "" {
				continue
			}
			for _, lag := range axes.Lags {
				for _, h := range axes.Holds {
					p.Cells = append(p.Cells, Cell{Lock: l, Mitigation: m, Lag: lag, Hold: h})
				}
			}
		}
	}
	p.all = p.Cells
	p.fit()
	return p, nil
}

// SetParallel runs n failovers at once and fits the plan to the budget
// again: n side by side take about 1/n of the wall time.
func (p *Plan) SetParallel(n int) {
	p.Parallel = 0
	if n > 1 {
		p.Parallel = n
	}
	p.fit()
}

// SetFresh puts every failover on a fresh topology of its own (Cell.Fresh)
// and fits the plan to the budget again: a fresh failover costs a start-up
// where a successive one costs a restore.
func (p *Plan) SetFresh() {
	for i := range p.all {
		p.all[i].Fresh = true
	}
	p.fit()
}

// Planned is how many failovers the plan runs before any top-up: PerCell
// of each cell.
func (p Plan) Planned() int { return p.PerCell * len(p.Cells) }

// PlannedFailover is the k-th planned failover (from 0) in the order Run
// runs them, round by round: its cell, its number in the cell (from 1),
// and its run flags, labelled as Run labels them and storing in p.Out.
func (p Plan) PlannedFailover(k int) (Cell, int, plan.Values, error) {
	if k < 0 || k >= p.Planned() {
		return Cell{}, 0, nil, fmt.Errorf("%d: want 0 to %d, the plan's %d failovers (%d per cell)", k, p.Planned()-1, p.Planned(), p.PerCell)
	}
	c, n := p.Cells[k%len(p.Cells)], k/len(p.Cells)+1
	return c, n, p.failoverValues(c, n), nil
}

// failoverValues are the run flags of failover n of cell c.
func (p Plan) failoverValues(c Cell, n int) plan.Values {
	v := c.Values(p.spec, p.Axes.WaitTimeout)
	v.Set("label", Label(c, n))
	v.Set("out", p.Out)
	return v
}

// StoredOnlyFresh says whether stored holds failovers of p's planned cells
// run on fresh topologies (an engine's, or --fresh) and none run in
// succession, while p would run those cells in succession: resuming p
// would then reuse none of them (a fresh failover's flags differ) and run
// them all again.
func (p Plan) StoredOnlyFresh(stored []*results.Result) bool {
	fresh, successive := 0, 0
	for _, c := range p.Cells {
		if !c.Successive(p.spec) {
			continue
		}
		fc := c
		fc.Fresh = true
		for n := 1; n <= p.PerCell; n++ {
			if advise.MatchLabelled(stored, p.failoverValues(fc, n)) != nil {
				fresh++
			}
			if advise.MatchLabelled(stored, p.failoverValues(c, n)) != nil {
				successive++
			}
		}
	}
	return fresh > 0 && successive == 0
}

// width is how many failovers run at once.
func (p Plan) width() int { return max(1, p.Parallel) }

// unavailable says why a lock cannot run a mitigation on the server.
func unavailable(lock string, m Mitigation, serverVersion string) string {
	switch {
	case m == Wait && !slices.Contains(lockimpl.LocksTakingFlag("wait-replicas"), lock):
		return fmt.Sprintf("not available: lockbench issues WAIT after the acquisition (--wait-replicas) only for %s; %s has no such option",
			strings.Join(lockimpl.LocksTakingFlag("wait-replicas"), " and "), lock)
	case m == WaitAOF && !HasWaitAOF(serverVersion):
		return fmt.Sprintf("not available on Redis %s: WAITAOF came in Redis 7.2", orUnknown(serverVersion))
	case m == WaitAOF:
		return fmt.Sprintf("not measured: Redis %s has WAITAOF, but no lockbench lock issues it yet", serverVersion)
	}
	return ""
}

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}

// fit sets PerCell and LeftOut from the budget.
// With failovers side by side (Parallel), the budget holds that many
// times the failovers' summed estimates.
func (p *Plan) fit() {
	p.Cells, p.LeftOut, p.Estimate = slices.Clone(p.all), nil, 0
	w := time.Duration(p.width())
	avail := time.Duration(float64(p.Budget)*planShare) * w
	var round time.Duration
	for _, c := range p.Cells {
		round += c.Estimate(p.spec)
	}
	if round == 0 {
		p.PerCell = p.Failovers
		return
	}
	p.PerCell = min(p.Failovers, int(avail/round))
	if p.PerCell >= 1 {
		p.Estimate = time.Duration(p.PerCell) * round / w
		return
	}
	p.PerCell = 1
	var kept []Cell
	var work time.Duration
	for _, c := range p.Cells {
		if e := c.Estimate(p.spec); work+e <= avail {
			kept, work = append(kept, c), work+e
			continue
		}
		p.LeftOut = append(p.LeftOut, c)
	}
	p.Cells, p.Estimate = kept, work/w
}

// planShare is the share of the budget the plan fills, as advise's: the
// rest absorbs the runs that take longer than estimated.
const planShare = 0.9

// Spec is the plan's topology.
func (p Plan) Spec() compose.Spec { return p.spec }

// Check parses one failover's run flags per cell, so that a flag the plan
// got wrong is refused before anything starts.
func (p Plan) Check() error {
	for _, c := range p.Cells {
		v := c.Values(p.spec, p.Axes.WaitTimeout)
		v.Set("out", p.Out)
		if _, err := plan.Expand(v); err != nil {
			return fmt.Errorf("failover-map cell %s: %w", c, err)
		}
	}
	return nil
}

// WritePlan prints the plan: the timeline of one failover, each panel, and
// the total against the budget.
func WritePlan(w io.Writer, p Plan) error {
	return results.Wrapping(w, func(w io.Writer) error {
		fmt.Fprintf(w, "failover-map on %s: %d cells × %s (asked %d)\n",
			p.spec, len(p.Cells), results.Count(int64(p.PerCell), "failover"), p.Failovers)
		fmt.Fprintf(w, "lags %s × holds %s (each uniform ±50%%, TTL = longest hold + %v); keys = %d/s × the hold (%d–%d), %d workers a key\n",
			durations(p.Axes.Lags), durations(p.Axes.Holds), ttlMargin, grantRate, minKeys, maxKeys, waitersPerKey)
		fmt.Fprintf(w, "one failover: warm-up max(1s, hold); the replica stalls for the lag before the kill of %s; %s\n",
			killSpec(p.spec), p.restoreText())
		for _, pn := range p.Panels {
			status := "measured"
			if pn.Unavailable != "" {
				status = pn.Unavailable
			}
			fmt.Fprintf(w, "  %s / %s: %s\n", pn.Lock, pn.Mitigation, status)
		}
		for _, c := range p.LeftOut {
			fmt.Fprintf(w, "  left out to fit the budget: %s\n", c)
		}
		side := ""
		if p.Parallel > 1 {
			side = fmt.Sprintf(", %d failovers at once, each on its own servers", p.Parallel)
		}
		fmt.Fprintf(w, "estimate %v of budget %v (runs stop at %.1f × the budget)%s\n",
			p.Estimate.Round(time.Second), p.Budget, advise.HardShare, side)
		return nil
	})
}

// restoreText says how the plan's failovers get their topology back.
func (p Plan) restoreText() string {
	var succ, fresh int
	for _, c := range p.Cells {
		if c.Successive(p.spec) {
			succ++
		} else {
			fresh++
		}
	}
	one := "the failovers follow one another on one topology: between them the dead primary is started again as the " +
		"new primary's replica, and the next runs only once the replica is in sync and no key of the last run is left"
	other := fmt.Sprintf("each failover on a fresh topology, the dead primary restarted %v after the kill as a replica", restoreAfter)
	switch {
	case fresh == 0:
		return one
	case succ == 0:
		return other
	}
	return "without WAIT " + one + "; with WAIT " + other
}

func durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}
