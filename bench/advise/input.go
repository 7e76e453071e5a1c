// Package advise turns "this is my lock and my work" into one page of advice
// backed by measurements: it plans experiments within a time budget (TTL ×
// renewal tuning, each candidate at the stated demand, the failures that
// matter for each candidate), runs them as ordinary stored runs (reusing
// those already measured with the same configuration), and computes every
// recommendation from the measured cells by stated rules (rules.go), citing
// the result each number rests on.
package advise

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/sweep"
	"github.com/lockbench/lockbench/bench/verdict"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Correctness requirements.
const (
	// Strict: a stale write accepted is unacceptable.
	Strict = verdict.Strict
	// Bounded: a rare duplicate is tolerable, at most --max-incident-rate.
	Bounded = verdict.Bounded
)

// WorkFlags are the run flags that describe the work; advise passes them to
// every run it makes and decides every other run flag itself.
var workFlags = []string{"hold", "pause-prob", "pause", "crash-prob", "keys", "rate", "concurrency"}

// WorkFlags lists the run flags advise takes as the description of the work.
func WorkFlags() []string { return append([]string(nil), workFlags...) }

// Requirements are what the advice must meet.
type Requirements struct {
	// SLO are the service levels a candidate must keep at the demand.
	SLO []results.Assertion
	// MaxIncidentRate is the highest acceptable share of holders whose
	// work outlived their lease (strict) or that caused an incident (bounded).
	MaxIncidentRate float64
	// Correctness is Strict or Bounded.
	Correctness string
}

// Input is everything advise was told.
type Input struct {
	// Candidates are compared in order.
	Candidates []sweep.LockSpec
	// Redis are external servers for the candidates on single ("" for local).
	Redis []string
	// Work holds the work flags (WorkFlags) as given.
	Work plan.Values
	// Req are the requirements.
	Req Requirements
	// Budget is the wall time the whole command may take (it ends within
	// 1.25 × Budget).
	Budget time.Duration
	// Out is the results directory.
	Out string
}

// ParseCorrectness reads --correctness.
func ParseCorrectness(s string) (string, error) {
	switch s {
	case Strict, Bounded:
		return s, nil
	}
	return "", &plan.InputError{Flag: "correctness", Msg: fmt.Sprintf("%q: want strict (a stale write accepted is unacceptable) or bounded (a rare duplicate is tolerable)", s)}
}

// MinBudget is the shortest budget advise plans in: one short run of one
// candidate and its server's start-up.
const MinBudget = 5 * time.Second

// ParseBudget reads --budget.
func ParseBudget(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, &plan.InputError{Flag: "budget", Msg: fmt.Sprintf("%q is not a duration; want e.g. 5m, 90s or 1h", s)}
	case d < MinBudget || d > 24*time.Hour:
		return 0, &plan.InputError{Flag: "budget", Msg: fmt.Sprintf("%v: want from %v to 24h", d, MinBudget)}
	}
	return d, nil
}

// ParseCandidate reads one --candidate LOCK@TOPOLOGY (lock-cost's syntax).
func ParseCandidate(s string) (sweep.LockSpec, error) {
	c, err := sweep.ParseLockSpec(s)
	if err != nil {
		return c, &plan.InputError{Flag: "candidate", Msg: err.Error()}
	}
	return c, nil
}

// DefaultCandidates are the candidates when none are given: the --redis
// target (or a local server) as single with lockbench's single and fenced
// locks, local redlock:5 and etcd:3 with their kinds' default locks, and
// PostgreSQL where it is installed.
func DefaultCandidates(pgInstalled bool) []sweep.LockSpec {
	out := []sweep.LockSpec{{Lock: lockimpl.LockSingle, Topology: "single"}, {Lock: lockimpl.LockFenced, Topology: "single"}}
	for _, topo := range []string{"redlock:5", "etcd:3"} {
		out = append(out, sweep.LockSpec{Lock: defaultLock(topo), Topology: topo})
	}
	if pgInstalled {
		out = append(out, sweep.LockSpec{Lock: defaultLock("postgres"), Topology: "postgres"})
	}
	return out
}

func defaultLock(topo string) string {
	s, err := compose.ParseSpec(topo)
	if err != nil {
		return ""
	}
	return s.DefaultLock()
}

// Check refuses input that no plan could honour, before anything starts.
func (in Input) Check() error {
	if len(in.Candidates) == 0 {
		return &plan.InputError{Flag: "candidate", Msg: "no candidates; want LOCK@TOPOLOGY, e.g. fenced@single"}
	}
	seen := map[string]bool{}
	for _, c := range in.Candidates {
		if seen[c.String()] {
			return &plan.InputError{Flag: "candidate", Msg: fmt.Sprintf("%s given twice; give each candidate once", c)}
		}
		seen[c.String()] = true
	}
	if r := in.Req.MaxIncidentRate; r <= 0 || r >= 1 {
		return &plan.InputError{Flag: "max-incident-rate", Msg: fmt.Sprintf("%v: want a share between 0 and 1, e.g. 1e-4", r)}
	}
	if _, err := ParseCorrectness(in.Req.Correctness); err != nil {
		return err
	}
	for _, a := range in.Req.SLO {
		if !a.IsLatency() && !strings.HasPrefix(a.Metric, "throughput") {
			return &plan.InputError{Flag: "slo", Msg: fmt.Sprintf("%q: advise judges latency (p99<10ms) or throughput at the demand; incidents are --max-incident-rate's", a.Expr)}
		}
	}
	if in.Work.Has("rate") && plan.StagedRate(in.Work) {
		return &plan.InputError{Flag: "rate", Msg: fmt.Sprintf("%q: advise takes the peak demand as one constant rate, e.g. --rate 5000", in.Work.Get("rate"))}
	}
	return nil
}

// external reports whether the candidate runs on the --redis servers: a
// candidate on single when --redis was given.
func (in Input) external(c sweep.LockSpec) bool {
	return len(in.Redis) > 0 && c.Topology == "single"
}
