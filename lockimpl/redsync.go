package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// RedsyncModule is the module path of the redsync library the adapter drives.
const RedsyncModule = "github.com/go-redsync/redsync/v4"

// Redsync drives github.com/go-redsync/redsync/v4, the Go Redlock most
// deployed, over one goredis pool per master: Acquire is one TryLockContext
// (or LockContext with tries=N), Renew is ExtendContext, Release is
// UnlockContext. Each lease has its own Mutex, since a redsync Mutex holds
// the value and validity of one holder.
type Redsync struct {
	rs     *redsync.Redsync
	nodes  int
	opts   PeerOptions
	common []redsync.Option
	info   Info
}

// NewRedsync returns the redsync adapter over the given masters (one is a
// single-instance redsync).
func NewRedsync(nodes []redis.Cmdable, opts PeerOptions) (*Redsync, error) {
	if len(nodes) == 0 {
		return nil, errors.New("redsync needs at least one master")
	}
	if opts.Tries < 1 || opts.TimeoutFactor <= 0 || opts.DriftFactor < 0 || opts.DriftFactor >= 1 {
		return nil, fmt.Errorf("redsync options %+v: want tries ≥ 1, 0 < timeout-factor, 0 ≤ drift-factor < 1", opts)
	}
	pools := make([]redsyncredis.Pool, len(nodes))
	for i, c := range nodes {
		uc, ok := c.(redis.UniversalClient)
		if !ok {
			return nil, fmt.Errorf("redsync needs a plain client on master %d (%T): its pool cannot take an auto-pipeliner", i, c)
		}
		pools[i] = goredis.NewPool(uc)
	}
	// Every setting is passed explicitly, defaults included, so the
	// settings a result records are the ones the library ran with.
	common := []redsync.Option{
		// lockbench's 128-bit token in place of redsync's own (also 128 bits,
		// base64): the value redsync stores and compares is then the lease's Token.
		redsync.WithGenValueFunc(func() (string, error) { return NewToken(), nil }),
		redsync.WithTries(opts.Tries),
		redsync.WithDriftFactor(opts.DriftFactor),
		redsync.WithTimeoutFactor(opts.TimeoutFactor),
		redsync.WithFailFast(opts.FailFast),
		redsync.WithShufflePools(opts.ShufflePools),
	}
	if opts.RetryDelay > 0 {
		common = append(common, redsync.WithRetryDelay(opts.RetryDelay))
	}
	if opts.SetNXOnExtend {
		common = append(common, redsync.WithSetNXOnExtend())
	}
	info := Info{Name: LockRedsync, Nodes: len(nodes), Library: RedsyncModule, Version: ModuleVersion(RedsyncModule),
		Settings: opts.Settings(LockRedsync), Defaults: libraryDefaults(LockRedsync)}
	return &Redsync{rs: redsync.New(pools...), nodes: len(nodes), opts: opts, common: common, info: info}, nil
}

// Info describes the lock and the library settings it runs with.
func (r *Redsync) Info() Info { return r.info }

func (r *Redsync) mutex(key string, ttl time.Duration, extra ...redsync.Option) *redsync.Mutex {
	opts := make([]redsync.Option, 0, len(r.common)+1+len(extra))
	opts = append(append(append(opts, r.common...), redsync.WithExpiry(ttl)), extra...)
	return r.rs.NewMutex(key, opts...)
}

// redsyncHandle is a lease's Mutex and the expiry it was made with: redsync
// extends by the Mutex's own expiry.
type redsyncHandle struct {
	m   *redsync.Mutex
	ttl time.Duration
}

// heldMutex is the Mutex that acquired lease, if it still holds the lease's token.
func heldMutex(lease Lease) (redsyncHandle, bool) {
	h, ok := lease.handle.(redsyncHandle)
	return h, ok && h.m.Value() == lease.Token
}

// foreignMutex is a new Mutex for the lease's token (redsync.WithValue, the
// library's own way to act on a lock taken elsewhere), for a lease whose
// own Mutex is missing or was made for another token or expiry.
func (r *Redsync) foreignMutex(lease Lease, ttl time.Duration) redsyncHandle {
	return redsyncHandle{m: r.mutex(lease.Key, ttl, redsync.WithValue(lease.Token)), ttl: ttl}
}

// Acquire makes one redsync lock call: TryLockContext, one try on every
// master, or with tries=N LockContext, redsync's own retry loop.
// Validity is redsync's Until() (expiry − elapsed − expiry × drift-factor,
// counted from its own start, which is after Start), so the lease is never
// trusted longer than redsync trusts it.
func (r *Redsync) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	m := r.mutex(key, ttl)
	start := time.Now()
	var err error
	if r.opts.Tries == 1 {
		err = m.TryLockContext(ctx)
	} else {
		err = m.LockContext(ctx)
	}
	if err == nil {
		return Lease{Key: key, Token: m.Value(), Start: start, Validity: m.Until().Sub(start), handle: redsyncHandle{m: m, ttl: ttl}}, OK, nil
	}
	out, err := r.acquireOutcome(ctx, err)
	if err != nil {
		err = fmt.Errorf("redsync acquire %s: %w", key, err)
	}
	return Lease{}, out, err
}

// acquireOutcome maps a failed lock call. redsync returns *ErrTaken when a
// quorum of masters holds another value; a join of per-master errors
// (*ErrNodeTaken, *RedisError) when failures kept the quorum out of reach;
// ErrFailed when every try reached a quorum too late (or ctx ended between tries).
func (r *Redsync) acquireOutcome(ctx context.Context, err error) (Outcome, error) {
	v := redsyncVotesOf(err)
	switch {
	case v.quorumTaken || v.taken > r.nodes-Quorum(r.nodes):
		// Another owner holds enough masters that the failed ones could not
		// have made a quorum: contended, whatever else went wrong.
		return Contended, nil
	case v.failed > 0:
		return Failed, r.noQuorum(v, err)
	case errors.Is(err, redsync.ErrFailed) && ctx.Err() != nil:
		return Failed, fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	// The masters agreed but too late: with every master answering (or
	// fail-fast's quorum), a failure without node errors is the validity.
	return Failed, fmt.Errorf("%w: %w", ErrValidityExpired, err)
}

// noQuorum wraps the node errors that kept a quorum out of reach. On one
// master the error is that master's own, as lockbench's single lock reports it.
func (r *Redsync) noQuorum(v redsyncVotes, err error) error {
	if r.nodes == 1 {
		return v.firstErr
	}
	if v.taken > 0 {
		// Another owner held some masters: the votes split.
		return fmt.Errorf("%w (%d of %d masters held by another, %d failed, first: %w): %v", ErrSplitVote, v.taken, r.nodes, v.failed, v.firstErr, err)
	}
	return fmt.Errorf("%w (%d of %d masters failed, first: %w): %v", ErrNoQuorum, v.failed, r.nodes, v.firstErr, err)
}

// Renew calls ExtendContext on the lease's Mutex. redsync's touch script
// answers 0 both for a key gone and for a key held by another, so a refused
// extension is reported as Lost: redsync cannot say which.
func (r *Redsync) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	h, held := heldMutex(*lease)
	if !held || h.ttl != ttl {
		// redsync extends by the Mutex's own expiry.
		h = r.foreignMutex(*lease, ttl)
	}
	start := time.Now()
	ok, err := h.m.ExtendContext(ctx)
	if ok {
		lease.Start, lease.Validity, lease.handle = start, h.m.Until().Sub(start), h
		return OK, nil
	}
	out, err := r.renewOutcome(err)
	if err != nil {
		err = fmt.Errorf("redsync renew %s: %w", lease.Key, err)
	}
	return out, err
}

// renewOutcome maps a refused extension.
func (r *Redsync) renewOutcome(err error) (Outcome, error) {
	if errors.Is(err, redsync.ErrExtendFailed) {
		// A quorum extended it, but too late for any validity to be left.
		return Failed, fmt.Errorf("%w: %w", ErrValidityExpired, err)
	}
	v := redsyncVotesOf(err)
	if v.failed > 0 && !v.quorumTaken && v.taken <= r.nodes-Quorum(r.nodes) {
		return Failed, r.noQuorum(v, err)
	}
	return Lost, nil
}

// Release calls UnlockContext on the lease's Mutex. redsync tells a key
// gone (ErrLockAlreadyExpired) from one held by another (*ErrNodeTaken).
func (r *Redsync) Release(ctx context.Context, lease Lease) (Outcome, error) {
	h, held := heldMutex(lease)
	if !held {
		// Unlock compares the value only; the expiry is not used.
		h = r.foreignMutex(lease, lease.Validity)
	}
	ok, err := h.m.UnlockContext(ctx)
	if ok {
		return OK, nil
	}
	out, err := r.releaseOutcome(err)
	if err != nil {
		err = fmt.Errorf("redsync release %s: %w", lease.Key, err)
	}
	return out, err
}

// releaseOutcome maps a refused unlock: lost or taken where the masters that
// answered deny a quorum whatever the failed ones hold, failed otherwise.
func (r *Redsync) releaseOutcome(err error) (Outcome, error) {
	v := redsyncVotesOf(err)
	refused := v.quorumTaken || v.taken+v.expired > r.nodes-Quorum(r.nodes)
	switch {
	case !refused && v.failed > 0:
		return Failed, r.noQuorum(v, err)
	case v.quorumTaken || v.taken > 0:
		return Taken, nil
	}
	return Lost, nil
}

// redsyncVotes is what a redsync error says of each master.
type redsyncVotes struct {
	// quorumTaken is redsync's own *ErrTaken: a quorum holds another value.
	quorumTaken bool
	// taken, expired and failed count masters that held another value,
	// had no key, or could not be asked.
	taken, expired, failed int
	firstErr               error
}

// redsyncVotesOf walks the tree redsync builds with errors.Join, one
// element per master that did not agree.
func redsyncVotesOf(err error) redsyncVotes {
	var v redsyncVotes
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *redsync.ErrTaken, redsync.ErrTaken:
			v.quorumTaken = true
		case *redsync.ErrNodeTaken, redsync.ErrNodeTaken:
			v.taken++
		case *redsync.RedisError, redsync.RedisError:
			v.failed++
			if v.firstErr == nil {
				v.firstErr = err
			}
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		default:
			if errors.Is(err, redsync.ErrLockAlreadyExpired) {
				v.expired++
			}
		}
	}
	walk(err)
	return v
}
