package renewal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results/suggest"
)

// Select picks the cases and locks named in comma lists ("" or "all":
// every one), in matrix order; own are the program's Go locks, which
// --locks may name as go:NAME. A name not known is bad input naming the
// flag and the accepted names.
func Select(cases, locks string, own lockimpl.GoLocks) ([]Case, []Lock, error) {
	cs, err := pick("cases", cases, All(), func(c Case) string { return c.Name })
	if err != nil {
		return nil, nil, err
	}
	all, err := withDrivers(locks, own)
	if err != nil {
		return nil, nil, err
	}
	ls, err := pick("locks", locks, all, func(l Lock) string { return l.Name })
	if err != nil {
		return nil, nil, err
	}
	return cs, ls, nil
}

// withDrivers is Locks() and, after them, a column for each driver lock
// (exec:CMD) named in spec: on single, at Redis's TTL, fenced when its
// hello says it fences (read from one process, started and stopped).
func withDrivers(spec string, own lockimpl.GoLocks) ([]Lock, error) {
	all := Locks()
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		if lockimpl.IsGo(s) {
			l, err := goColumn(s, own)
			if err != nil {
				return nil, err
			}
			all = append(all, l)
			continue
		}
		if !lockimpl.IsDriver(s) {
			continue
		}
		if _, err := lockimpl.ParseDriverCommand(s); err != nil {
			return nil, &plan.InputError{Flag: "locks", Msg: strings.TrimPrefix(err.Error(), "lock ")}
		}
		caps, err := lockimpl.ProbeDriver(context.Background(), s)
		if err != nil {
			return nil, err
		}
		l := Lock{Name: s, Topology: "single", Nodes: 1, TTL: 300 * time.Millisecond, Fencing: caps.Fences}
		if !caps.Renews {
			l.NoRenewal = "its driver's hello says renews: false: there is no renewal to fail"
		}
		all = append(all, l)
	}
	return all, nil
}

// goColumn is the column of a Go lock the program registered: on single,
// at Redis's TTL, fenced and renewing as its descriptor says.
func goColumn(name string, own lockimpl.GoLocks) (Lock, error) {
	g, ok := own.Find(name)
	if !ok {
		registered := "none is registered in this program"
		if len(own) > 0 {
			registered = "this program registers " + strings.Join(own.Names(), ", ")
		}
		return Lock{}, &plan.InputError{Flag: "locks", Msg: fmt.Sprintf("%s: not a registered Go lock; %s", name, registered)}
	}
	l := Lock{Name: name, Topology: "single", Nodes: 1, TTL: 300 * time.Millisecond, Fencing: g.Descriptor.Fencing}
	if !g.Descriptor.Renewable {
		l.NoRenewal = "it is registered not renewable: there is no renewal to fail"
	}
	return l, nil
}

// pick keeps the items named in spec, in their own order.
func pick[T any](flag, spec string, all []T, name func(T) string) ([]T, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "all" {
		return all, nil
	}
	var names []string
	for _, it := range all {
		names = append(names, name(it))
	}
	want := map[string]bool{}
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		found := false
		for _, n := range names {
			found = found || n == s
		}
		if !found {
			// The nearest name, or the list cut to fit a line (120 columns).
			return nil, &plan.InputError{Flag: flag, Msg: fmt.Sprintf("%q: unknown; %s; or all", s, suggest.Unknown(s, names))}
		}
		want[s] = true
	}
	var out []T
	for _, it := range all {
		if want[name(it)] {
			out = append(out, it)
		}
	}
	return out, nil
}
