package plan

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// faultLog collects a run's fault events, one entry per fault however many
// reports it sends (applied, then undone).
type faultLog struct {
	mu  sync.Mutex
	evs []results.FaultEvent
	// applied marks faults whose application was logged, so a later report
	// (a cluster promotion) is not logged as applied again.
	applied map[int]bool
}

func newFaultLog(faults []compose.FaultSpec) *faultLog {
	l := &faultLog{evs: make([]results.FaultEvent, len(faults)), applied: map[int]bool{}}
	for i, f := range faults {
		l.evs[i].Spec = f.String()
	}
	return l
}

// record logs each report of a fault; exposure, when not nil, is read as a
// fault is applied (what it could break), before anything else is done.
func (l *faultLog) record(env Env, exposure func() (bench.Exposure, bool)) func(compose.FaultEvent) {
	return func(ev compose.FaultEvent) {
		l.mu.Lock()
		defer l.mu.Unlock()
		e := &l.evs[ev.Index]
		if exposure != nil && ev.Err == nil && ev.End == 0 && !l.applied[ev.Index] {
			if x, ok := exposure(); ok {
				e.Exposure = &results.FaultExposure{Inside: x.Inside, ValidLeases: x.ValidLeases, Keys: x.Keys}
			}
		}
		e.AtS = ev.At.Seconds()
		e.Node = ev.Node
		if ev.End > 0 {
			e.EndS = ev.End.Seconds()
		}
		if ev.Promoted != nil {
			e.Promoted, e.PromotedAfterS = ev.Promoted.Node, ev.Promoted.After.Seconds()
		}
		switch {
		case ev.Err != nil:
			e.Error = ev.Err.Error()
			env.logf("fault %s: %v", ev.Spec, ev.Err)
		case ev.Done && ev.Promoted != nil:
			if ev.End > 0 {
				env.logf("fault %s undone at %.2fs", ev.Spec, ev.End.Seconds())
			}
			env.logf("fault %s: replica %s promoted %.2fs after the fault", ev.Spec, ev.Promoted.Node, ev.Promoted.After.Seconds())
		case ev.Done && ev.End == 0 && l.applied[ev.Index]:
			env.logf("fault %s: no replica promoted", ev.Spec)
		case ev.End == 0:
			l.applied[ev.Index] = true
			if x := e.Exposure; x != nil {
				env.logf("fault %s applied at %.2fs to %s: %d holder(s) inside, %d valid lease(s)", ev.Spec, ev.At.Seconds(), ev.Node,
					x.Inside, x.ValidLeases)
			} else {
				env.logf("fault %s applied at %.2fs to %s", ev.Spec, ev.At.Seconds(), ev.Node)
			}
		default:
			env.logf("fault %s undone at %.2fs", ev.Spec, ev.End.Seconds())
		}
	}
}

// downReason says why a node that a fault took down could not be measured,
// naming the fault.
func (l *faultLog) downReason(addr string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.evs {
		if strings.Contains(e.Node, "("+addr+")") {
			return fmt.Sprintf("%s: down after fault %q at %.2fs", e.Node, e.Spec, e.AtS)
		}
	}
	return addr + ": down"
}

func (l *faultLog) events() []results.FaultEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.evs) == 0 {
		return nil
	}
	return append([]results.FaultEvent(nil), l.evs...)
}

// markFaults names each applied fault in the series point of the second it
// fired in, so per-second plots show it.
func markFaults(r *results.Result) {
	for _, f := range r.Faults {
		if f.Error != "" && f.AtS == 0 {
			continue
		}
		i := int(math.Floor(f.AtS))
		if i >= 0 && i < len(r.Series) {
			r.Series[i].Faults = append(r.Series[i].Faults, f.Spec)
		}
	}
}
