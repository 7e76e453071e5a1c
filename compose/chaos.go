package compose

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results/suggest"
)

// ChaosChoices lists the faults a chaos schedule may draw on s from
// provider: each registered kind that fits s (FitFault) on each target s
// has (every node=N, every master=S and shard=S, and its roles), in
// registry order. A kind that takes for= has a placeholder for= of one
// second and no amount: the schedule draws both (DrawAmount). kinds, when
// not empty, are the only kinds drawn, and each must fit; without it the
// kinds that leave the topology worse until the run ends (a node killed
// stays down) are left out.
func ChaosChoices(s Spec, provider string, kinds []FaultKind) ([]FaultSpec, error) {
	for _, k := range kinds {
		if _, ok := LookupFault(k); !ok {
			return nil, fmt.Errorf("unknown fault kind %q; %s", k, suggest.Unknown(string(k), faultKindNames()))
		}
	}
	var out []FaultSpec
	for _, kind := range faults() {
		info := kind.Info()
		asked := slices.Contains(kinds, info.Kind)
		if len(kinds) > 0 && !asked || len(kinds) == 0 && info.Lasting {
			continue
		}
		var why error
		for _, f := range chaosTargets(s, info) {
			if err := FitFault(f, s, provider); err != nil {
				why = err
				continue
			}
			out = append(out, f)
		}
		if asked && !slices.ContainsFunc(out, func(f FaultSpec) bool { return f.Kind == info.Kind }) {
			if why == nil {
				why = fmt.Errorf("%s has no target on %s", info.Kind, s)
			}
			return nil, fmt.Errorf("fault kind %s does not fit %s: %w", info.Kind, s, why)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fault kind fits %s from the %s provider", s, provider)
	}
	return out, nil
}

// chaosTargets are the specs of kind info on every target s has.
func chaosTargets(s Spec, info FaultInfo) []FaultSpec {
	base := FaultSpec{Kind: info.Kind}
	if info.For != forNone {
		base.For = time.Second
	}
	var out []FaultSpec
	for _, t := range s.Info().Targets {
		switch t {
		case TargetNode:
			for n := range s.Shape().DataNodes(s) {
				f := base
				f.Target, f.Node = t, n
				out = append(out, f)
			}
		case TargetMaster, TargetShard:
			for sh := range s.Masters {
				f := base
				f.Target, f.Shard = t, sh
				out = append(out, f)
			}
		default:
			f := base
			f.Target = t
			out = append(out, f)
		}
	}
	return out
}

// DrawAmount sets f's amount (a latency's delay, a clock jump, a clock
// speed) drawn from r by its kind; a kind without one leaves f as it is.
func DrawAmount(f *FaultSpec, r *rand.Rand) {
	if k, ok := LookupFault(f.Kind); ok {
		k.drawAmount(f, r)
	}
}

// TakesFor reports whether f's kind lasts a for= and is then undone.
func (f FaultSpec) TakesFor() bool {
	k, ok := LookupFault(f.Kind)
	return ok && k.Info().For != forNone
}

// ParseFaultKinds reads a comma-separated list of fault kind names (chaos's
// --kinds).
func ParseFaultKinds(s string) ([]FaultKind, error) {
	var out []FaultKind
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if _, ok := LookupFault(FaultKind(w)); !ok {
			return nil, fmt.Errorf("%q: unknown fault kind; %s", w, suggest.Unknown(w, faultKindNames()))
		}
		if slices.Contains(out, FaultKind(w)) {
			return nil, fmt.Errorf("%q given twice", w)
		}
		out = append(out, FaultKind(w))
	}
	return out, nil
}
