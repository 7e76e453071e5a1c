package scenario

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// exposureRule says what a trial put at risk: how many holders were inside
// (or outlived their lease) when its hazard struck. applies is false when
// the variant has no such hazard (a control without the fault); then only
// acquisitions in the window make the trial conclusive.
type exposureRule struct {
	// what names the hazard for the verdict, e.g. "kill primary".
	what string
	// read measures it; measured is false where the result did not record
	// it (then the trial cannot be shown conclusive).
	read func(r *results.Result) (exposed int64, applies, measured bool)
}

// atFault is the exposure of the faults whose spec contains spec: the
// holders inside when each fired that was applied, summed.
func atFault(spec string) *exposureRule {
	return &exposureRule{what: spec, read: func(r *results.Result) (int64, bool, bool) {
		return r.HoldersAtFaults(func(s string) bool { return strings.Contains(s, spec) })
	}}
}

// outlivedLeases is the exposure of a stall: the holders whose work ended
// after their lease's validity. A trial in which no stall outlived a lease
// could not have shown a stale write.
func outlivedLeases() *exposureRule {
	return &exposureRule{what: "a holder outliving its lease", read: func(r *results.Result) (int64, bool, bool) {
		return r.Incidents.ExpiredDuringWork, true, true
	}}
}

// judge says whether a trial could have shown the violation, and if not why.
// A trial that showed it is conclusive whatever its exposure.
func (s Scenario) judge(t *Trial) {
	r := t.Result
	t.Conclusive, t.Exposure = true, -1
	unmeasured := false
	if s.exposure != nil {
		if n, applies, measured := s.exposure.read(r); applies {
			t.Exposure, unmeasured = n, !measured
		}
	}
	switch {
	case t.Violated:
	case r.Contention.Acquired == 0:
		t.Conclusive, t.Why = false, "no acquisition in its window"
	case unmeasured:
		t.Conclusive, t.Why, t.Exposure = false, fmt.Sprintf("exposure at %s not recorded", s.exposure.what), -1
	case t.Exposure == 0:
		t.Conclusive, t.Why = false, fmt.Sprintf("nobody at risk at %s", s.exposure.what)
	}
}

// grantedAfter reports whether r acquired anything after the first applied
// fault of its exposure rule fired (true when there is none to go by).
func (s Scenario) grantedAfter(r *results.Result) bool {
	if s.exposure == nil {
		return true
	}
	at := -1.0
	for _, f := range r.Faults {
		if strings.Contains(f.Spec, s.exposure.what) && f.Error == "" && (at < 0 || f.AtS < at) {
			at = f.AtS
		}
	}
	if at < 0 {
		return true
	}
	for _, p := range r.Series {
		if p.Acquired > 0 && p.LastAcquiredS > at {
			return true
		}
	}
	return false
}
