package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedlockOptions tunes Redlock.
type RedlockOptions struct {
	// NodeTimeout bounds each master's reply; it must be much smaller than the TTL
	// so that a slow master cannot eat the lease's validity. 0 picks the default:
	// 50 ms or TTL/100, whichever is smaller.
	NodeTimeout time.Duration
	// DriftFactor is the share of the TTL allowed for clock drift (default 0.01).
	DriftFactor float64
	// FailFast returns as soon as quorum is reached or can no longer be reached.
	FailFast bool
}

// DefaultDriftFactor is Redlock's customary clock-drift allowance.
const DefaultDriftFactor = 0.01

// Quorum is the number of masters out of n that must agree: n/2+1.
func Quorum(n int) int { return n/2 + 1 }

// Validity is what remains of a lease after elapsed time and the clock-drift
// allowance: ttl − elapsed − (ttl × driftFactor + 2 ms). Not positive means invalid.
func Validity(ttl, elapsed time.Duration, driftFactor float64) time.Duration {
	drift := time.Duration(float64(ttl)*driftFactor) + 2*time.Millisecond
	return ttl - elapsed - drift
}

// NodeTimeoutFor returns the per-node timeout to use for ttl when none is set.
func NodeTimeoutFor(ttl time.Duration) time.Duration {
	return min(50*time.Millisecond, ttl/100)
}

// NodeCounts are one master's outcome counters.
type NodeCounts struct {
	// Acquired counts SETs that took the key on this master.
	Acquired int64 `json:"acquired"`
	// Contended counts SETs that found another owner.
	Contended int64 `json:"contended"`
	// Errors counts SETs that failed for other reasons than a timeout.
	Errors int64 `json:"errors"`
	// Timeouts counts SETs that did not answer within the node timeout.
	Timeouts int64 `json:"timeouts"`
}

type nodeCounters struct{ acquired, contended, errors, timeouts atomic.Int64 }

// Redlock acquires a key on a quorum of N independent masters in parallel.
type Redlock struct {
	nodes    []redis.Cmdable
	opts     RedlockOptions
	scripts  scripts
	counters []nodeCounters
	// cleanup tracks replies still pending after a fail-fast return.
	cleanup sync.WaitGroup
	pool    *goPool
	// inflight maps a lease token to the stragglers of its fail-fast acquire.
	inflight sync.Map
	// settlers delete keys again on masters that did not answer, one per
	// master, so a paused master gets one probe at a time, not one per key.
	settlers []*settler
	// raw reaches the masters by hand-spoken RESP for fan-outs that wait for
	// every master (see rawFanOut); nil with fail-fast, or when a master is
	// not a plain go-redis client.
	raw []*rawNode
	// rawCalls counts the fan-outs that went the raw way.
	rawCalls atomic.Int64
	// sent, when set, counts the commands the raw fan-out writes by hand,
	// which no go-redis hook sees.
	sent *SentCounter
}

// NewRedlock returns Redlock over the given masters.
func NewRedlock(nodes []redis.Cmdable, opts RedlockOptions) (*Redlock, error) {
	if len(nodes) == 0 {
		return nil, errors.New("redlock needs at least one master")
	}
	if opts.DriftFactor == 0 {
		opts.DriftFactor = DefaultDriftFactor
	}
	if opts.DriftFactor < 0 || opts.DriftFactor >= 1 {
		return nil, fmt.Errorf("redlock drift factor %v: want 0 < f < 1", opts.DriftFactor)
	}
	r := &Redlock{nodes: nodes, opts: opts, scripts: newScripts(), counters: make([]nodeCounters, len(nodes)), pool: newGoPool(4096)}
	for i := range nodes {
		r.settlers = append(r.settlers, &settler{r: r, node: i})
	}
	if !opts.FailFast && len(nodes) <= MaxRawMasters {
		r.raw = rawNodes(nodes)
	}
	return r, nil
}

// Close waits for the lock's background work (settling, late replies,
// connections being dialled) and closes the connections it keeps of its
// own; the clients it was given stay open.
func (r *Redlock) Close() error {
	r.Wait()
	for _, n := range r.raw {
		n.close()
	}
	return nil
}

// Info describes the lock.
func (r *Redlock) Info() Info { return Info{Name: LockRedlock, Nodes: len(r.nodes)} }

// NodeCounts returns each master's outcome counters, in node order.
func (r *Redlock) NodeCounts() []NodeCounts {
	out := make([]NodeCounts, len(r.counters))
	for i := range r.counters {
		c := &r.counters[i]
		out[i] = NodeCounts{Acquired: c.acquired.Load(), Contended: c.contended.Load(), Errors: c.errors.Load(), Timeouts: c.timeouts.Load()}
	}
	return out
}

// Wait blocks until releases started after fail-fast returns are done.
func (r *Redlock) Wait() { r.cleanup.Wait() }

func (r *Redlock) nodeTimeout(ttl time.Duration) time.Duration {
	if r.opts.NodeTimeout > 0 {
		return r.opts.NodeTimeout
	}
	return NodeTimeoutFor(ttl)
}

// releaseTimeout is never shorter than 500 ms: a release is not racing the
// lease's validity, and giving up early would leave keys behind. (The default
// node timeout is at most 50 ms, so only a set --node-timeout can raise it.)
func (r *Redlock) releaseTimeout() time.Duration {
	return max(r.opts.NodeTimeout, 500*time.Millisecond)
}

// nodeReply is one master's answer to a fanned-out command.
type nodeReply struct {
	node int
	out  Outcome
	err  error
}

// tally counts replies against the quorum.
type tally struct {
	n, quorum              int
	ok, taken, lost, fails int
	firstErr               error
	// unsure lists the masters whose command failed but may still be carried
	// out: it was sent, and no answer came back.
	unsure []int
}

func (t *tally) add(r nodeReply) {
	switch r.out {
	case OK:
		t.ok++
	case Contended, Taken:
		t.taken++
	case Lost:
		t.lost++
	default:
		t.fails++
		if t.firstErr == nil {
			t.firstErr = r.err
		}
		if maybeDelivered(r.err) {
			t.unsure = append(t.unsure, r.node)
		}
	}
}

// refused reports whether the masters that answered deny the quorum whatever
// the failed or silent ones would have said: a decided loss or contention,
// as opposed to one that failures made.
func (t *tally) refused() bool { return t.taken+t.lost > t.n-t.quorum }

func (t *tally) answered() int { return t.ok + t.taken + t.lost + t.fails }

// decided reports whether the quorum question is settled either way.
func (t *tally) decided() bool {
	return t.ok >= t.quorum || t.n-t.answered()+t.ok < t.quorum
}

// waitRule says how long fanOut waits for the masters' replies.
type waitRule uint8

const (
	// waitAll waits for every master, up to the call's timeout.
	waitAll waitRule = iota
	// waitDecided returns once the quorum is decided either way (fail-fast).
	waitDecided
	// waitDecidedOrBound returns once the quorum is decided or the bound
	// passed, whichever comes first (a fail-fast release).
	waitDecidedOrBound
	// waitAllOrBound returns once every master answered or the bound passed:
	// a release must not hold its worker for as long as one paused master
	// takes to time out, nor return while its DELs are still landing on
	// healthy masters, where the worker's next SET would find its own old
	// key and count itself as contended.
	waitAllOrBound
)

// fanOut runs op on every master in parallel and gathers replies until its
// wait rule is met, leaving the rest to finish on their own (their channel
// is buffered, so they never block). late is nil when every master answered,
// else it names the masters still out; onLate, when set, sees each of their
// replies in the background.
// Master 0 runs on the calling goroutine when every reply is awaited, the
// others on pooled goroutines whose stacks have already grown: a fresh
// goroutine per call spends more time growing its stack through go-redis
// than the loopback round trip takes.
func (r *Redlock) fanOut(ctx context.Context, timeout time.Duration, rule waitRule, bound time.Duration, onLate func(nodeReply),
	op func(ctx context.Context, node int) (Outcome, error)) (t tally, late *stragglers) {
	n := len(r.nodes)
	nctx, cancel := context.WithTimeout(ctx, timeout)
	replies := make(chan nodeReply, n)
	// A rule that may return early must not wait on any one master inline.
	first := 0
	if rule == waitAll {
		first = 1
	}
	for i := first; i < n; i++ {
		r.pool.run(func() {
			out, err := op(nctx, i)
			replies <- nodeReply{node: i, out: out, err: err}
		})
	}
	t = tally{n: n, quorum: Quorum(n)}
	answered := make([]bool, n)
	if first == 1 {
		out, err := op(nctx, 0)
		t.add(nodeReply{node: 0, out: out, err: err})
		answered[0] = true
	}
	var deadline <-chan time.Time
	if (rule == waitDecidedOrBound || rule == waitAllOrBound) && bound < timeout {
		timer := time.NewTimer(bound)
		defer timer.Stop()
		deadline = timer.C
	}
wait:
	for t.answered() < n && !((rule == waitDecided || rule == waitDecidedOrBound) && t.decided()) {
		select {
		case reply := <-replies:
			t.add(reply)
			answered[reply.node] = true
		case <-deadline:
			break wait
		}
	}
	pending := n - t.answered()
	if pending == 0 {
		cancel()
		return t, nil
	}
	late = &stragglers{done: make(chan struct{})}
	for i, a := range answered {
		if !a {
			late.nodes = append(late.nodes, i)
		}
	}
	r.cleanup.Add(1)
	go func() {
		defer r.cleanup.Done()
		defer close(late.done)
		defer cancel()
		for range pending {
			reply := <-replies
			if onLate != nil {
				onLate(reply)
			}
		}
	}()
	return t, late
}

// stragglers are the masters a call did not wait for; done closes once they
// all answered.
type stragglers struct {
	done  chan struct{}
	nodes []int
}

// Acquire sends SET NX PX to every master in parallel and succeeds with a quorum
// and positive validity; otherwise it releases on every master, including those
// that failed or timed out, since their SET may still have landed.
func (r *Redlock) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	token := NewToken()
	start := time.Now()
	t, late := r.fanOutCmd(ctx, r.nodeTimeout(ttl), r.acquireRule(), 0, nil,
		setNXCommand(key, token, ttl),
		func(nctx context.Context, i int) (Outcome, error) { return r.setOne(nctx, i, key, token, ttl) })
	open := newOpenSets(t.unsure, late, start, ttl)
	validity := Validity(ttl, time.Since(start), r.opts.DriftFactor)
	if t.ok >= t.quorum && validity > 0 {
		if open != nil {
			// A SET that may still land could outlive this lease's release:
			// the release settles those masters. A lease never released (its
			// holder crashed, or gave up) is forgotten once it has expired.
			r.inflight.Store(token, open)
			time.AfterFunc(ttl, func() { r.inflight.CompareAndDelete(token, open) })
		}
		return Lease{Key: key, Token: token, Start: start, Validity: validity}, OK, nil
	}
	r.giveBack(ctx, open, key, token, r.nodeTimeout(ttl))
	switch {
	case t.ok >= t.quorum:
		return Lease{}, Failed, fmt.Errorf("redlock acquire %s: %w", key, ErrValidityExpired)
	case !t.refused() && t.taken+t.lost > 0:
		// Another holder had some masters and failures the rest: the votes split.
		return Lease{}, Failed, fmt.Errorf("redlock acquire %s: %w (%d of %d masters held by another, %d failed, first: %v)",
			key, ErrSplitVote, t.taken+t.lost, t.n, t.fails, t.firstErr)
	case !t.refused():
		// Failures, not another owner, kept the quorum out of reach.
		return Lease{}, Failed, fmt.Errorf("redlock acquire %s: %w (%d of %d masters failed, first: %v)", key, ErrNoQuorum, t.fails, t.n, t.firstErr)
	}
	return Lease{}, Contended, nil
}

// openSets are the masters where an acquire's SET may still land: those whose
// SET went out and never answered, and those a fail-fast return left behind.
type openSets struct {
	unsure []int
	late   *stragglers
	// sent is when the SETs went out; ttl is their PX, how long a key that
	// lands late would live.
	sent time.Time
	ttl  time.Duration
}

// newOpenSets returns nil when every master answered its SET.
func newOpenSets(unsure []int, late *stragglers, sent time.Time, ttl time.Duration) *openSets {
	if len(unsure) == 0 && late == nil {
		return nil
	}
	return &openSets{unsure: unsure, late: late, sent: sent, ttl: ttl}
}

// acquireRule is how long an acquire or renew waits for the masters.
func (r *Redlock) acquireRule() waitRule {
	if r.opts.FailFast {
		return waitDecided
	}
	return waitAll
}

// giveBack runs compare-and-delete on every master in parallel and returns
// once every master answered (with fail-fast: once a quorum is decided) or
// bound (the node timeout) has passed, so one slow or paused master does not
// hold the caller. The masters it did not
// wait for finish in the background, up to the release timeout; one whose
// DEL went out unanswered is settled like an unanswered SET, so the delete
// still happens once it resumes. Then the masters where a SET may land
// after it are settled too. A cancelled run still cleans up after itself.
func (r *Redlock) giveBack(ctx context.Context, open *openSets, key, token string, bound time.Duration) tally {
	ctx = context.WithoutCancel(ctx)
	horizon := time.Now().Add(r.settleHorizon(open))
	onLate := func(reply nodeReply) {
		if reply.out == Failed && maybeDelivered(reply.err) {
			r.settleOne(ctx, nil, time.Time{}, reply.node, key, token, horizon)
		}
	}
	rule := waitAllOrBound
	if r.opts.FailFast {
		rule = waitDecidedOrBound
	}
	t, _ := r.fanOutCmd(ctx, r.releaseTimeout(), rule, bound, onLate,
		scriptCommand(r.scripts.release, releaseSrc, key, token),
		func(nctx context.Context, i int) (Outcome, error) {
			return runOwned(nctx, r.scripts.release, r.nodes[i], key, token)
		})
	if open != nil {
		r.settle(ctx, open, key, token)
	}
	return t
}

// settleHorizon is how long after a release its background deletes may go
// on: a key left behind lives at most its TTL, so retrying longer is moot.
func (r *Redlock) settleHorizon(open *openSets) time.Duration {
	if open != nil {
		return open.ttl
	}
	return max(r.releaseTimeout(), 10*time.Second)
}

// settle deletes the key again, in the background, on masters where a SET may
// land after the release that was meant to remove it.
//
// A SET that timed out may be queued on a server that stopped answering, or
// held up in the network, and the release's DEL goes out on another
// connection, so it can arrive first. Such a master gets a DEL no earlier
// than one release timeout (at least 500 ms) after the SET was sent, retried
// with a growing timeout until one answers: a paused server carries out what
// was queued in order, so that DEL comes after the SET. A SET held in the
// network for longer than that can still land last. A fail-fast straggler is
// waited for first, since its SET may not even have been written yet.
// Retries stop when the master refuses connections (it is down, and a key it
// had keeps the expiry it was given) or one TTL after the release.
func (r *Redlock) settle(ctx context.Context, open *openSets, key, token string) {
	ctx = context.WithoutCancel(ctx)
	horizon := time.Now().Add(open.ttl)
	notBefore := open.sent.Add(r.releaseTimeout())
	for _, i := range open.unsure {
		r.settleOne(ctx, nil, notBefore, i, key, token, horizon)
	}
	if open.late != nil {
		for _, i := range open.late.nodes {
			r.settleOne(ctx, open.late.done, time.Time{}, i, key, token, horizon)
		}
	}
}

// settleOne queues compare-and-delete on master i, to be sent once ready
// has closed and notBefore has passed, and retried until it answers, the
// master refuses connections, or horizon passes (see settler).
func (r *Redlock) settleOne(_ context.Context, ready <-chan struct{}, notBefore time.Time, i int, key, token string, horizon time.Time) {
	r.settlers[i].add(settleItem{key: key, token: token, ready: ready, notBefore: notBefore, horizon: horizon})
}

func (r *Redlock) setOne(ctx context.Context, i int, key, token string, ttl time.Duration) (Outcome, error) {
	ok, err := r.nodes[i].SetNX(ctx, key, token, ttl).Result()
	return r.countSet(i, ok, err)
}

// countSet counts master i's answer to a SET NX: taken (ok), held by another
// (!ok), timed out or failed.
func (r *Redlock) countSet(i int, ok bool, err error) (Outcome, error) {
	c := &r.counters[i]
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		c.timeouts.Add(1)
		return Failed, fmt.Errorf("master %d: %w", i, err)
	case err != nil:
		c.errors.Add(1)
		return Failed, fmt.Errorf("master %d: %w", i, err)
	case !ok:
		c.contended.Add(1)
		return Contended, nil
	}
	c.acquired.Add(1)
	return OK, nil
}

// Renew extends the lease on every master in parallel; it succeeds only with a
// quorum and positive validity, otherwise the lease counts as lost. A lease
// whose validity had already run out when the renewal began is lost even if
// the masters still hold it: its holder may not assume it owned the key in
// between. A decided loss, or an undecided one after the lease ran out, gives
// the key back on every master, since the renewal may just have extended it
// on some of them and the holder will not release it.
func (r *Redlock) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	start := time.Now()
	expired := !start.Before(lease.ValidUntil())
	t, _ := r.fanOutCmd(ctx, r.nodeTimeout(ttl), r.acquireRule(), 0, nil,
		scriptCommand(r.scripts.renew, renewSrc, lease.Key, lease.Token, strconv.FormatInt(ttl.Milliseconds(), 10)),
		func(nctx context.Context, i int) (Outcome, error) {
			return runOwned(nctx, r.scripts.renew, r.nodes[i], lease.Key, lease.Token, ttl.Milliseconds())
		})
	validity := Validity(ttl, time.Since(start), r.opts.DriftFactor)
	if t.ok >= t.quorum && validity > 0 && !expired {
		lease.Start, lease.Validity = start, validity
		return OK, nil
	}
	out, err := quorumLoss(t, "renew", lease.Key)
	if expired && !out.IsLost() {
		out, err = Lost, nil
	}
	// An undecided renewal whose lease has run out meanwhile ends the work
	// too, and its holder will not release it either.
	if out.IsLost() || !time.Now().Before(lease.ValidUntil()) {
		r.abandon(ctx, *lease, ttl)
	}
	return out, err
}

// abandon gives a lost lease back on every master in the background: its
// holder will not release it.
func (r *Redlock) abandon(ctx context.Context, lease Lease, ttl time.Duration) {
	open := r.takeOpen(lease.Token)
	ctx = context.WithoutCancel(ctx)
	r.cleanup.Add(1)
	go func() {
		defer r.cleanup.Done()
		r.giveBack(ctx, open, lease.Key, lease.Token, r.nodeTimeout(ttl))
	}()
}

// takeOpen removes and returns the masters where the lease's SET may still
// land, nil if none.
func (r *Redlock) takeOpen(token string) *openSets {
	open, _ := r.inflight.LoadAndDelete(token)
	o, _ := open.(*openSets)
	return o
}

// Release runs compare-and-delete on every master in parallel and returns
// once all of them answered (with fail-fast, once a quorum decided), or the
// node timeout passed; masters that had not answered by then are settled in
// the background. An undecided
// release is Failed: the holder cannot know it gave the key back.
func (r *Redlock) Release(ctx context.Context, lease Lease) (Outcome, error) {
	// Taken before the DELs go out: a straggler that answers meanwhile must
	// still be settled. The lease's validity stands in for its TTL, which
	// only sizes the default node timeout.
	t := r.giveBack(ctx, r.takeOpen(lease.Token), lease.Key, lease.Token, r.nodeTimeout(lease.Validity))
	if t.ok >= t.quorum {
		return OK, nil
	}
	return quorumLoss(t, "release", lease.Key)
}

// quorumLoss explains why a renew or release did not reach a quorum of owners.
func quorumLoss(t tally, op, key string) (Outcome, error) {
	switch {
	case !t.refused():
		// Without the failures we might still own it: undecided, not lost.
		if pending := t.n - t.answered(); pending > 0 {
			return Failed, fmt.Errorf("redlock %s %s: %w (%d of %d masters failed, %d had not answered within the node timeout)",
				op, key, ErrNoQuorum, t.fails, t.n, pending)
		}
		return Failed, fmt.Errorf("redlock %s %s: %w (%d of %d masters failed, first: %v)", op, key, ErrNoQuorum, t.fails, t.n, t.firstErr)
	case t.taken > 0:
		return Taken, nil
	}
	return Lost, nil
}
