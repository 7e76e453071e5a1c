package advise

import (
	"fmt"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// Cell is one measured experiment reduced to the figures the rules read.
// Every figure is read through the results catalogue; a per-acquisition
// figure the run could not measure is nil, never 0.
type Cell struct {
	// Candidate is LOCK@TOPOLOGY; Kind and Fault say which experiment.
	Candidate string `json:"candidate"`
	Kind      Kind   `json:"kind"`
	Fault     string `json:"fault,omitempty"`
	// RunID is the stored result the figures come from.
	RunID string `json:"run"`
	// Fenced: the lock hands out fencing tokens the resource checks.
	Fenced bool `json:"fenced"`
	// TTL is the lease the run held, as it ran (etcd's leases are whole
	// seconds, so it may differ from the tuned TTL); empty for a lock
	// without a lease (Leased false: pg-advisory, pg-advisory-xact, occ).
	TTL    string `json:"ttl,omitempty"`
	Leased bool   `json:"leased"`
	// Nodes is how many servers the topology runs; Backend is what they
	// are (compose.KindInfo.Backend: redis, etcd, postgres).
	Nodes   int    `json:"nodes"`
	Backend string `json:"backend"`
	// Acquired and Contended count acquisitions and attempts that found
	// the key held.
	Acquired  int64 `json:"acquired"`
	Contended int64 `json:"contended"`
	// Expired is holders whose work outlived their lease (expired during
	// work, or aborted when a renewal found the lease lost).
	Expired int64 `json:"expired"`
	// StaleAccepted, FencingRejected, DoubleGrants and Overruns are the
	// incidents by kind.
	StaleAccepted   int64 `json:"stale_writes_accepted"`
	FencingRejected int64 `json:"fencing_rejected"`
	DoubleGrants    int64 `json:"double_grants"`
	Overruns        int64 `json:"overruns"`
	// Exposed is the holders inside when the run's faults fired; nil where
	// no fault recorded it. A fault experiment with none, or with no
	// acquisition, could not have failed: inconclusive, not a pass.
	Exposed *int64 `json:"holders_at_fault,omitempty"`
	// Step is the run judged against the SLO at its load, as capacity
	// judges its steps (throughput, the latency op's p99, SLOs broken).
	Step sweep.Step `json:"step"`
	// CommandsPerAcquire and CPUPerAcquireUS are the servers' cost, nil
	// where the servers could not be read.
	CommandsPerAcquire *float64 `json:"commands_per_acquire"`
	CPUPerAcquireUS    *float64 `json:"cpu_us_per_acquire"`
}

// Safety is the cell's evidence as the correctness rule reads it.
func (c Cell) Safety() verdict.Safety {
	return verdict.Safety{Acquired: c.Acquired, Fenced: c.Fenced, Expired: c.Expired, StaleAccepted: c.StaleAccepted,
		FencingRejected: c.FencingRejected, DoubleGrants: c.DoubleGrants}
}

// Incidents are the unsafe outcomes (verdict.Safety.Incidents): stale
// writes accepted, and double grants where no fence guarded the resource.
func (c Cell) Incidents() int64 { return c.Safety().Incidents() }

// Inconclusive reports whether a fault experiment could not have failed:
// it acquired nothing, or its faults fired with nobody inside. One that
// failed is conclusive whatever its exposure.
func (c Cell) Inconclusive() bool {
	return c.Incidents() == 0 && (c.Acquired == 0 || (c.Exposed != nil && *c.Exposed == 0))
}

func (c Cell) whyInconclusive() string {
	if c.Acquired == 0 {
		return "nothing was acquired"
	}
	return "nobody was inside when the fault fired"
}

// CellOf reads an outcome's result into a cell, judging it against the
// SLO at its load.
func CellOf(o Outcome, req Requirements, prof Profile) Cell {
	r, e := o.Result, o.Experiment
	count := func(name string) int64 {
		v, _ := figure(r, name)
		if v == nil {
			return 0
		}
		return int64(*v)
	}
	c := Cell{Candidate: e.Candidate.String(), Kind: e.Kind, Fault: e.Fault, RunID: r.ID, Fenced: r.Lock.Fencing, Nodes: len(r.Topology.Nodes),
		Acquired: count("contention.acquired"), Contended: count("contention.contended"),
		Expired:       count("incidents.expired_during_work") + count("incidents.work_aborted"),
		StaleAccepted: count("incidents.stale_writes_accepted"), FencingRejected: count("incidents.fencing_rejected"),
		DoubleGrants: count("incidents.double_grants"), Overruns: count("incidents.overruns")}
	if spec, err := compose.ParseSpec(e.Candidate.Topology); err == nil {
		c.Backend = spec.Info().Backend
	}
	if n, _, measured := r.HoldersAtFaults(func(string) bool { return true }); measured {
		c.Exposed = &n
	}
	c.Leased = plan.Renewable(e.Candidate.Lock)
	if ttl, ok := r.Config["ttl"]; ok && c.Leased {
		c.TTL = fmt.Sprint(ttl)
	}
	c.CommandsPerAcquire, _ = figure(r, "servers.commands_per_acquire")
	c.CPUPerAcquireUS, _ = figure(r, "servers.cpu_us_per_acquire")
	load, open := prof.Demand, prof.OpenLoop
	if e.Kind == KindCapacity || !prof.OpenLoop {
		load, open = float64(prof.Concurrency), false
	}
	c.Step = sweep.StepOf(load, r, req.SLO, open)
	return c
}

// figure reads a catalogue figure from r; nil with the reason when r has
// none.
func figure(r *results.Result, name string) (*float64, error) {
	f, err := results.LookupFigure(name)
	if err != nil {
		return nil, err
	}
	v, err := f.Value(r)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// Judgement is a candidate against the requirements.
type Judgement struct {
	// Candidate is LOCK@TOPOLOGY.
	Candidate string `json:"candidate"`
	// Cell is its run at the demand; nil when it was not measured.
	Cell *Cell `json:"cell,omitempty"`
	// SLO and Correctness are the rulebook's words for it (verdict.Meets
	// or Misses; verdict.Safe, Fails, TooThin or NotMeasured).
	SLO         verdict.Word `json:"slo"`
	Correctness verdict.Word `json:"correctness"`
	// MeetsSLO, Safe and Qualifies are the rules' verdicts (Qualifies =
	// both); Why says why in one sentence.
	MeetsSLO  bool   `json:"meets_slo"`
	Safe      bool   `json:"safe"`
	Qualifies bool   `json:"qualifies"`
	Why       string `json:"why"`
	// Thin, when set, says the evidence is too thin to decide and what to
	// run longer.
	Thin string `json:"thin,omitempty"`
}

// Measured reports whether the candidate was measured at the demand and
// acquired anything there: only such a candidate is judged.
func (j Judgement) Measured() bool { return j.Cell != nil && j.Correctness != verdict.NotMeasured }

// NotMeasured is the judgement of a candidate with no run at the demand.
func NotMeasured(candidate string) Judgement {
	return Judgement{Candidate: candidate, SLO: verdict.NotMeasured, Correctness: verdict.NotMeasured,
		Why: "not measured at your demand (see missing)", Thin: "run advise --resume with a longer --budget"}
}

// Judge applies the rulebook (bench/verdict) to a candidate's run at the
// demand: the SLO rule on the caller's wait (c.Step, judged as capacity
// judges a step) and the correctness rule for the requirement.
func Judge(c Cell, req Requirements) Judgement {
	d := verdict.Correctness(c.Safety(), req.Correctness, req.MaxIncidentRate)
	j := Judgement{Candidate: c.Candidate, Cell: &c, MeetsSLO: c.Step.MetSLO, SLO: verdict.Misses, Correctness: d.Word, Thin: d.Thin}
	if j.MeetsSLO {
		j.SLO = verdict.Meets
	}
	if d.Word == verdict.NotMeasured {
		j.SLO, j.MeetsSLO = verdict.NotMeasured, false
		j.Why = "it acquired no lock at your demand, so nothing about it is proven"
		return j
	}
	j.Safe = d.Word == verdict.Safe
	j.Qualifies = j.Safe && j.MeetsSLO
	switch {
	case !j.MeetsSLO && len(c.Step.Broken) > 0:
		j.Why = "misses the SLO (" + c.Step.Broken[0] + "); " + d.Why
	default:
		j.Why = d.Why
	}
	switch {
	case !j.MeetsSLO:
		// The SLO already decided: more samples of its safety could not
		// make it qualify, so "too thin" would not earn its word.
		j.Thin = ""
	case d.Thin != "":
		j.Thin += " (a longer --budget)"
	}
	return j
}

// per10k renders a rate per 10,000.
func per10k(rate float64) string { return verdict.Per10k(rate) }

// Choose picks the recommended candidate among those that qualify, by the
// rule "the cheapest that meets the SLO and the correctness requirement":
// fewest servers; then, between candidates on the same backend, fewest
// server commands per acquisition (one whose servers could not be read
// counts as the most); otherwise (across backends, whose commands are not
// alike: Redis commands, SQL statements, etcd requests) the lowest p99 at
// the demand. It returns -1 when none qualifies.
func Choose(js []Judgement) int {
	best := -1
	for i, j := range js {
		if !j.Qualifies || j.Cell == nil {
			continue
		}
		if best < 0 || cheaper(*j.Cell, *js[best].Cell) {
			best = i
		}
	}
	return best
}

// cheaper reports whether a costs less than b by Choose's order.
func cheaper(a, b Cell) bool {
	if a.Nodes != b.Nodes {
		return a.Nodes < b.Nodes
	}
	ca, cb := a.CommandsPerAcquire, b.CommandsPerAcquire
	switch {
	case a.Backend != b.Backend:
	case ca != nil && cb == nil:
		return true
	case ca == nil && cb != nil:
		return false
	case ca != nil && *ca != *cb:
		return *ca < *cb
	}
	return a.Step.P99US < b.Step.P99US
}

// Retry is the retry advice: the policy the runs used where attempts found
// their key held, none where no attempt did.
func RetryAdvice(c Cell) (policy, why string) {
	if c.Contended == 0 {
		return "none", "no attempt found its key held at your demand, so retries never ran"
	}
	return Retry, fmt.Sprintf("%d attempts found their key held; waiters backed off with full jitter (the policy every run used)", c.Contended)
}

// RedlockCompare is what a Redlock candidate costs against the
// recommended one and what it prevented at the same work.
type RedlockCompare struct {
	Redlock, Against string
	// LatencyX and CommandsX are Redlock's p99 and commands per
	// acquisition over the other's; nil where either is unmeasured.
	LatencyX, CommandsX *float64
	// IncidentsPer10k are each one's incidents per 10,000 acquisitions;
	// Prevented is the other's minus Redlock's (what Redlock prevented).
	RedlockPer10k, AgainstPer10k, PreventedPer10k float64
	// FencePrevented is the stale writes the fence of the other refused.
	FencePrevented int64
	// Difference is Fisher's exact test of the two incident rates: the page
	// says Redlock prevented incidents only where it shows a difference.
	Difference verdict.Difference
}

// CompareRedlock compares a Redlock cell with another at the same work.
func CompareRedlock(redlock, against Cell) RedlockCompare {
	rc := RedlockCompare{Redlock: redlock.Candidate, Against: against.Candidate, FencePrevented: against.FencingRejected}
	if against.Step.P99US > 0 {
		x := redlock.Step.P99US / against.Step.P99US
		rc.LatencyX = &x
	}
	if redlock.CommandsPerAcquire != nil && against.CommandsPerAcquire != nil && *against.CommandsPerAcquire > 0 {
		x := *redlock.CommandsPerAcquire / *against.CommandsPerAcquire
		rc.CommandsX = &x
	}
	rate := func(c Cell) float64 {
		if c.Acquired == 0 {
			return 0
		}
		return float64(c.Incidents()) / float64(c.Acquired) * 1e4
	}
	rc.RedlockPer10k, rc.AgainstPer10k = rate(redlock), rate(against)
	rc.PreventedPer10k = max(0, rc.AgainstPer10k-rc.RedlockPer10k)
	rc.Difference = verdict.DifferTrials(int(redlock.Incidents()), int(redlock.Acquired), int(against.Incidents()), int(against.Acquired))
	return rc
}

// isRedlock reports whether a candidate is Redlock over several masters.
func isRedlock(candidate string) bool {
	return sweep.IsRedlock(lockOf(candidate))
}

func lockOf(candidate string) string {
	for i := range candidate {
		if candidate[i] == '@' {
			return candidate[:i]
		}
	}
	return candidate
}
