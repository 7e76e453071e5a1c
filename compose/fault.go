package compose

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results/suggest"
)

// FaultKind names what a fault does to its target: the word after at= in
// --fault. Each kind is a Fault in a file of its own (fault_kill.go, …),
// which declares its constant.
type FaultKind string

// FaultTarget says how a fault picks its node.
type FaultTarget string

const (
	// TargetNode is a data node by index (node=N).
	TargetNode FaultTarget = "node"
	// TargetPrimary is the current primary, resolved when the fault applies.
	TargetPrimary FaultTarget = "primary"
	// TargetReplica is the current replica, resolved when the fault applies.
	TargetReplica FaultTarget = "replica"
	// TargetMaster is the current master of cluster shard S (master=S).
	TargetMaster FaultTarget = "master"
	// TargetShard is a replica of cluster shard S (shard=S), for failover
	// and lag-replica.
	TargetShard FaultTarget = "shard"
	// TargetHolder is a session holding a lock (on postgres or
	// zookeeper:N), picked when the fault applies (terminate's and
	// expire's target).
	TargetHolder FaultTarget = "holder"
)

// FaultHelp lists the accepted fault specs, for error messages and --help:
// each kind's form, from the registry.
func FaultHelp() string {
	forms := make([]string, 0, len(faults()))
	for _, k := range faults() {
		forms = append(forms, k.Info().Form)
	}
	return "at=DURATION then one of: " + strings.Join(forms, " · ") +
		"; TARGET is node=N, primary, replica, master=S (cluster shard S), or on etcd:N, zookeeper:N and nats:N leader; isolate also takes minority (etcd:N, zookeeper:N, nats:3) and ring (etcd:N, zookeeper:N)"
}

// faultFormHint ends a refusal of a fault spec: FaultHelp, every form, is
// too long for one line after the spec and the reason.
const faultFormHint = "see the forms in lockbench run --help"

// Bounds that keep a spec sensible and its arithmetic far from overflow.
const (
	maxFaultTime = 24 * time.Hour
	maxNodeIndex = 1000
)

// FaultSpec is one parsed --fault value.
type FaultSpec struct {
	// At is when the fault applies, from the start of the measured window.
	At time.Duration
	// Kind is what it does.
	Kind FaultKind
	// Target picks the node; lag-replica always targets the replica.
	Target FaultTarget
	// Node is the data node index when Target is TargetNode.
	Node int
	// Shard is the cluster shard when Target is TargetMaster or TargetShard.
	Shard int
	// For is how long the fault lasts before it is undone; 0 for kill and
	// restart, and for a clock-jump that stays.
	For time.Duration
	// Latency is the delay a latency fault adds to each reply.
	Latency time.Duration
	// Jump is the signed amount a clock-jump moves the clock.
	Jump time.Duration
	// Speed is the clock-speed factor (2.0 runs twice as fast).
	Speed float64
}

// ParseFault parses a --fault value such as "at=3s kill primary",
// "at=2s pause node=2 for=1500ms" or "at=1s latency node=0 300ms for=2s".
// Words may come in any order after at=; its errors are one line naming the
// spec and what is accepted.
func ParseFault(spec string) (FaultSpec, error) {
	bad := func(format string, args ...any) (FaultSpec, error) {
		return FaultSpec{}, fmt.Errorf("fault %q: %s; %s", spec, fmt.Sprintf(format, args...), faultFormHint)
	}
	var f FaultSpec
	var haveAt, haveFor bool
	var positional []string
	for _, tok := range strings.Fields(spec) {
		key, val, isKV := strings.Cut(tok, "=")
		if isKV {
			switch key {
			case "at", "for":
				d, err := time.ParseDuration(val)
				if err != nil {
					return bad("%s=%q is not a duration (e.g. 1500ms, 2s)", key, val)
				}
				if d > maxFaultTime {
					return bad("%s=%s is more than %s", key, val, maxFaultTime)
				}
				if key == "at" {
					if haveAt {
						return bad("at= given twice")
					}
					if d < 0 {
						return bad("at=%s is negative", val)
					}
					f.At, haveAt = d, true
				} else {
					if haveFor {
						return bad("for= given twice")
					}
					if d <= 0 {
						return bad("for=%s must be positive", val)
					}
					f.For, haveFor = d, true
				}
			case "node":
				if f.Target != "" {
					return bad("more than one target")
				}
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 || n > maxNodeIndex {
					return bad("node=%q is not a data node index (0, 1, …)", val)
				}
				f.Target, f.Node = TargetNode, n
			case "master", "shard":
				if f.Target != "" {
					return bad("more than one target")
				}
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 || n >= MaxMasters {
					return bad("%s=%q is not a cluster shard index (0 to %d)", key, val, MaxMasters-1)
				}
				f.Target, f.Shard = FaultTarget(key), n
			default:
				return bad("unknown key %q", key)
			}
			continue
		}
		switch {
		case tok == string(TargetPrimary) || tok == string(TargetReplica) || tok == string(TargetLeader) || tok == string(TargetHolder) || groupTarget(FaultTarget(tok)):
			if f.Target != "" {
				return bad("more than one target")
			}
			f.Target = FaultTarget(tok)
		case f.Kind == "":
			if _, ok := LookupFault(FaultKind(tok)); !ok {
				return FaultSpec{}, fmt.Errorf("unknown fault %q; %s", tok, suggest.Unknown(tok, faultKindNames()))
			}
			f.Kind = FaultKind(tok)
		default:
			positional = append(positional, tok)
		}
	}
	if !haveAt {
		return bad("missing at=DURATION")
	}
	if f.Kind == "" {
		return bad("missing the fault kind")
	}
	kind, _ := LookupFault(f.Kind)
	info := kind.Info()
	wantArg := info.Amount != ""
	switch {
	case wantArg && len(positional) == 0:
		return bad("%s needs its amount", f.Kind)
	case wantArg && len(positional) > 1, !wantArg && len(positional) > 0:
		return bad("unexpected %q", strings.Join(positional, " "))
	}
	if why := pickTarget(&f, info); why != "" {
		return bad("%s", why)
	}
	switch {
	case info.For == forNone && haveFor:
		return bad("%s takes no for=; %s", f.Kind, info.NoFor)
	case info.For == forNeeded && !haveFor:
		return bad("%s needs for=DURATION", f.Kind)
	}
	if wantArg {
		if why := kind.parseAmount(&f, positional[0]); why != "" {
			return bad("%s", why)
		}
	}
	return f, nil
}

// pickTarget checks f's target against what its kind takes, and sets the
// kind's default target when none was given; it returns the refusal, or "".
func pickTarget(f *FaultSpec, info FaultInfo) string {
	if len(info.Targets) > 0 {
		if f.Target == "" && info.DefaultTarget != "" {
			f.Target = info.DefaultTarget
		}
		if !slices.Contains(info.Targets, f.Target) {
			return info.TargetRule
		}
		return ""
	}
	switch f.Target {
	case "":
		return fmt.Sprintf("%s needs a target", f.Kind)
	case TargetShard:
		return fmt.Sprintf("shard=S names a replica for %s; %s takes master=S or node=N", strings.Join(faultsTaking(TargetShard), " and "), f.Kind)
	}
	if groupTarget(f.Target) && !info.Groups {
		return fmt.Sprintf("%s names several nodes, which only %s cuts apart; %s takes node=N or a role", f.Target, strings.Join(faultsWithGroups(), " and "), f.Kind)
	}
	return ""
}

// faultsTaking names the fault kinds whose own targets include t, in
// alphabetical order.
func faultsTaking(t FaultTarget) []string {
	var out []string
	for _, k := range faults() {
		if slices.Contains(k.Info().Targets, t) {
			out = append(out, string(k.Info().Kind))
		}
	}
	slices.Sort(out)
	return out
}

// takesTarget reports whether a fault of info acts on target t: its own
// targets, or when it lists none every target of a data node (not a
// cluster shard's replica, not a lock holder's session).
func (info FaultInfo) takesTarget(t FaultTarget) bool {
	if len(info.Targets) > 0 {
		return slices.Contains(info.Targets, t)
	}
	if groupTarget(t) {
		return info.Groups
	}
	return t != TargetShard && t != TargetHolder
}

// faultsWithGroups names the fault kinds that take minority and ring.
func faultsWithGroups() []string {
	var out []string
	for _, k := range faults() {
		if k.Info().Groups {
			out = append(out, string(k.Info().Kind))
		}
	}
	return out
}

// faultKindNames lists the fault kinds, for suggestions.
func faultKindNames() []string {
	var out []string
	for _, k := range faults() {
		out = append(out, string(k.Info().Kind))
	}
	return out
}

// String renders the spec in --fault form; ParseFault reads it back to the
// same spec.
func (f FaultSpec) String() string {
	parts := []string{"at=" + f.At.String(), string(f.Kind)}
	kind, known := LookupFault(f.Kind)
	var info FaultInfo
	if known {
		info = kind.Info()
	}
	if info.DefaultTarget == "" || f.Target != info.DefaultTarget {
		parts = append(parts, f.TargetString())
	}
	if known && info.Amount != "" {
		parts = append(parts, kind.formatAmount(f))
	}
	if f.For > 0 {
		parts = append(parts, "for="+f.For.String())
	}
	return strings.Join(parts, " ")
}

// Effect says in words what the fault does to the topology, for a why
// ("a master restarts empty").
func (f FaultSpec) Effect() string {
	if kind, ok := LookupFault(f.Kind); ok {
		if words := kind.effect(f); words != "" {
			return words
		}
	}
	return "the fault " + f.String() + " strikes"
}

// TakesFlag reports whether the spec's kind is one a kind-scoped run flag
// applies to (restart's --restart-delay).
func (f FaultSpec) TakesFlag(flag string) bool {
	kind, ok := LookupFault(f.Kind)
	return ok && slices.Contains(kind.Info().RunFlags, flag)
}

// FaultsWithFlag names the fault kinds a run flag applies to.
func FaultsWithFlag(flag string) []string {
	var out []string
	for _, k := range faults() {
		if slices.Contains(k.Info().RunFlags, flag) {
			out = append(out, string(k.Info().Kind))
		}
	}
	return out
}

// TargetString renders the target: node=N, primary, replica, master=S or
// shard=S.
func (f FaultSpec) TargetString() string {
	switch f.Target {
	case TargetNode:
		return "node=" + strconv.Itoa(f.Node)
	case TargetMaster, TargetShard:
		return string(f.Target) + "=" + strconv.Itoa(f.Shard)
	}
	return string(f.Target)
}

// Fault is everything lockbench knows of one fault kind. Each kind is one
// type in a file of its own (fault_kill.go, fault_pause.go, …) and one line
// in faults (faults.go); ParseFault, FitFault, CheckFault, Apply, the
// schedule and plan ask it rather than name a kind.
type Fault interface {
	// Info is the kind's static description: name, form, targets, for=,
	// amount, run flags, what it records.
	Info() FaultInfo
	// fits says in one line why the kind cannot strike a topology of kind
	// k from provider, "" when it can. KindInfo.Faults is derived from it.
	fits(k KindInfo, provider string) string
	// arm sets what the servers must be started with for the kind to
	// apply (a proxy, the clock shim).
	arm(o *UpOptions)
	// misfit says what the started node n lacks for the kind, "" when
	// nothing.
	misfit(t *Topology, n *Node) string
	// apply strikes n now and returns the undo, nil when there is none.
	apply(ctx context.Context, t *Topology, f FaultSpec, n *Node) (undo func() error, err error)
	// undoAfter is how long after it was applied f is undone, given the
	// topology's restart delay.
	undoAfter(f FaultSpec, restartDelay time.Duration) time.Duration
	// parseAmount reads the kind's amount (Info().Amount) into f; it
	// returns the refusal, or "".
	parseAmount(f *FaultSpec, word string) string
	// formatAmount renders f's amount as parseAmount reads it.
	formatAmount(f FaultSpec) string
	// effect says in words what f does to the topology, "" for the
	// generic words.
	effect(f FaultSpec) string
	// drawAmount sets f's amount (Info().Amount) drawn from r, for a chaos
	// schedule; a kind without an amount leaves f as it is.
	drawAmount(f *FaultSpec, r *rand.Rand)
}

// FaultInfo is what a Fault declares of itself.
type FaultInfo struct {
	// Kind is the name in --fault.
	Kind FaultKind
	// Form is its accepted form, for FaultHelp: "pause TARGET for=DURATION".
	Form string
	// Targets are the targets it takes when they are its own (holder,
	// shard=S); empty for a kind that takes any data node's target
	// (node=N, primary, replica, master=S, leader).
	Targets []FaultTarget
	// DefaultTarget is the target when none is given ("" for none).
	DefaultTarget FaultTarget
	// TargetRule refuses a target outside Targets, in words.
	TargetRule string
	// For says whether it takes for=.
	For forRule
	// NoFor says why it takes no for=, when For is forNone.
	NoFor string
	// Amount names its positional amount in the form ("DELAY"), "" when it
	// takes none.
	Amount string
	// RunFlags are the kind-scoped run flags that apply only with it
	// (restart's --restart-delay).
	RunFlags []string
	// Promotes says which replicas may take over after it, for the
	// schedule to watch and record (FaultEvent.Promoted).
	Promotes promotionRule
	// Groups says it takes the targets of several nodes (minority, ring)
	// besides a data node's.
	Groups bool
	// Lasting says it leaves the topology worse until the run ends (a
	// node killed stays down): a chaos schedule draws it only when asked.
	Lasting bool
}

// forRule says whether a fault kind takes for=.
type forRule int

const (
	// forNeeded: it lasts for=, then is undone.
	forNeeded forRule = iota
	// forOptional: without for= it stays (a clock jump).
	forOptional
	// forNone: it takes no for= (its NoFor says why).
	forNone
)

// promotionRule says which cluster replicas a fault may promote.
type promotionRule int

const (
	// promotesNone: nothing to watch.
	promotesNone promotionRule = iota
	// promotesReplicas: it stops a master, whose replicas may take over.
	promotesReplicas
	// promotesTarget: its target, a replica, takes over.
	promotesTarget
)

// Faults lists every fault kind, in help order.
func Faults() []Fault { return faults() }

// LookupFault finds a fault kind.
func LookupFault(k FaultKind) (Fault, bool) {
	for _, f := range faults() {
		if f.Info().Kind == k {
			return f, true
		}
	}
	return nil, false
}

// ArmFaults sets in o what the faults need the servers started with (a
// proxy in front of each node, the clock shim), and nothing else: each
// costs a little on every command. Set o.Provider first.
func (o *UpOptions) ArmFaults(fs []FaultSpec) {
	for _, f := range fs {
		if k, ok := LookupFault(f.Kind); ok {
			k.arm(o)
		}
	}
}

// faultBase gives a fault kind the defaults most take: it fits every kind
// from every provider, needs nothing armed or on the live node, lasts its
// for=, has no amount and the generic words.
type faultBase struct{}

func (faultBase) fits(KindInfo, string) string                         { return "" }
func (faultBase) arm(*UpOptions)                                       {}
func (faultBase) misfit(*Topology, *Node) string                       { return "" }
func (faultBase) undoAfter(f FaultSpec, _ time.Duration) time.Duration { return f.For }
func (faultBase) parseAmount(*FaultSpec, string) string                { return "" }
func (faultBase) formatAmount(FaultSpec) string                        { return "" }
func (faultBase) effect(FaultSpec) string                              { return "" }
func (faultBase) drawAmount(*FaultSpec, *rand.Rand)                    {}

// notTaken is the generic reason a kind does not take a fault from a
// provider, and the one every fault gives for external servers that only
// a running process could take.
func notTaken(k FaultKind, info KindInfo, provider string) string {
	if provider == ProviderExternal {
		return fmt.Sprintf("external servers (--%s) are only reached, not run, by lockbench: they cannot be killed, paused, restarted or have their clocks moved", info.URLFlag)
	}
	return fmt.Sprintf("not a fault of %s from the %s provider", info.Kind, provider)
}

// backendFits is the fit of a fault kind that acts through one backend's
// own means (a PostgreSQL backend ended, a ZooKeeper session expired):
// every kind of that backend, from every provider.
func backendFits(k FaultKind, info KindInfo, provider, backend string) string {
	if info.Backend != backend {
		return notTaken(k, info, provider)
	}
	return ""
}
