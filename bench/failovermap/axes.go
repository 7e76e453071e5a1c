// Package failovermap is `lockbench failover-map`: how many double grants a
// failover causes as a function of what a user controls — the replication
// lag at the primary's death, the hold time, and a mitigation (WAIT) — per
// lock, each cell measured over many failovers with its 95% interval and set
// beside a first-principles prediction (predict.go).
package failovermap

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results/suggest"
)

// Mitigation is what a lock does after SET to survive a failover.
type Mitigation string

// The mitigations.
const (
	// None grants as soon as the primary has the key.
	None Mitigation = "none"
	// Wait grants only once a replica acknowledged the key (WAIT 1 with a
	// timeout; fewer acks count as not acquired).
	Wait Mitigation = "wait"
	// WaitAOF grants only once the key is in a replica's append-only file
	// (WAITAOF, Redis 7.2 and later).
	WaitAOF Mitigation = "waitaof"
)

// mitigations lists the accepted mitigations in order.
var mitigations = []Mitigation{None, Wait, WaitAOF}

// Axes are the grid: every lock × mitigation is one panel of lag × hold
// cells, on one topology.
type Axes struct {
	// Topology is replicated or cluster:M,R (R ≥ 1).
	Topology string `json:"topology"`
	// Lags are the replication lags at the primary's death.
	Lags []time.Duration `json:"lags"`
	// Holds are the mean hold times.
	Holds []time.Duration `json:"holds"`
	// Mitigations and Locks make the panels.
	Mitigations []Mitigation `json:"mitigations"`
	Locks       []string     `json:"locks"`
	// WaitTimeout bounds the WAIT of the wait mitigation.
	WaitTimeout time.Duration `json:"wait_timeout"`
}

// Bounds of the axes: a lag longer than the sentinels' down-after would be a
// partition, not a lag; a hold past a minute makes one failover take minutes.
const (
	maxLag   = 5 * time.Second
	minHold  = time.Millisecond
	maxHold  = time.Minute
	maxCells = 64
)

// ParseLags reads --lag: durations from 0 to 5s, comma-separated, each once.
func ParseLags(s string) ([]time.Duration, error) {
	return parseDurations("lag", s, 0, maxLag)
}

// ParseHolds reads --hold: durations from 1ms to 1m, comma-separated.
func ParseHolds(s string) ([]time.Duration, error) {
	return parseDurations("hold", s, minHold, maxHold)
}

// parseDurations reads a comma-separated list of distinct durations within
// [lo, hi], in the order given.
func parseDurations(flag, s string, lo, hi time.Duration) ([]time.Duration, error) {
	bad := func(format string, args ...any) error {
		return &plan.InputError{Flag: flag, Msg: fmt.Sprintf("%q: %s; want durations from %v to %v, comma-separated, e.g. %s",
			s, fmt.Sprintf(format, args...), lo, hi, exampleOf(flag))}
	}
	if strings.TrimSpace(s) == "" {
		return nil, bad("empty")
	}
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		d, err := time.ParseDuration(part)
		if part == "0" {
			d, err = 0, nil
		}
		switch {
		case err != nil:
			return nil, bad("%q is not a duration", part)
		case d < lo || d > hi:
			return nil, bad("%v is out of range", d)
		case slices.Contains(out, d):
			return nil, bad("%v given twice", d)
		}
		out = append(out, d)
	}
	if len(out) > maxCells {
		return nil, bad("%d values, at most %d", len(out), maxCells)
	}
	return out, nil
}

func exampleOf(flag string) string {
	if flag == "lag" {
		return "0,100ms,500ms"
	}
	return "100ms,1s,3s"
}

// ParseMitigations reads --mitigation: none, wait, waitaof, comma-separated.
func ParseMitigations(s string) ([]Mitigation, error) {
	names := make([]string, len(mitigations))
	for i, m := range mitigations {
		names[i] = string(m)
	}
	var out []Mitigation
	for _, part := range strings.Split(s, ",") {
		m := Mitigation(strings.TrimSpace(part))
		if !slices.Contains(mitigations, m) {
			return nil, &plan.InputError{Flag: "mitigation", Msg: fmt.Sprintf("%q: %s; want none, wait (WAIT 1 after SET) or waitaof, comma-separated",
				s, suggest.Unknown(string(m), names))}
		}
		if slices.Contains(out, m) {
			return nil, &plan.InputError{Flag: "mitigation", Msg: fmt.Sprintf("%q: %s given twice; want each of none, wait, waitaof at most once", s, m)}
		}
		out = append(out, m)
	}
	return out, nil
}

// ParseTopology reads --topology: replicated, or cluster:M,R with at least
// one replica per master (a failover needs one to promote).
func ParseTopology(s string) (compose.Spec, error) {
	spec, err := compose.ParseSpec(s)
	if err != nil {
		return compose.Spec{}, &plan.InputError{Flag: "topology", Msg: fmt.Sprintf("%v; want replicated or cluster:M,R", err)}
	}
	switch {
	case spec.Kind == compose.KindReplicated:
	case spec.Kind == compose.KindCluster && spec.Masters >= 1 && spec.Replicas >= 1:
	default:
		return compose.Spec{}, &plan.InputError{Flag: "topology", Msg: fmt.Sprintf("%q has no replica to promote; want replicated or cluster:M,R with R ≥ 1", s)}
	}
	return spec, nil
}

// ParseLocks reads --lock: locks the topology runs, comma-separated.
func ParseLocks(s string, spec compose.Spec) ([]string, error) {
	accepted := spec.Info().Locks
	var out []string
	for _, part := range strings.Split(s, ",") {
		l := strings.TrimSpace(part)
		if !slices.Contains(accepted, l) || l == "naive" {
			return nil, &plan.InputError{Flag: "lock", Msg: fmt.Sprintf("%q: %s on %s, comma-separated", s, suggest.Unknown(l, lockChoices(accepted)), spec)}
		}
		if slices.Contains(out, l) {
			return nil, &plan.InputError{Flag: "lock", Msg: fmt.Sprintf("%q: %s given twice; want each lock at most once", s, l)}
		}
		out = append(out, l)
	}
	return out, nil
}

// lockChoices are the topology's locks but naive, whose release is broken by
// design: its double grants would not be the failover's.
func lockChoices(accepted []string) []string {
	var out []string
	for _, l := range accepted {
		if l != "naive" {
			out = append(out, l)
		}
	}
	return out
}

// DefaultLocks are the topology's locks but naive.
func DefaultLocks(spec compose.Spec) string {
	return strings.Join(lockChoices(spec.Info().Locks), ",")
}
