package compose

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrFaultSkipped is the error of a scheduled fault whose time never came
// because the schedule was stopped first.
var ErrFaultSkipped = errors.New("not applied: the schedule stopped before its time")

// CheckFault refuses a fault the started topology cannot take: first the
// rule plan applies before start-up (FitFault: the kind's targets, its
// faults from this provider, its node count), then what only live servers
// tell: a node index past the nodes there are, a node that is neither a
// local process nor a container, a clock fault without the clock shim,
// latency or partition without proxies, a cluster shard that is not there.
func (t *Topology) CheckFault(f FaultSpec) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("fault %q on topology %s: %s", f.String(), t.Spec, fmt.Sprintf(format, args...))
	}
	if err := FitFault(f, t.Spec, t.Provider); err != nil {
		return bad("%v", err)
	}
	candidates, msg := t.faultCandidates(f)
	if msg != "" {
		return bad("%s", msg)
	}
	kind, _ := LookupFault(f.Kind)
	for _, n := range candidates {
		if msg := kind.misfit(t, n); msg != "" {
			return bad("%s", msg)
		}
	}
	return nil
}

// faultCandidates are the nodes the fault may hit: one by index, or every
// node that can hold the role, since a failover can move it before the
// fault applies.
func (t *Topology) faultCandidates(f FaultSpec) ([]*Node, string) {
	data := t.DataNodes()
	switch f.Target {
	case TargetMaster, TargetShard:
		return t.clusterCandidates(f)
	case TargetNode:
		if f.Node < 0 || f.Node >= len(data) {
			return nil, fmt.Sprintf("node=%d is out of range; data nodes are 0..%d", f.Node, len(data)-1)
		}
		return data[f.Node : f.Node+1], ""
	case TargetMinority, TargetRing:
		return data, ""
	case TargetPrimary, TargetReplica:
		if len(data) > 1 && len(t.sentinels) == 0 {
			return nil, fmt.Sprintf("it has no %s (its masters are peers); use node=N", f.Target)
		}
		return data, ""
	}
	if lacks, owned := ownTarget(f.Target); owned {
		if _, ok := t.Spec.Backend().Info().Targets[f.Target]; !ok {
			return nil, lacks
		}
		return data, ""
	}
	return nil, fmt.Sprintf("unknown target %q", f.Target)
}

// Apply applies the fault now and returns its undo, which is nil for faults
// without for= (kill, a clock-jump that stays). The caller runs the undo
// when for= has passed (Schedule does both); a restart's undo starts the
// node again, due after UpOptions.RestartDelay. Primary and replica targets
// are resolved through the sentinels at this moment.
func (t *Topology) Apply(ctx context.Context, f FaultSpec) (undo func() error, err error) {
	_, undo, _, _, err = t.applyTo(ctx, f)
	return undo, err
}

// applyTo is Apply that also names the node the fault hit and, for a fault
// that can fail a cluster shard over, the replicas that may be promoted.
// applied is when the fault itself went out, after its target was resolved:
// a promotion is timed from there.
func (t *Topology) applyTo(ctx context.Context, f FaultSpec) (n *Node, undo func() error, watch []*Node, applied time.Time, err error) {
	if err := t.CheckFault(f); err != nil {
		return nil, nil, nil, applied, err
	}
	n, err = t.target(ctx, f)
	if err != nil {
		return nil, nil, nil, applied, fmt.Errorf("fault %q: %w", f.String(), err)
	}
	watch = t.promotionWatch(ctx, f, n)
	applied = time.Now()
	kind, _ := LookupFault(f.Kind)
	undo, err = kind.apply(ctx, t, f, n)
	if err != nil {
		return n, nil, nil, applied, fmt.Errorf("fault %q on %s (%s): %w", f.String(), n.Name, n.Addr, err)
	}
	if t.undoAfter(f) <= 0 {
		// A fault with no duration has nothing to undo, even if its
		// mechanism could be reversed (a clock-jump without for= stays).
		return n, nil, watch, applied, nil
	}
	return n, undo, watch, applied, nil
}

// undoAfter is how long after it was applied a fault is undone: its for=,
// or for a restart the restart delay (a restart always comes back).
func (t *Topology) undoAfter(f FaultSpec) time.Duration {
	kind, _ := LookupFault(f.Kind)
	return kind.undoAfter(f, t.opts.RestartDelay)
}

func (t *Topology) target(ctx context.Context, f FaultSpec) (*Node, error) {
	switch f.Target {
	case TargetPrimary:
		return t.CurrentPrimary(ctx)
	case TargetReplica:
		return t.CurrentReplica(ctx)
	case TargetMaster:
		return t.ShardMaster(ctx, f.Shard)
	case TargetShard:
		return t.ShardReplica(ctx, f.Shard)
	case TargetMinority:
		// The minority cut off is the leader's side: the node named is its
		// leader when the cut began.
		return t.Spec.Backend().target(ctx, t, FaultSpec{Kind: f.Kind, Target: TargetLeader})
	case TargetRing:
		return t.DataNodes()[0], nil
	}
	if _, owned := ownTarget(f.Target); owned {
		return t.Spec.Backend().target(ctx, t, f)
	}
	return t.DataNodes()[f.Node], nil
}

// Down lists the data nodes lockbench started that are not running now
// (killed by a fault, say), by address.
func (t *Topology) Down() []string {
	var out []string
	for _, n := range t.DataNodes() {
		if n.Server != nil && n.Server.PID() == 0 || n.ctr != nil && n.ctr.isKilled() || n.payload != nil && n.payload.down() {
			out = append(out, n.Addr)
		}
	}
	return out
}

// adminDo runs one control command on a fresh short-lived connection.
func adminDo(ctx context.Context, o *redis.Options, args ...any) error {
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Do(ctx, args...).Err()
}

// FaultEvent reports a scheduled fault. Each fault reports when it is applied
// (End zero, Done false when an undo is pending) and, if it has for=, again
// when it is undone (End set); the last report of a fault has Done set.
type FaultEvent struct {
	// Index is the fault's position in the slice given to Schedule.
	Index int
	// Spec is the fault in --fault form.
	Spec string
	// Node names the node the fault hit, as "name (host:port)"; empty when
	// it was not applied.
	Node string
	// At is when it was actually applied, from the schedule's start.
	At time.Duration
	// End is when it was actually undone, from the schedule's start; zero
	// when it has not been (yet).
	End time.Duration
	// Err is why applying or undoing failed, or ErrFaultSkipped.
	Err error
	// Done marks the fault's last report.
	Done bool
	// Promoted is the cluster replica that named itself master after a
	// fault on its shard's master (or a failover), as seen in its own
	// CLUSTER NODES view; nil when none was seen.
	Promoted *Promotion
}

// Schedule runs the faults in the background, each at start+At, and undoes
// each after its For (a restart: brings the node back after the restart
// delay). log, if not nil, receives the events one at a time.
// The returned stop cancels faults not yet applied (reported with
// ErrFaultSkipped), undoes those in effect at once, and waits until all is
// finished; call it before Close. Cancelling ctx does the same as stop
// without the wait. To let every fault run its course, wait until the last
// At+For has passed before calling stop.
func (t *Topology) Schedule(ctx context.Context, start time.Time, faults []FaultSpec, log func(FaultEvent)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var logMu sync.Mutex
	emit := func(ev FaultEvent) {
		if log != nil {
			logMu.Lock()
			defer logMu.Unlock()
			log(ev)
		}
	}
	var wg sync.WaitGroup
	for i, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.runFault(ctx, start, i, f, emit)
		}()
	}
	var once sync.Once
	return func() {
		once.Do(cancel)
		wg.Wait()
	}
}

func (t *Topology) runFault(ctx context.Context, start time.Time, i int, f FaultSpec, emit func(FaultEvent)) {
	ev := FaultEvent{Index: i, Spec: f.String()}
	if err := sleepCtx(ctx, time.Until(start.Add(f.At))); err != nil {
		ev.Err, ev.Done = ErrFaultSkipped, true
		emit(ev)
		return
	}
	n, undo, watch, applied, err := t.applyTo(ctx, f)
	ev.At = time.Since(start)
	if n != nil {
		ev.Node = n.Name + " (" + n.Addr + ")"
	}
	var promoted <-chan *Promotion
	if err == nil && len(watch) > 0 {
		// Promotion takes about a node timeout and a second more; a fault
		// that ends first may still cause one shortly after.
		promoted = t.watchPromotion(ctx, watch, applied, t.undoAfter(f)+4*ClusterNodeTimeout+5*time.Second)
	}
	if err != nil || (undo == nil && promoted == nil) {
		ev.Err, ev.Done = err, true
		emit(ev)
		return
	}
	emit(ev)
	if undo != nil {
		_ = sleepCtx(ctx, time.Until(start.Add(ev.At+t.undoAfter(f))))
		if err := undo(); err != nil {
			ev.Err = fmt.Errorf("undo %q: %w", ev.Spec, err)
		}
		ev.End = time.Since(start)
	}
	if promoted != nil {
		ev.Promoted = <-promoted
	}
	ev.Done = true
	emit(ev)
}
