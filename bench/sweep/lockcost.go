package sweep

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// LockSpec is one lock of a lock-cost comparison: a lock on a topology.
type LockSpec struct {
	// Lock is the --lock name.
	Lock string `json:"lock"`
	// Topology is the --topology value.
	Topology string `json:"topology"`
}

// String renders the spec as --lock takes it in lock-cost.
func (s LockSpec) String() string { return s.Lock + "@" + s.Topology }

// LockSpecHelp says what lock-cost's --lock accepts.
const LockSpecHelp = "NAME[@TOPOLOGY], e.g. fenced, redislock@replicated, redsync@redlock:5, etcd@etcd:3 or pg-advisory@postgres (without @TOPOLOGY: single)"

// DefaultLockSpecs are the locks lock-cost compares when none are given:
// lockbench's own locks and the peer libraries, on one server and on five
// masters.
func DefaultLockSpecs() []LockSpec {
	return []LockSpec{{lockimpl.LockSingle, "single"}, {lockimpl.LockFenced, "single"}, {lockimpl.LockRedislock, "single"},
		{lockimpl.LockRedlock, "redlock:5"}, {lockimpl.LockRedsync, "redlock:5"}}
}

// ParseLockSpec reads NAME[@TOPOLOGY]. Whether the lock runs on that
// topology is the run's own check (plan), made before anything starts.
func ParseLockSpec(s string) (LockSpec, error) {
	name, topo, hasTopo := strings.Cut(strings.TrimSpace(s), "@")
	switch {
	case name == "":
		return LockSpec{}, fmt.Errorf("%q: no lock name; want %s", s, LockSpecHelp)
	case hasTopo && topo == "":
		return LockSpec{}, fmt.Errorf("%q: no topology after @; want %s", s, LockSpecHelp)
	case !hasTopo:
		topo = "single"
	}
	if _, err := compose.ParseSpec(topo); err != nil {
		return LockSpec{}, fmt.Errorf("%q: %v", s, err)
	}
	return LockSpec{Lock: name, Topology: topo}, nil
}

// CostPlan is a lock-cost comparison: the same workload on each lock.
type CostPlan struct {
	// Locks are compared in order; ratios are against the first.
	Locks []LockSpec
	// Base are the run flags every run shares (no lock or topology).
	Base plan.Values
	// Count is the runs per lock, and per lock under its fault.
	Count int
	// WithFault adds, per lock, runs under its topology's canonical fault.
	WithFault bool
}

// values are the run flags of one lock's runs, and of its fault runs. A
// flag that does not apply to this lock or its topology (a Redlock setting
// on a peer library, --peer-option on lockbench's own locks, --pool-size on
// etcd) is left out of its runs rather than refused, so one comparison can
// set flags for each; Check refuses one that no compared lock takes.
func (cp CostPlan) values(spec LockSpec, faulted bool) (plan.Values, error) {
	v := cp.Base.Clone()
	v.Set("lock", spec.Lock)
	v.Set("topology", spec.Topology)
	// Each run is named by the lock it measured, after the comparison's own
	// --label, as a sweep's cells are: lists tell them apart without ids.
	v.Set("label", costLabel(cp.Base.Get("label"), spec, ""))
	external := len(cp.Base["redis"]) > 0
	for name := range cp.Base {
		if plan.Scoped(name) && !plan.AppliesTo(name, spec.Lock, spec.Topology, external) {
			delete(v, name)
		}
	}
	if external {
		if err := useURLs(v, spec, cp.Base["redis"]); err != nil {
			return nil, err
		}
	}
	if !faulted {
		return v, nil
	}
	resolved, err := plan.Resolve(v)
	if err != nil {
		return nil, err
	}
	fault, window, err := CanonicalFault(spec.Topology, resolved.Get("ttl"), resolved.Get("duration"))
	if err != nil {
		return nil, &plan.InputError{Flag: "with-fault", Msg: fmt.Sprintf("%s: %v", spec, err)}
	}
	v.Set("fault", fault.String())
	v.Set("duration", window.String())
	v.Set("label", costLabel(cp.Base.Get("label"), spec, fault.String()))
	return v, nil
}

// costLabel names one lock's runs in a comparison: "lock-cost fenced@single",
// and "with FAULT" for the runs under the topology's canonical fault.
func costLabel(base string, spec LockSpec, fault string) string {
	if base == "" {
		base = "lock-cost"
	}
	label := base + " " + spec.String()
	if fault != "" {
		label += " with " + fault
	}
	return label
}

// useURLs points a lock at the external servers it needs: as many as its
// topology takes (single the first, redlock:N the first N), or all of them
// for a kind that takes any number (a bare redlock).
func useURLs(v plan.Values, spec LockSpec, urls []string) error {
	topo, err := compose.ParseSpec(spec.Topology)
	if err != nil {
		return &plan.InputError{Flag: "lock", Msg: err.Error()}
	}
	if flag := topo.Info().URLFlag; flag != "redis" {
		return &plan.InputError{Flag: "lock", Msg: fmt.Sprintf("%s reaches its servers with --%s, and would be compared with the --redis servers; drop one of the two", spec, flag)}
	}
	n := topo.Shape().URLs(topo)
	switch {
	case n > len(urls):
		return &plan.InputError{Flag: "lock", Msg: fmt.Sprintf("%s needs %d servers and --redis gives %d", spec, n, len(urls))}
	case n == 0:
		n = len(urls)
	}
	v.Set("redis", urls[:n]...)
	return nil
}

// CanonicalFault is the fault --with-fault puts on a topology, as its kind
// defines it (compose.Shape.CanonicalFault), and the window its run gets.
func CanonicalFault(topology, ttl, duration string) (compose.FaultSpec, time.Duration, error) {
	spec, err := compose.ParseSpec(topology)
	if err != nil {
		return compose.FaultSpec{}, 0, err
	}
	t, terr := time.ParseDuration(ttl)
	d, derr := time.ParseDuration(duration)
	if terr != nil || derr != nil {
		return compose.FaultSpec{}, 0, fmt.Errorf("ttl %q and duration %q: want durations", ttl, duration)
	}
	f, window := spec.CanonicalFault(t, d)
	return f, window, nil
}

// Check parses every run of the comparison, so a bad lock or flag fails
// before any server starts.
func (cp CostPlan) Check() error {
	if len(cp.Locks) == 0 {
		return &plan.InputError{Flag: "lock", Msg: "no locks to compare; want " + LockSpecHelp}
	}
	if cp.WithFault && len(cp.Base["redis"]) > 0 {
		return &plan.InputError{Flag: "with-fault", Msg: "external servers (--redis) cannot be killed or paused; run without --with-fault"}
	}
	if h := cp.Base.Get("history"); !plan.HistoryPerRun(h) {
		return plan.HistoryPerRunError("lock-cost makes many runs")
	}
	for _, name := range sortedKeys(cp.Base) {
		takes := func(s LockSpec) bool { return plan.AppliesTo(name, s.Lock, s.Topology, len(cp.Base["redis"]) > 0) }
		if plan.Scoped(name) && !slices.ContainsFunc(cp.Locks, takes) {
			return &plan.InputError{Flag: name, Msg: "no lock in the comparison takes it, so every run would ignore it (" + plan.ScopeOf(name) + ")"}
		}
	}
	seen := map[string]bool{}
	for _, spec := range cp.Locks {
		// The same lock on the same topology twice would be run twice and
		// shown as two locks to compare; repeats are --count's.
		key := spec.Lock + "@" + spec.Topology
		if t, err := compose.ParseSpec(spec.Topology); err == nil {
			key = spec.Lock + "@" + t.String()
		}
		if seen[key] {
			return &plan.InputError{Flag: "lock", Msg: fmt.Sprintf("%s given twice; give each lock once, and --count N to repeat runs", key)}
		}
		seen[key] = true
		for _, faulted := range cp.variants() {
			v, err := cp.values(spec, faulted)
			if err == nil {
				_, err = plan.Expand(v)
			}
			if err != nil {
				return fmt.Errorf("lock-cost %s: %w", spec, err)
			}
		}
	}
	return nil
}

func sortedKeys(v plan.Values) []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CostRuns are one lock's runs in a comparison.
type CostRuns struct {
	// Spec is the lock and topology.
	Spec LockSpec
	// Runs are its healthy runs.
	Runs []*results.Result
	// Fault is the fault of its fault runs, "" without --with-fault.
	Fault string
	// Faulted are its runs under Fault.
	Faulted []*results.Result
}

// RunCost runs every lock Count times (and Count times under its fault),
// each lock's repeats one group. The locks take turns, repeat by repeat, so
// that a noisy minute on a shared machine falls on every lock alike rather
// than on one lock's whole group. It stops at the first runtime error or
// when ctx ends, returning the locks with what finished of them.
func RunCost(ctx context.Context, cp CostPlan, run Runner, progress Progress) ([]CostRuns, error) {
	count := max(1, cp.Count)
	total, done := len(cp.Locks)*count*len(cp.variants()), 0
	id := plan.NewRunID()
	type cell struct {
		li           int
		faulted      bool
		v            plan.Values
		label, group string
	}
	out := make([]CostRuns, len(cp.Locks))
	var cells []cell
	for li, spec := range cp.Locks {
		out[li].Spec = spec
		for _, faulted := range cp.variants() {
			v, err := cp.values(spec, faulted)
			if err != nil {
				return nil, err
			}
			c := cell{li: li, faulted: faulted, v: v, label: spec.String(), group: fmt.Sprintf("%s-l%d", id, li)}
			if faulted {
				out[li].Fault = v.Get("fault")
				c.label, c.group = c.label+" under "+out[li].Fault, c.group+"-fault"
			}
			cells = append(cells, c)
		}
	}
	finished := func() []CostRuns {
		var f []CostRuns
		for _, cr := range out {
			if len(cr.Runs)+len(cr.Faulted) > 0 {
				f = append(f, cr)
			}
		}
		return f
	}
	for i := range count {
		for _, c := range cells {
			if ctx.Err() != nil {
				return finished(), ctx.Err()
			}
			if progress != nil {
				progress(done, total, fmt.Sprintf("%s (run %d/%d)", c.label, i+1, count))
			}
			r, err := run(ctx, c.v.Clone(), c.group, i)
			if err != nil {
				return finished(), fmt.Errorf("lock-cost %s: %w", c.label, err)
			}
			cr := &out[c.li]
			if c.faulted {
				cr.Faulted = append(cr.Faulted, r)
			} else {
				cr.Runs = append(cr.Runs, r)
			}
			done++
		}
	}
	return out, nil
}

// variants says whether each lock runs healthy only, or healthy and faulted.
func (cp CostPlan) variants() []bool {
	if cp.WithFault {
		return []bool{false, true}
	}
	return []bool{false}
}
