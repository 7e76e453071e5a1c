package failovermap

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// Failover is one failover of a cell: one run, read.
type Failover struct {
	// RunID is its stored result; Status says how it ended (advise's
	// statuses) and Detail why where it was not measured.
	RunID  string `json:"run,omitempty"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	// OnTopology is this failover's place on the topology it ran on
	// (1: just brought up; 2 and on: after others, restored and verified
	// clean between them); 0 where it ran on a fresh topology of its own.
	OnTopology int `json:"on_topology,omitempty"`
	// Conclusive says whether it could have shown a double grant: the kill
	// fired with holders inside. Why says why not.
	Conclusive bool   `json:"conclusive"`
	Why        string `json:"why,omitempty"`
	// DoubleGrants and Acquired are the run's.
	DoubleGrants int64 `json:"double_grants"`
	Acquired     int64 `json:"acquired"`
	// Exposure is the holders inside at the kill; nil where not recorded.
	Exposure *int64 `json:"exposure"`
	// RatePerS is the grants per second before the kill; nil where no whole
	// second before it was measured.
	RatePerS *float64 `json:"rate_per_s"`
	// UnavailableS is the time from the kill to the first grant after it
	// (on a cluster, to shard 0's promotion); nil where not seen.
	UnavailableS *float64 `json:"unavailable_s"`
	// Predicted is the double grants Predict expects of it; nil where its
	// rate was not measured.
	Predicted *float64 `json:"predicted"`
	// AcquireP50US, AcquireP99US and AcquiredPerS are the run's.
	AcquireP50US float64 `json:"acquire_p50_us"`
	AcquireP99US float64 `json:"acquire_p99_us"`
	AcquiredPerS float64 `json:"acquired_per_s"`
}

// readFailover reads one failover's result for cell c on spec.
func readFailover(c Cell, spec compose.Spec, r *results.Result) Failover {
	f := Failover{RunID: r.ID, DoubleGrants: r.Incidents.DoubleGrants, Acquired: r.Contention.Acquired,
		AcquireP50US: r.Ops[results.OpAcquire].LatencyUS.P50, AcquireP99US: r.Ops[results.OpAcquire].LatencyUS.P99,
		AcquiredPerS: r.Throughput.AcquiredPerS}
	kill := killSpec(spec)
	match := func(s string) bool { return strings.Contains(s, kill) }
	killAt, killed := killTime(r, kill)
	if inside, applies, measured := r.HoldersAtFaults(match); applies && measured {
		f.Exposure = &inside
	}
	slip := slipped(c, spec, r, killAt)
	switch {
	case !killed:
		f.Why = "the kill did not apply"
	case slip != "":
		f.Why = slip
	case f.Exposure == nil:
		f.Why = "holders at the kill not recorded"
	case *f.Exposure == 0 && f.DoubleGrants == 0:
		f.Why = "nobody inside at the kill"
	default:
		f.Conclusive = true
	}
	if !killed {
		return f
	}
	f.RatePerS = rateBefore(r.Series, killAt)
	gap, granted := outage(spec, r, killAt)
	if granted {
		f.UnavailableS = &gap
	} else {
		// Nothing granted after the kill: the outage lasted at least to the
		// window's end, which is what the prediction uses.
		gap = r.DurationS - killAt
	}
	if f.RatePerS != nil {
		p := 0.0
		if c.Mitigation == None {
			lo, hi := holdRange(c.Hold)
			p = Predict(PredictInput{RatePerS: *f.RatePerS / float64(max(spec.Masters, 1)), Lag: achievedLag(c, r, killAt),
				Unavailable: time.Duration(gap * float64(time.Second)), HoldLo: lo, HoldHi: hi, TTL: ttlOf(c.Hold)})
		}
		f.Predicted = &p
	}
	return f
}

// Tolerances of the fault schedule: a kill this late, or a lag this far
// from the cell's, means the machine stalled (a loaded CI host), and the
// failover did not test the cell's conditions.
const (
	maxKillSlip = 500 * time.Millisecond
	minLagSlip  = 50 * time.Millisecond
	lagSlipPart = 0.2
)

// slipped says how one failover's fault schedule slipped from the plan, ""
// when it kept to it: the kill fired late, or the replica's lag began too
// long or too short a time before the kill.
func slipped(c Cell, spec compose.Spec, r *results.Result, killAt float64) string {
	planned := timingOf(c, spec).KillAt.Seconds()
	if late := killAt - planned; late > maxKillSlip.Seconds() {
		return fmt.Sprintf("the kill fired %.1fs late (a stalled machine)", late)
	}
	if c.Lag <= 0 {
		return ""
	}
	lagAt, ok := killTime(r, "lag-replica")
	if !ok {
		return "the lag did not apply"
	}
	got := time.Duration((killAt - lagAt) * float64(time.Second))
	if tol := max(minLagSlip, time.Duration(float64(c.Lag)*lagSlipPart)); got < c.Lag-tol || got > c.Lag+tol {
		return fmt.Sprintf("the lag began %v before the kill, not %v (a stalled machine)", got.Round(time.Millisecond), c.Lag)
	}
	return ""
}

// achievedLag is how long before the kill the replica's lag began: the
// cell's lag as the schedule kept it (within the slip tolerance), which the
// prediction takes.
func achievedLag(c Cell, r *results.Result, killAt float64) time.Duration {
	lagAt, ok := killTime(r, "lag-replica")
	if c.Lag <= 0 || !ok {
		return c.Lag
	}
	return max(0, time.Duration((killAt-lagAt)*float64(time.Second)))
}

// killTime is when the first applied fault whose spec contains kill fired.
func killTime(r *results.Result, kill string) (atS float64, ok bool) {
	for _, fe := range r.Faults {
		if strings.Contains(fe.Spec, kill) && fe.Error == "" {
			return fe.AtS, true
		}
	}
	return 0, false
}

// rateBefore is the grants per second over the whole seconds before atS.
func rateBefore(series []results.SeriesPoint, atS float64) *float64 {
	var n int64
	span := 0.0
	for _, p := range series {
		if p.ElapsedS <= atS {
			n += p.Acquired
			span = p.ElapsedS
		}
	}
	if span <= 0 {
		return nil
	}
	r := float64(n) / span
	return &r
}

// outage is how long after the kill the lost keys could be granted again:
// on replicated, until the first grant after it; on a cluster the other
// shards go on granting, so until shard 0's replica called itself master
// (the kill's PromotedAfterS). ok is false where that was not seen.
func outage(spec compose.Spec, r *results.Result, killAt float64) (gapS float64, ok bool) {
	if spec.Kind != compose.KindCluster {
		return firstGrantAfter(r.Series, killAt)
	}
	for _, fe := range r.Faults {
		if strings.Contains(fe.Spec, killSpec(spec)) && fe.Error == "" && fe.PromotedAfterS > 0 {
			return fe.PromotedAfterS, true
		}
	}
	return 0, false
}

// firstGrantAfter is the time from atS to the first grant after it: the
// first second with a grant after atS, whose first grant, if that came
// before atS, makes the gap 0 (a grant straddling the kill's second).
func firstGrantAfter(series []results.SeriesPoint, atS float64) (gapS float64, ok bool) {
	for _, p := range series {
		if p.Acquired > 0 && p.LastAcquiredS > atS {
			return max(0, p.FirstAcquiredS-atS), true
		}
	}
	return 0, false
}

// CellResult is a cell's failovers and what they add up to. Figures over no
// conclusive failover are nil: not measured, not 0.
type CellResult struct {
	Cell
	// Planned is the failovers planned for it.
	Planned   int        `json:"planned"`
	Failovers []Failover `json:"failovers"`
	// Conclusive counts the failovers with holders inside at the kill.
	Conclusive int `json:"conclusive"`
	// PerFailover is double grants per conclusive failover; Per10k per
	// 10,000 of their acquisitions; both with 95% Poisson intervals.
	PerFailover *verdict.CountRate `json:"double_grants_per_failover"`
	Per10k      *verdict.CountRate `json:"double_grants_per_10k_acquisitions"`
	// Exposure is the mean of holders inside at the kill.
	Exposure *float64 `json:"exposure_per_failover"`
	// UnavailableS is the median time from kill to the next grant, over
	// the failovers that granted again.
	UnavailableS *float64 `json:"unavailable_s"`
	// Predicted is the mean of the conclusive failovers' predictions.
	Predicted *float64 `json:"predicted_per_failover"`
	// Disagrees is true when PerFailover's interval excludes Predicted.
	Disagrees bool `json:"disagrees"`
	// IdleAfterKill is true when no conclusive failover granted anything
	// after its kill: no double grant, by being unavailable.
	IdleAfterKill bool `json:"idle_after_kill"`
	// The mitigation's cost: medians over the measured failovers of the
	// acquire attempt's p50 and p99 and acquisitions per second.
	AcquireP50US *float64 `json:"acquire_p50_us"`
	AcquireP99US *float64 `json:"acquire_p99_us"`
	AcquiredPerS *float64 `json:"acquired_per_s"`
}

// summarise adds up a cell's failovers.
func summarise(c Cell, planned int, fs []Failover) CellResult {
	cr := CellResult{Cell: c, Planned: planned, Failovers: fs}
	var dg, acq, exposed int64
	var gaps, preds, p50s, p99s, tputs []float64
	granted := false
	for _, f := range fs {
		if f.Status != statusMeasured && f.Status != statusReused {
			continue
		}
		p50s, p99s, tputs = append(p50s, f.AcquireP50US), append(p99s, f.AcquireP99US), append(tputs, f.AcquiredPerS)
		if f.UnavailableS != nil {
			gaps = append(gaps, *f.UnavailableS)
		}
		if !f.Conclusive {
			continue
		}
		cr.Conclusive++
		dg, acq = dg+f.DoubleGrants, acq+f.Acquired
		if f.Exposure != nil {
			exposed += *f.Exposure
		}
		if f.Predicted != nil {
			preds = append(preds, *f.Predicted)
		}
		granted = granted || f.UnavailableS != nil
	}
	cr.AcquireP50US, cr.AcquireP99US, cr.AcquiredPerS = median(p50s), median(p99s), median(tputs)
	cr.UnavailableS = median(gaps)
	if cr.Conclusive == 0 {
		return cr
	}
	if r, ok := verdict.PoissonRate(dg, float64(cr.Conclusive)); ok {
		cr.PerFailover = &r
	}
	if r, ok := verdict.PoissonRate(dg, float64(acq)/1e4); ok {
		cr.Per10k = &r
	}
	x := float64(exposed) / float64(cr.Conclusive)
	cr.Exposure = &x
	if len(preds) > 0 {
		m := mean(preds)
		cr.Predicted = &m
		cr.Disagrees = Agreement(cr.PerFailover, cr.Predicted) == Disagree
	}
	cr.IdleAfterKill = !granted && dg == 0
	return cr
}

func median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	m := results.Median(xs)
	return &m
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// The words a cell's measurement takes against its prediction.
const (
	Agree    = "agree"
	Disagree = "disagree"
	// Unjudged is a cell with no conclusive failover or no prediction.
	Unjudged = ""
)

// Agreement is how a cell's double grants per failover stand against its
// prediction: Disagree when the 95% interval excludes the prediction,
// Agree when it holds it, Unjudged when either is missing. It is the one
// place the map decides these words (the findings, the heat map's ≠ and
// the JSON's disagrees read it), so that a decision rule can take it over.
func Agreement(measured *verdict.CountRate, predicted *float64) string {
	switch {
	case measured == nil || predicted == nil:
		return Unjudged
	case measured.Excludes(*predicted):
		return Disagree
	}
	return Agree
}
