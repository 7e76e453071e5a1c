package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/results"
)

// TuneCell is one TTL × renewal-interval cell of a tuning sweep.
type TuneCell struct {
	TTL        string   `json:"ttl"`
	RenewEvery string   `json:"renew_every"`
	RunIDs     []string `json:"runs"`
	// Acquired is acquisitions over the cell's runs.
	Acquired int64 `json:"acquired"`
	// Expired counts work that outlived its lease (expired during work, or
	// aborted when a renewal found the lease lost).
	Expired int64 `json:"expired"`
	// ExpiryRate is Expired / Acquired.
	ExpiryRate float64 `json:"expiry_rate"`
	// Overlaps are two holders inside at once.
	Overlaps int64 `json:"overlaps"`
	// StaleAccepted is stale writes the resource accepted: incidents on
	// the page beside the overlaps.
	StaleAccepted int64 `json:"stale_writes_accepted"`
	// RenewPerS is renewal commands per second (a renewal interval under
	// which none fired is, in effect, renewal off).
	RenewPerS float64 `json:"renew_per_s"`
	// BlockedP99US is the p99 time a crashed holder blocked its key (0 if no
	// holder crashed); the TTL bounds it.
	BlockedP99US float64 `json:"blocked_p99_us"`
	// OverrunP99US is the p99 of how long after its lease's validity a
	// stale holder's write came (median over the cell's runs), 0 when none.
	OverrunP99US float64 `json:"overrun_p99_us"`
	// BlockedSamples is how many crashes were measured.
	BlockedSamples int64 `json:"blocked_samples"`
	// AttemptsPerAcquire is acquire attempts over acquisitions: how hard
	// holders waiting on a crashed holder's key retried.
	// Null when the candidate made no acquisition.
	AttemptsPerAcquire *float64 `json:"attempts_per_acquire"`
	// UpperBound is the 95% upper confidence bound on the expiry rate from
	// Expired of Acquired: what the samples prove, not what they suggest.
	UpperBound float64 `json:"expiry_rate_upper_95"`
	// Word is the rulebook's verdict on the cell's expiry rate against the
	// target (verdict.Rate): safe, fails or too thin; a cell where holders
	// overlapped fails.
	Word verdict.Word `json:"verdict"`
	// Meets is true when the upper bound is within the target and nothing
	// overlapped (Word is safe).
	Meets bool `json:"meets"`
}

// RenewalIdle reports whether the cell asked for renewal and none fired:
// in effect renewal off, and never preferred to it.
func (c TuneCell) RenewalIdle() bool { return renewLabel(c.RenewEvery) != "off" && c.RenewPerS == 0 }

// TuneCells reduces a TTL × renew-every sweep to its cells.
func TuneCells(g Grid, crs []CellResult, maxRate float64) []TuneCell {
	var out []TuneCell
	for _, cr := range crs {
		c := TuneCell{TTL: coord(g, cr.Cell, "ttl"), RenewEvery: coord(g, cr.Cell, "renew-every")}
		var secs float64
		var renewed, attempts int64
		var blocked, overrun []float64
		for _, r := range cr.Results {
			c.RunIDs = append(c.RunIDs, r.ID)
			c.Acquired += r.Contention.Acquired
			attempts += r.Contention.Attempts
			c.Expired += r.Incidents.ExpiredDuringWork + r.Incidents.WorkAborted
			c.Overlaps += r.Incidents.Overlaps
			c.StaleAccepted += r.Incidents.StaleWritesAccepted
			renewed += r.Ops[results.OpRenew].Count
			secs += r.DurationS
			if o := r.Ops[results.OpOverrun]; o.Count > 0 {
				overrun = append(overrun, o.LatencyUS.P99)
			}
			if b := r.Ops[results.OpBlocked]; b.Count > 0 {
				blocked = append(blocked, b.LatencyUS.P99)
				c.BlockedSamples += b.Count
			}
		}
		c.AttemptsPerAcquire = results.PerAcquire(float64(attempts), c.Acquired)
		if secs > 0 {
			c.RenewPerS = float64(renewed) / secs
		}
		c.BlockedP99US = results.Median(blocked)
		c.OverrunP99US = results.Median(overrun)
		out = append(out, c.judged(maxRate))
	}
	return out
}

// judged fills the cell's rate, its upper bound and whether it meets maxRate.
func (c TuneCell) judged(maxRate float64) TuneCell {
	c.ExpiryRate = 0
	if c.Acquired > 0 {
		c.ExpiryRate = float64(c.Expired) / float64(c.Acquired)
	}
	c.UpperBound = verdict.UpperBound(c.Expired, c.Acquired)
	c.Word = verdict.Rate(c.Expired, c.Acquired, maxRate, "holders outliving their lease").Word
	switch {
	case c.Acquired == 0:
		c.Word = verdict.NotMeasured
	case c.Overlaps > 0 || c.StaleAccepted > 0:
		c.Word = verdict.Fails
	}
	c.Meets = c.Word == verdict.Safe
	return c
}

func coord(g Grid, c Cell, flag string) string {
	for i, a := range g.Axes {
		if a.Flag == flag {
			return c.Coords[i]
		}
	}
	return g.Base.Get(flag)
}

// blockedBound is the cell's blocked time, or its TTL where no crash was seen:
// an abandoned lease blocks its key for at most the TTL.
func (c TuneCell) blockedBound() float64 {
	if c.BlockedSamples > 0 {
		return c.BlockedP99US
	}
	d, _ := time.ParseDuration(c.TTL)
	return float64(d / time.Microsecond)
}

// Recommendation is tune-ttl's verdict.
type Recommendation struct {
	// Best is the recommended cell, nil when none met the target.
	Best *TuneCell `json:"best,omitempty"`
	// Closest is the cell with the lowest expiry rate when none met it.
	Closest *TuneCell `json:"closest,omitempty"`
	// Why is the one-sentence explanation.
	Why string `json:"why"`
}

// Recommend picks, by the rulebook (verdict.Recommended), the cell with the
// shortest blocked time among those whose expiry rate is proven under
// maxRate (its 95% upper bound is) with no overlap or stale write accepted;
// ties go to less renewal traffic, then to the simpler (renewal off). A cell
// whose renewal never fired is renewal off in effect and is passed over
// where its TTL's off cell was measured. When no cell is proven, it names
// the closest: the lowest bound among the cells more samples could still
// prove (too thin), and among those whose 95% interval overlaps it, the
// tie-break decides, and the sentence says so.
func Recommend(cells []TuneCell, maxRate float64) Recommendation {
	eligible := activeCells(cells)
	var best *TuneCell
	for _, c := range eligible {
		if c.Meets && (best == nil || tieBreakBefore(*c, *best)) {
			best = c
		}
	}
	if best != nil {
		return Recommendation{Best: best, Why: fmt.Sprintf(
			"TTL %s with renewal %s: %d of %d acquisitions outlived their lease, so the rate is at most %s at 95%% confidence (target ≤ %g), "+
				"and a crashed holder blocks its key for %s at p99, the shortest of the cells that met the target, for %s renewals/s.%s",
			best.TTL, renewLabel(best.RenewEvery), best.Expired, best.Acquired, results.FigureText("expiry_rate_upper_95", best.UpperBound), maxRate,
			results.FigureText("blocked.p99", best.blockedBound()), results.FigureText("renew_per_s", best.RenewPerS), idleNote(cells))}
	}
	// The closest is a cell more samples could still prove (too thin);
	// one shown to fail is named only when no cell could be.
	var lowest *TuneCell
	for _, thinOnly := range []bool{true, false} {
		for _, c := range eligible {
			if thinOnly && c.Word != verdict.TooThin {
				continue
			}
			if c.Acquired > 0 && c.Overlaps == 0 && c.StaleAccepted == 0 && (lowest == nil || c.UpperBound < lowest.UpperBound) {
				lowest = c
			}
		}
		if lowest != nil {
			break
		}
	}
	if lowest == nil {
		for _, c := range eligible {
			if c.Acquired > 0 && (lowest == nil || c.Overlaps+c.StaleAccepted < lowest.Overlaps+lowest.StaleAccepted) {
				lowest = c
			}
		}
	}
	if lowest == nil {
		return Recommendation{Why: "No cell acquired any lock, so nothing can be recommended."}
	}
	closest, tied := lowest, 0
	for _, c := range eligible {
		if c == lowest || c.Acquired == 0 || c.Word != lowest.Word || c.Overlaps+c.StaleAccepted != lowest.Overlaps+lowest.StaleAccepted ||
			!overlapping(*c, *lowest) {
			continue
		}
		tied++
		if tieBreakBefore(*c, *closest) {
			closest = c
		}
	}
	why := fmt.Sprintf("No cell is proven to meet the target of %g with no overlaps; closest: TTL %s with renewal %s, %d of %d acquisitions outlived their lease (rate %s, at most %s at 95%% confidence), %d overlapped, %d stale writes accepted",
		maxRate, closest.TTL, renewLabel(closest.RenewEvery), closest.Expired, closest.Acquired, results.FigureText("expiry_rate", closest.ExpiryRate),
		results.FigureText("expiry_rate_upper_95", closest.UpperBound), closest.Overlaps, closest.StaleAccepted)
	if tied > 0 {
		why += fmt.Sprintf(" (its 95%% interval overlaps %s, so the tie-break chose it: shorter blocking, then fewer renewals, then renewal off)", results.Count(int64(tied), "other cell's|other cells'"))
	}
	switch more, ok := verdict.MoreSamples(closest.Expired, closest.Acquired, maxRate); {
	case closest.Overlaps > 0 || closest.StaleAccepted > 0 || !ok:
		why += ": lengthen the TTL or renew more often."
	default:
		why += fmt.Sprintf(": at its observed rate it needs about %d more acquisitions to prove the target (a longer --duration or --count).", more)
	}
	return Recommendation{Closest: closest, Why: why + idleNote(cells)}
}

// activeCells are the cells a recommendation may name: all but those whose
// renewal never fired where the same TTL's off cell was measured.
func activeCells(cells []TuneCell) []*TuneCell {
	off := map[string]bool{}
	for _, c := range cells {
		if renewLabel(c.RenewEvery) == "off" && c.Acquired > 0 {
			off[c.TTL] = true
		}
	}
	var out []*TuneCell
	for i := range cells {
		if c := &cells[i]; !(c.RenewalIdle() && off[c.TTL]) {
			out = append(out, c)
		}
	}
	return out
}

// idleNote says which cells' renewal never fired, "" when every one did.
func idleNote(cells []TuneCell) string {
	var idle []string
	for _, c := range cells {
		if c.RenewalIdle() && c.Acquired > 0 {
			idle = append(idle, "TTL "+c.TTL+" "+renewLabel(c.RenewEvery))
		}
	}
	if len(idle) == 0 {
		return ""
	}
	return " No renewal fired in " + strings.Join(idle, ", ") + " (every hold ended before it was due): in effect renewal off, never preferred to it."
}

// overlapping reports whether two cells' 95% intervals on the expiry rate
// overlap: their samples do not tell them apart.
func overlapping(a, b TuneCell) bool {
	return verdict.LowerBound(a.Expired, a.Acquired) <= b.UpperBound && verdict.LowerBound(b.Expired, b.Acquired) <= a.UpperBound
}

// tieBreakBefore is the rulebook's tie-break between two cells: shorter
// blocking, then fewer renewals/s, then the simpler (renewal off).
func tieBreakBefore(a, b TuneCell) bool {
	switch {
	case a.blockedBound() != b.blockedBound():
		return a.blockedBound() < b.blockedBound()
	case a.RenewPerS != b.RenewPerS:
		return a.RenewPerS < b.RenewPerS
	}
	return renewLabel(a.RenewEvery) == "off" && renewLabel(b.RenewEvery) != "off"
}

func renewLabel(s string) string {
	if s == "" || s == "0" || s == "off" {
		return "off"
	}
	return "every " + s
}

// WriteTune prints the cells and the recommendation. The observed expiry
// rate is in the JSON; the table shows its 95% upper bound, which is what
// decides whether a cell meets the target.
func WriteTune(w io.Writer, cells []TuneCell, rec Recommendation) error {
	return results.Wrapping(w, func(w io.Writer) error { return writeTuneText(w, cells, rec) })
}

func writeTuneText(w io.Writer, cells []TuneCell, rec Recommendation) error {
	var (
		acquired  = results.FigureColumn("contention.acquired", "acquired")
		expired   = results.FigureColumn("incidents.expired_during_work", "expired")
		bound     = results.FigureColumn("expiry_rate_upper_95", "expiry\nrate ≤95%")
		overrun   = results.FigureColumn("overrun.p99", "overrun\np99")
		overlaps  = results.FigureColumn("incidents.overlaps", "overlaps\n/stale")
		stale     = results.FigureColumn("incidents.stale_writes_accepted", "")
		renewRate = results.FigureColumn("renew_per_s", "renew/s")
		attempts  = results.FigureColumn("contention.attempts_per_acquire", "attempts\n/acquire")
		blocks    = results.FigureColumn("blocked.p99", "crash\nblocks p99")
	)
	t := results.NewTable(w, results.ParameterColumn("ttl"), results.ParameterColumn("renew\nevery"), acquired, expired, bound, overrun, overlaps,
		renewRate, attempts, blocks, results.LabelColumn("verdict"))
	for _, c := range cells {
		// No crash seen: the TTL bounds how long a crashed holder blocks.
		blocked := "≤ " + blocks.Text(c.blockedBound())
		if c.BlockedSamples > 0 {
			blocked = blocks.Text(c.BlockedP99US)
		}
		meets := string(c.Word)
		if meets == "" {
			meets = map[bool]string{true: string(verdict.Safe), false: results.NotMeasured}[c.Meets]
		}
		if rec.Best != nil && rec.Best.TTL == c.TTL && rec.Best.RenewEvery == c.RenewEvery {
			meets = strings.ToUpper(string(verdict.Recommended))
		}
		// An overrun is measured only where some work outlived its lease.
		over := results.NotMeasured
		if c.Expired > 0 {
			over = overrun.Text(c.OverrunP99US)
		}
		renew := strings.TrimPrefix(renewLabel(c.RenewEvery), "every ")
		if c.RenewalIdle() {
			renew += " idle"
		}
		_ = t.Append(c.TTL, renew, acquired.Text(float64(c.Acquired)), expired.Text(float64(c.Expired)), bound.Text(c.UpperBound), over,
			overlaps.Text(float64(c.Overlaps))+"/"+stale.Text(float64(c.StaleAccepted)), renewRate.Text(c.RenewPerS), attempts.Opt(c.AttemptsPerAcquire),
			blocked, meets)
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "crash blocks p99: how long a crashed holder blocked its key (≤ TTL where none crashed: the TTL bounds it); "+
		"idle: no renewal fired")
	fmt.Fprintln(w, rec.Why)
	return nil
}

// WriteTuneCSV prints every cell as CSV with every figure the table and the
// JSON have: blocked_p99_us is empty where no holder crashed (the TTL
// bounds it then), overrun_p99_us where no work outlived its lease.
func WriteTuneCSV(w io.Writer, cells []TuneCell, rec Recommendation) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"ttl", "renew_every", "runs", "acquired", "expired", "expiry_rate", "expiry_rate_upper_95", "overrun_p99_us", "overlaps",
		"renew_per_s", "attempts_per_acquire", "blocked_p99_us", "blocked_samples", "meets", "recommended"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range cells {
		blocked, overrun := "", ""
		if c.BlockedSamples > 0 {
			blocked = g(c.BlockedP99US)
		}
		if c.Expired > 0 {
			overrun = g(c.OverrunP99US)
		}
		best := rec.Best != nil && rec.Best.TTL == c.TTL && rec.Best.RenewEvery == c.RenewEvery
		_ = cw.Write([]string{c.TTL, c.RenewEvery, strconv.Itoa(len(c.RunIDs)), strconv.FormatInt(c.Acquired, 10), strconv.FormatInt(c.Expired, 10),
			g(c.ExpiryRate), g(c.UpperBound), overrun, strconv.FormatInt(c.Overlaps, 10), g(c.RenewPerS), perAcquireCSV(c.AttemptsPerAcquire),
			blocked, strconv.FormatInt(c.BlockedSamples, 10), strconv.FormatBool(c.Meets), strconv.FormatBool(best)})
	}
	cw.Flush()
	return cw.Error()
}

// perAcquireCSV is a figure per acquisition in CSV: empty over none.
func perAcquireCSV(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}
