package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/workloads"
)

// Scope says where a run flag has an effect. A flag set away from its
// default outside its scope would be ignored, and is refused by one rule
// (Misfit) rather than a list of cases; help and the README's flag tables
// say the same from the same fields.
type Scope struct {
	// Locks are the locks it tunes; nil means every lock.
	Locks []string
	// ByKind makes it apply only to the topology kinds whose registry
	// entry (compose.KindInfo.RunFlags) lists it.
	ByKind bool
	// Providers are where the servers must come from for it to apply
	// (compose.ProviderLocal, ProviderDocker, ProviderExternal for --redis
	// or --etcd URLs); nil means any.
	Providers []string
	// Needs is another flag's setting without which it has no effect.
	Needs *Need
	// Peer is, for a lock flag, the redsync --peer-option with the same
	// effect, named when the flag is refused on redsync.
	Peer string
}

// Need is a condition on the other flags that a flag needs.
type Need struct {
	// Flag is the other flag.
	Flag string
	// Text says the condition as help and refusals print it.
	Text string
	// Holds checks it on resolved values.
	Holds func(v Values) bool
}

// CommandUse is how one command takes a run flag.
type CommandUse struct {
	// Refused says why the command refuses the flag (it sets it itself);
	// help leaves the flag out, unless Unless says when it is taken.
	Refused string
	// Unless is the condition on the given flags under which the command
	// takes the flag after all (capacity takes -c with --rate); the flag
	// stays in help, and CheckCommandRefusals refuses it without it.
	Unless *Need
	// Own marks a flag the command replaces with one of its own of that
	// name; the run flag is left out.
	Own bool
	// Default is the command's own default, under a preset's value.
	Default string
	// Usage replaces the flag's help for the command.
	Usage string
}

// runScope is what a run's flags apply to: its lock, topology and provider.
type runScope struct {
	lock     string
	topo     compose.Spec
	provider string
}

// providerOf is where a run's servers come from: external with URLs, else
// the --provider value.
func providerOf(v Values, topo compose.Spec) string {
	if len(v[topo.Info().URLFlag]) > 0 {
		return compose.ProviderExternal
	}
	p, err := compose.ParseProvider(v.Get("provider"))
	if err != nil {
		return compose.ProviderLocal
	}
	return p
}

// Misfit says why f would have no effect on the run, or "" when it applies.
func (f Flag) Misfit(rs runScope, v Values) string {
	sc := f.Scope
	switch {
	case sc.Locks != nil && !slices.Contains(sc.Locks, rs.lock):
		msg := fmt.Sprintf("applies to --lock %s, and --lock %s would ignore it", strings.Join(sc.Locks, ", "), rs.lock)
		switch {
		case rs.lock == lockimpl.LockRedsync && sc.Peer != "":
			msg += "; redsync takes --peer-option " + sc.Peer
		case lockimpl.IsPeer(rs.lock):
			msg += "; it takes --peer-option " + lockimpl.PeerOptionsHelp(rs.lock)
		}
		return msg
	case sc.ByKind && !rs.topo.TakesFlag(f.Name):
		return fmt.Sprintf("applies to --topology %s, and %s would ignore it", strings.Join(compose.KindsWithFlag(f.Name), ", "), rs.topo)
	case sc.Providers != nil && !slices.Contains(sc.Providers, rs.provider):
		if rs.provider == compose.ProviderExternal {
			return fmt.Sprintf("applies to servers lockbench starts (--provider %s), and with --%s URLs it reaches servers it never configured", strings.Join(sc.Providers, " or "), rs.topo.Info().URLFlag)
		}
		return fmt.Sprintf("applies with --provider %s, and --provider %s would ignore it", strings.Join(sc.Providers, " or "), rs.provider)
	case sc.Needs != nil && !sc.Needs.Holds(v):
		return fmt.Sprintf("needs %s; without it the value would be ignored", sc.Needs.Text)
	}
	return ""
}

// setByUser reports whether name's resolved value is one the user chose:
// away from its default and from the preset's value.
func setByUser(f Flag, v Values) bool {
	vals := v[f.Name]
	if len(vals) == 0 || len(vals) == 1 && vals[0] == f.Default {
		return false
	}
	if p, err := workloads.LookupPreset(v.Get("workload")); err == nil {
		if pv, ok := p.Flags[f.Name]; ok && len(vals) == 1 && vals[0] == pv {
			return false
		}
	}
	return true
}

// checkScope refuses the first flag set out of its scope.
func (p *parser) checkScope(rs runScope) {
	for _, f := range runFlags {
		if p.err != nil {
			return
		}
		if !setByUser(f, p.v) {
			continue
		}
		if why := f.Misfit(rs, p.v); why != "" {
			p.fail(f.Name, "%s", why)
		}
	}
}

// AppliesTo reports whether the run flag name has an effect with lock on
// topology (given as --topology), from provider: what lock-cost asks to give
// each compared lock only the flags it takes. Conditions on other flags are
// left to the run's own check.
func AppliesTo(name, lock, topology string, external bool) bool {
	f, ok := lookupFlag(name)
	if !ok {
		return false
	}
	topo, err := compose.ParseSpec(topology)
	if err != nil {
		return false
	}
	rs := runScope{lock: lock, topo: topo, provider: compose.ProviderLocal}
	if external {
		rs.provider = compose.ProviderExternal
	}
	f.Scope.Needs = nil
	return f.Misfit(rs, Values{}) == ""
}

// Scoped reports whether the run flag name applies only to some locks,
// topologies or providers.
func Scoped(name string) bool {
	f, _ := lookupFlag(name)
	return f.Scope.Locks != nil || f.Scope.ByKind || f.Scope.Providers != nil
}

// positive is a Need.Holds for a number flag above 0.
// driverNeed is the condition of the driver lock's flags: --lock exec:CMD.
func driverNeed() *Need {
	return &Need{Flag: "lock", Text: "--lock exec:'CMD ARGS' (a driver lock)", Holds: func(v Values) bool { return lockimpl.IsDriver(v.Get("lock")) }}
}

func positive(flag string) func(Values) bool {
	return func(v Values) bool {
		n, err := strconv.ParseFloat(v.Get(flag), 64)
		return err == nil && n > 0
	}
}

// given is a Need.Holds for a flag given any value.
func given(flag string) func(Values) bool {
	return func(v Values) bool { return v.Has(flag) }
}

// renewing holds when --renew-every asks for renewal.
func renewing(v Values) bool {
	switch strings.ToLower(strings.TrimSpace(v.Get("renew-every"))) {
	case "", "0", "off":
		return false
	}
	return true
}

// closedLoop holds when --rate is 0: workers loop instead of requests
// arriving.
func closedLoop(v Values) bool {
	return v.Get("rate") == "" || v.Get("rate") == closedLoopRate
}

// closedLoopRate is --rate's default: no arrival schedule.
const closedLoopRate = "0"

// faultNeed is the need of a run flag that applies only with the fault
// kinds that say they take it (restart's --restart-delay): some --fault of
// such a kind.
func faultNeed(flag string) *Need {
	return &Need{Flag: "fault", Text: "a " + strings.Join(compose.FaultsWithFlag(flag), " or ") + " --fault", Holds: func(v Values) bool {
		for _, s := range v["fault"] {
			if f, err := compose.ParseFault(s); err == nil && f.TakesFlag(flag) {
				return true
			}
		}
		return false
	}}
}

// ScopeText says in words where a flag applies, for help and the README:
// "" for a flag that applies everywhere.
func (f Flag) ScopeText() string {
	var parts []string
	sc := f.Scope
	if sc.Locks != nil {
		parts = append(parts, "--lock "+strings.Join(sc.Locks, ", "))
	}
	if sc.ByKind {
		parts = append(parts, "--topology "+strings.Join(compose.KindsWithFlag(f.Name), ", "))
	}
	if sc.Providers != nil {
		parts = append(parts, "--provider "+strings.Join(sc.Providers, ", "))
	}
	if sc.Needs != nil {
		parts = append(parts, "needs "+sc.Needs.Text)
	}
	return strings.Join(parts, "; ")
}

// ScopeOf says where the run flag name applies (Flag.ScopeText).
func ScopeOf(name string) string {
	f, _ := lookupFlag(name)
	return "it applies to " + f.ScopeText()
}

// CommandFlags are the run flags command takes, with its own defaults and
// help where it has them, in help order; refused maps the flags it sets
// itself to why. A command with a flag of its own by a run flag's name
// (lock-cost's --lock) gets neither.
func CommandFlags(command string) (takes []Flag, refused map[string]string) {
	refused = map[string]string{}
	for _, f := range runFlags {
		use := f.Commands[command]
		switch {
		case use.Own:
			continue
		case use.Refused != "" && use.Unless == nil:
			refused[f.Name] = use.Refused
			continue
		}
		if use.Default != "" {
			f.Default = use.Default
		}
		if use.Usage != "" {
			f.Usage = use.Usage
		}
		takes = append(takes, f)
	}
	return takes, refused
}

// CheckCommandRefusals refuses a flag given to command where the flag
// table says the command refuses it without another flag's setting
// (CommandUse.Unless).
func CheckCommandRefusals(command string, given Values) error {
	for _, f := range runFlags {
		use := f.Commands[command]
		if use.Unless != nil && given.Has(f.Name) && !use.Unless.Holds(given) {
			return badInput(f.Name, "%s %s", command, use.Refused)
		}
	}
	return nil
}

// WithCommandDefaults sets command's own defaults (tune-ttl's workload,
// capacity's shorter window) under the given values and under the
// preset's: a flag the user gave or the preset sets keeps that value, and
// a staged --rate keeps its own window.
func WithCommandDefaults(command string, given Values) (Values, error) {
	v := given.Clone()
	if d := defaultFor(command, "workload"); d != "" && !v.Has("workload") {
		v.Set("workload", d)
	}
	var preset map[string]string
	if name := v.Get("workload"); name != "" {
		p, err := workloads.LookupPreset(name)
		if err != nil {
			return nil, badInput("workload", "%v", err)
		}
		preset = p.Flags
	}
	for _, f := range runFlags {
		d := defaultFor(command, f.Name)
		if _, inPreset := preset[f.Name]; d == "" || v.Has(f.Name) || inPreset {
			continue
		}
		if f.Name == "duration" && StagedRate(v) {
			continue // a staged rate's stages are the window
		}
		v.Set(f.Name, d)
	}
	return v, nil
}

// defaultFor is command's own default for the flag name, or "".
func defaultFor(command, name string) string {
	f, _ := lookupFlag(name)
	return f.Commands[command].Default
}
