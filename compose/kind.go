package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results/suggest"
)

// Kind names a topology's shape: the word before the colon in --topology.
type Kind string

// Shape is everything lockbench knows of one kind of topology. Each kind is
// one type in a file of its own (kind_single.go, kind_redlock.go, …) and one
// line in shapes; plan, sweep, scenario and every refusal ask it rather than
// name a kind.
type Shape interface {
	// Info is the kind's static description: name, backend, locks,
	// providers, fault targets and faults, run flags.
	Info() KindInfo
	// Parse reads a --topology value of this kind: arg is what follows
	// "kind:", hasArg false for the bare name, in the whole value (for
	// messages).
	Parse(in, arg string, hasArg bool) (Spec, error)
	// Format renders a spec in --topology form; Parse reads it back.
	Format(s Spec) string
	// DataNodes is how many data nodes s has, 0 when only the servers know
	// (a cluster discovered from --redis URLs); fault targets node=N index
	// into them.
	DataNodes(s Spec) int
	// Replicas is how many replicas each key's master has (what
	// --wait-replicas can wait for), -1 when only the servers know.
	Replicas(s Spec) int
	// URLs is how many external URLs s needs, 0 for any number.
	URLs(s Spec) int
	// CanonicalFault is the fault lock-cost --with-fault puts on this kind,
	// given the run's ttl and window, and the window its run gets.
	CanonicalFault(ttl, window time.Duration) (FaultSpec, time.Duration)
	// up brings the topology up from provider (one of Info().Providers).
	up(ctx context.Context, t *Topology, provider string) error
}

// KindInfo is what a Shape declares of itself.
type KindInfo struct {
	// Kind is the name in --topology.
	Kind Kind
	// Syntax says the accepted forms, e.g. "redlock:N with 1 ≤ N ≤ 9".
	Syntax string
	// Example is a spec of the kind a message may suggest, e.g. "redlock:N".
	Example string
	// Sample is a --topology value of the kind that parses, e.g. "redlock:3".
	Sample string
	// CanonicalFaultText says its canonical fault (Shape.CanonicalFault)
	// in words, for --with-fault's help: "one master killed".
	CanonicalFaultText string
	// Backend is what its servers are, as the locks name it
	// (lockimpl.BackendRedis, BackendEtcd, BackendPostgres): the locks that
	// run on it speak that backend.
	Backend string
	// Program is the server program the local provider starts.
	Program string
	// Node is what one of its servers is called ("master", "member").
	Node string
	// Locks are the locks that run on it (plan's --lock names), the default
	// first.
	Locks []string
	// Drivers is true when a user's driver lock (exec:CMD) or Go lock
	// (go:NAME, over the same masters) runs on it: its
	// servers are plain ones a driver's client can reach from their URLs.
	Drivers bool
	// ScriptLocks is true when a lock defined by its scripts (--lock-def
	// FILE) runs on it: one plain master.
	ScriptLocks bool
	// QuorumScriptLocks is true when a lock definition that asks for a
	// quorum (quorum: majority) runs on it: its independent masters.
	QuorumScriptLocks bool
	// LockNotes say, for a lock that does not run on it, why and what to
	// use instead; a lock without a note gets the generic message.
	LockNotes map[string]string
	// Providers are where its servers may come from (ProviderLocal,
	// ProviderDocker, ProviderExternal).
	Providers []string
	// URLFlag is the run flag naming its external servers ("redis", "etcd"):
	// its backend's (BackendInfo.URLFlag), filled in by Spec.Info.
	URLFlag string
	// StartUp is what starting and stopping its local servers adds to a
	// run's window, as measured on a 2-core machine shared with the load
	// generator (lockbench run -d 1s --warmup 0 against the window): advise
	// plans its budget with it, and corrects the plan with what it sees.
	StartUp time.Duration
	// RunFlags are the kind-scoped run flags it takes (plan's flag table
	// marks a flag kind-scoped; it then applies only to the kinds that list
	// it here).
	RunFlags []string
	// Targets are the fault targets it has.
	Targets []FaultTarget
	// Faults are the fault kinds it takes from each provider it runs
	// from: what each fault kind says it fits (Fault.fits), filled in by
	// Spec.Info; a kind never lists them itself.
	Faults map[string][]FaultKind
	// ClockShim is true when its local servers read the time through libc,
	// so that the clock shim moves their clocks.
	ClockShim bool
	// PeerProxy is true when its local servers' links to each other can
	// run through proxies lockbench controls (UpOptions.PeerProxy).
	PeerProxy bool
	// ClockNote says why the clock shim cannot move its servers' clocks,
	// when ClockShim is false.
	ClockNote string
	// Sharded marks a topology whose keys are spread over shards by a
	// cluster client (keys then carry a hash tag).
	Sharded bool
}

// Shapes lists every kind's Shape, in help order.
func Shapes() []Shape { return shapes() }

// LookupShape finds a kind's Shape.
func LookupShape(k Kind) (Shape, bool) {
	for _, s := range shapes() {
		if s.Info().Kind == k {
			return s, true
		}
	}
	return nil, false
}

// Shape is the spec's kind. A Spec not made by ParseSpec with an unknown
// kind gets a shape that refuses everything.
func (s Spec) Shape() Shape {
	if sh, ok := LookupShape(s.Kind); ok {
		return sh
	}
	return unknownShape{kind: s.Kind}
}

// Info is the spec's kind's KindInfo, with what its backend says of it.
func (s Spec) Info() KindInfo { return kindInfo(s.Shape()) }

// kindInfo is sh's KindInfo with what its backend says of every kind of it
// (the URL flag), so that a kind never repeats its backend, and with the
// fault kinds that fit it from each of its providers, so that a kind never
// lists a fault kind.
func kindInfo(sh Shape) KindInfo {
	info := sh.Info()
	if b, ok := LookupBackend(info.Backend); ok {
		info.URLFlag = b.Info().URLFlag
	}
	info.Faults = map[string][]FaultKind{}
	for _, p := range info.Providers {
		for _, k := range faults() {
			if k.fits(info, p) == "" {
				info.Faults[p] = append(info.Faults[p], k.Info().Kind)
			}
		}
	}
	return info
}

// CanonicalFaultHelp says each kind's canonical fault and where it is put,
// from the registry, kinds with the same fault together: "one master killed
// on redlock:N, the leader killed on etcd:N and zookeeper:N, …".
func CanonicalFaultHelp() string {
	var texts []string
	where := map[string][]string{}
	for _, sh := range shapes() {
		info := sh.Info()
		if _, seen := where[info.CanonicalFaultText]; !seen {
			texts = append(texts, info.CanonicalFaultText)
		}
		where[info.CanonicalFaultText] = append(where[info.CanonicalFaultText], info.Example)
	}
	parts := make([]string, len(texts))
	for i, t := range texts {
		parts[i] = t + " on " + strings.Join(where[t], " and ")
	}
	return strings.Join(parts, ", ")
}

// SpecHelp lists the accepted topology specs, from the registry.
func SpecHelp() string {
	var parts []string
	for _, sh := range shapes() {
		parts = append(parts, sh.Info().Syntax)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + ", or " + parts[len(parts)-1]
}

// SpecForms lists each kind's form without its bounds (single, redlock:N,
// cluster:M[,R], …), short enough for a refusal line.
func SpecForms() []string {
	var out []string
	for _, sh := range shapes() {
		form, _, _ := strings.Cut(sh.Info().Syntax, " with ")
		out = append(out, form)
	}
	return out
}

// unknownKind refuses a topology whose kind is not registered: the nearest
// kind with the arguments given ("did you mean redlock:5?"), else the forms.
func unknownKind(in, name, arg string, hasArg bool) error {
	var kinds []string
	for _, sh := range shapes() {
		kinds = append(kinds, string(sh.Info().Kind))
	}
	if near, ok := suggest.Nearest(name, kinds); ok {
		if hasArg {
			near += ":" + arg
		}
		return fmt.Errorf("topology %q: unknown kind %q; did you mean %s?", in, name, near)
	}
	return fmt.Errorf("topology %q: unknown kind %q; want %s", in, name, strings.Join(SpecForms(), ", "))
}

// ParseSpec parses a --topology value: the kind's name, then its own
// arguments after a colon (redlock:5, cluster:3,1, etcd:3).
func ParseSpec(s string) (Spec, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	sh, ok := LookupShape(Kind(name))
	if !ok {
		return Spec{}, unknownKind(s, name, arg, hasArg)
	}
	return sh.Parse(s, arg, hasArg)
}

// String renders the spec in --topology form.
func (s Spec) String() string { return s.Shape().Format(s) }

// Resolved is the spec with what its kind picks when none was given (the
// master count of a bare redlock), for urls external servers.
func (s Spec) Resolved(urls int) Spec {
	if r, ok := s.Shape().(specResolver); ok {
		return r.resolve(s, urls)
	}
	return s
}

// specResolver is a Shape whose specs have counts to pick.
type specResolver interface {
	resolve(s Spec, urls int) Spec
}

// DefaultLock is the lock a run on s uses without --lock.
func (s Spec) DefaultLock() string {
	if locks := s.Info().Locks; len(locks) > 0 {
		return locks[0]
	}
	return ""
}

// LockMisfit says why lock cannot run on s, or "" when it can.
func (s Spec) LockMisfit(lock string) string {
	info := s.Info()
	if lockimpl.IsDef(lock) {
		return s.defMisfit(info, lock)
	}
	if slices.Contains(info.Locks, lock) || info.Drivers && (lockimpl.IsDriver(lock) || lockimpl.IsGo(lock)) {
		return ""
	}
	if lockimpl.IsGo(lock) {
		return fmt.Sprintf("a Go lock cannot run on %s; it runs on %s", s, strings.Join(kindsWithDrivers(), ", "))
	}
	if lockimpl.IsDriver(lock) {
		return fmt.Sprintf("a driver lock cannot run on %s; it runs on %s", s, strings.Join(kindsWithDrivers(), ", "))
	}
	if note := info.LockNotes[lock]; note != "" {
		return fmt.Sprintf("%s cannot run on %s: %s", lock, s, note)
	}
	msg := fmt.Sprintf("%s cannot run on %s, which runs %s", lock, s, strings.Join(info.Locks, ", "))
	if on := KindsWithLock(lock); len(on) > 0 {
		msg += fmt.Sprintf("; %s runs on %s", lock, strings.Join(on, ", "))
	}
	return msg
}

// defMisfit says why the lock definition lock cannot run on s, or "": a
// file asking for a quorum runs on the kinds of independent masters, one
// without on the kinds of one master.
func (s Spec) defMisfit(info KindInfo, lock string) string {
	d, _ := lockimpl.Describe(lock)
	file := lockimpl.DefFile(lock)
	switch {
	case d.Quorum && info.QuorumScriptLocks, !d.Quorum && info.ScriptLocks:
		return ""
	case d.Quorum:
		return fmt.Sprintf("lock definition %s asks for a quorum (quorum: majority), which runs on %s, not on %s; without the quorum field it runs on %s",
			file, strings.Join(kindsWith(func(i KindInfo) bool { return i.QuorumScriptLocks }), ", "), s,
			strings.Join(kindsWith(func(i KindInfo) bool { return i.ScriptLocks }), ", "))
	case info.QuorumScriptLocks:
		return fmt.Sprintf("lock definition %s runs on one master, not on %s; add quorum: majority to run it on %s's masters, or use %s",
			file, s, s, strings.Join(kindsWith(func(i KindInfo) bool { return i.ScriptLocks }), ", "))
	}
	return fmt.Sprintf("a lock definition cannot run on %s; it runs on %s (with quorum: majority, on %s)", s,
		strings.Join(kindsWith(func(i KindInfo) bool { return i.ScriptLocks }), ", "),
		strings.Join(kindsWith(func(i KindInfo) bool { return i.QuorumScriptLocks }), ", "))
}

// kindsWith lists the examples of the kinds whose info has.
func kindsWith(has func(KindInfo) bool) []string {
	var out []string
	for _, sh := range shapes() {
		if info := sh.Info(); has(info) {
			out = append(out, info.Example)
		}
	}
	return out
}

// KindsWithLock lists the examples of the kinds lock runs on.
func KindsWithLock(lock string) []string {
	var out []string
	for _, sh := range shapes() {
		if info := sh.Info(); slices.Contains(info.Locks, lock) {
			out = append(out, info.Example)
		}
	}
	return out
}

// kindsWithDrivers lists the examples of the kinds a driver lock runs on.
func kindsWithDrivers() []string {
	var out []string
	for _, sh := range shapes() {
		if info := sh.Info(); info.Drivers {
			out = append(out, info.Example)
		}
	}
	return out
}

// KindsWithFlag lists the examples of the kinds that take a kind-scoped
// run flag.
func KindsWithFlag(flag string) []string {
	var out []string
	for _, sh := range shapes() {
		if info := sh.Info(); slices.Contains(info.RunFlags, flag) {
			out = append(out, info.Example)
		}
	}
	return out
}

// TakesFlag reports whether s's kind takes a kind-scoped run flag.
func (s Spec) TakesFlag(flag string) bool { return slices.Contains(s.Info().RunFlags, flag) }

// CheckProvider refuses a provider s's kind cannot come from.
func (s Spec) CheckProvider(provider string) error {
	info := s.Info()
	if slices.Contains(info.Providers, provider) {
		return nil
	}
	return badRequest("%s does not run from the %s provider; it runs from %s", s, provider, strings.Join(info.Providers, ", "))
}

// CanonicalFault is the fault lock-cost --with-fault puts on s, and the
// window of its run, for a run of ttl and window.
func (s Spec) CanonicalFault(ttl, window time.Duration) (FaultSpec, time.Duration) {
	return s.Shape().CanonicalFault(ttl, window)
}

// canonical is a kind's canonical fault as --fault reads it, struck at at:
// a kind chooses its fault in the words a user or a recipe would, and
// names no fault kind. A text that does not parse gives a spec of no kind,
// which FitFault refuses (TestEveryKindIsWhole reads each kind's back).
func canonical(at time.Duration, text string) FaultSpec {
	f, err := ParseFault("at=" + at.String() + " " + text)
	if err != nil {
		return FaultSpec{}
	}
	return f
}

// faultFitter is a Shape with fault rules beyond its targets, faults and
// node count (a cluster's shard range).
type faultFitter interface {
	fitFault(f FaultSpec, s Spec) string
}

// FitFault is the one rule that decides, from the spec alone, whether a
// fault fits a topology its provider brings up: the kind must have the
// target, take the fault from that provider (as the fault kind says), have
// the node, and a target of a fault kind's own (holder) takes only that
// kind. Plan asks it before anything starts; a started topology asks it
// again (CheckFault) and adds only what needs live servers.
func FitFault(f FaultSpec, s Spec, provider string) error {
	kind, ok := LookupFault(f.Kind)
	if !ok {
		return fmt.Errorf("unknown fault %q; want %s", f.Kind, strings.Join(faultKindNames(), ", "))
	}
	sh := s.Shape()
	info := kindInfo(sh)
	if !slices.Contains(info.Targets, f.Target) {
		msg := fmt.Sprintf("%s has no %s; it has %s", s, targetForm(f.Target), targetForms(info.Targets))
		if on := kindsWithTarget(f.Target); len(on) > 0 {
			msg += fmt.Sprintf("; %s is on %s", targetForm(f.Target), strings.Join(on, " or "))
		}
		return fmt.Errorf("%s", msg)
	}
	if n := sh.DataNodes(s); f.Target == TargetNode && n > 0 && f.Node >= n {
		return fmt.Errorf("node=%d is out of range: %s has data nodes 0 to %d", f.Node, s, n-1)
	}
	if takes := info.Faults[provider]; !slices.Contains(takes, f.Kind) {
		why := kind.fits(info, provider)
		if why == "" {
			why = notTaken(f.Kind, info, provider)
		}
		msg := fmt.Sprintf("%s on %s: %s", f.Kind, s, why)
		if len(takes) > 0 {
			msg += fmt.Sprintf("; it takes %s", faultKinds(takes))
		}
		return fmt.Errorf("%s", msg)
	}
	if !kind.Info().takesTarget(f.Target) {
		return fmt.Errorf("%s on %s is the target of %s; %s takes %s", targetForm(f.Target), s,
			strings.Join(faultsOn(info.Faults[provider], f.Target), " and "), f.Kind, targetsOf(kind.Info(), info, sh.DataNodes(s)))
	}
	if ff, ok := sh.(faultFitter); ok {
		if msg := ff.fitFault(f, s); msg != "" {
			return fmt.Errorf("%s", msg)
		}
	}
	if sf, ok := kind.(specFitter); ok {
		if msg := sf.fitSpec(f, s); msg != "" {
			return fmt.Errorf("%s", msg)
		}
	}
	return nil
}

// specFitter is a fault kind that refuses some of its specs on a kind by
// more than the target (isolate's ring, on too few members).
type specFitter interface {
	fitSpec(f FaultSpec, s Spec) string
}

// faultsOn names the fault kinds among takes whose own target is t.
func faultsOn(takes []FaultKind, t FaultTarget) []string {
	var out []string
	for _, k := range takes {
		if kind, ok := LookupFault(k); ok && slices.Contains(kind.Info().Targets, t) {
			out = append(out, string(k))
		}
	}
	return out
}

// targetsOf are the forms of the kind's targets a fault of fi takes, a
// single node's as node=0.
func targetsOf(fi FaultInfo, info KindInfo, nodes int) string {
	var out []string
	for _, t := range info.Targets {
		switch {
		case !fi.takesTarget(t):
		case t == TargetNode && nodes == 1:
			out = append(out, "node=0")
		default:
			out = append(out, targetForm(t))
		}
	}
	return strings.Join(out, " or ")
}

func kindsWithTarget(t FaultTarget) []string {
	var out []string
	for _, sh := range shapes() {
		if info := sh.Info(); slices.Contains(info.Targets, t) {
			out = append(out, info.Example)
		}
	}
	return out
}

// targetForm is how a target is written in --fault.
func targetForm(t FaultTarget) string {
	switch t {
	case TargetNode:
		return "node=N"
	case TargetMaster, TargetShard:
		return string(t) + "=S"
	}
	return string(t)
}

func targetForms(ts []FaultTarget) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = targetForm(t)
	}
	return strings.Join(out, ", ")
}

func faultKinds(ks []FaultKind) string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return strings.Join(out, ", ")
}

// redisFlags are the kind-scoped run flags every Redis kind takes, and
// extra.
func redisFlags(extra ...string) []string {
	return append([]string{"redis", "persistence", "pool-size", "pipeline"}, extra...)
}

// singleInstanceLocks are lockbench's own single-instance locks.
func singleInstanceLocks() []string {
	return []string{lockimpl.LockSingle, lockimpl.LockFenced, lockimpl.LockNaive}
}

// unknownShape is the shape of a Spec whose kind is not registered: it
// takes nothing, so every check on it fails with its name.
type unknownShape struct{ kind Kind }

func (u unknownShape) Info() KindInfo { return KindInfo{Kind: u.kind, Example: string(u.kind)} }
func (u unknownShape) Parse(in, _ string, _ bool) (Spec, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(in), ":")
	return Spec{}, unknownKind(in, name, arg, hasArg)
}
func (u unknownShape) Format(Spec) string { return string(u.kind) }
func (u unknownShape) DataNodes(Spec) int { return 0 }
func (u unknownShape) Replicas(Spec) int  { return 0 }
func (u unknownShape) URLs(Spec) int      { return 0 }
func (u unknownShape) CanonicalFault(_, w time.Duration) (FaultSpec, time.Duration) {
	return FaultSpec{}, w
}
func (u unknownShape) up(context.Context, *Topology, string) error {
	return fmt.Errorf("topology kind %q is not registered", u.kind)
}
