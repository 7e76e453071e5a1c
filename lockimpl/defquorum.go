package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefQuorum is a lock definition that asks for a quorum (quorum: majority)
// over the N independent masters of redlock:N: one single-master DefLock
// per master, its acquire, renew and release sent to all of them at once
// with one token. It is granted, as Redlock is, when a majority granted
// and validity = ttl − elapsed − drift (Validity, the built-in's own
// function) is still positive; otherwise the key is released on every
// master, since a grant may have landed where the answer did not come.
type DefQuorum struct {
	name    string
	def     *LockDef
	masters []*DefLock
	opts    RedlockOptions
	tokens  tokenSource
}

// newDefLocker builds the lock of definition d over nodes: a DefQuorum when the
// file asks for a quorum, a single-master DefLock otherwise.
func newDefLocker(name string, d *LockDef, nodes []redis.Cmdable, opts Options) (Locker, error) {
	if !d.Quorum() {
		return newDefLock(name, d, nodes, opts)
	}
	return newDefQuorum(name, d, nodes, opts)
}

// newDefQuorum builds the quorum lock of d over nodes, each master on the
// single-master path (raw connections, EVALSHA with EVAL on NOSCRIPT).
func newDefQuorum(name string, d *LockDef, nodes []redis.Cmdable, opts Options) (*DefQuorum, error) {
	if opts.Pipe != nil {
		return nil, fmt.Errorf("lock definition %s asks for a quorum, which --pipeline auto does not batch; leave --pipeline off", d.File)
	}
	if opts.Redlock.DriftFactor == 0 {
		opts.Redlock.DriftFactor = DefaultDriftFactor
	}
	if f := opts.Redlock.DriftFactor; f <= 0 || f >= 1 {
		return nil, fmt.Errorf("lock definition %s: drift factor %v: want 0 < f < 1", d.File, f)
	}
	q := &DefQuorum{name: name, def: d, opts: opts.Redlock}
	for _, n := range nodes {
		one := opts
		one.Pipe = nil
		m, err := newDefLock(name, d, []redis.Cmdable{n}, one)
		if err != nil {
			_ = q.Close()
			return nil, err
		}
		q.masters = append(q.masters, m)
	}
	if len(q.masters) == 0 {
		return nil, fmt.Errorf("lock definition %s asks for a quorum of masters, the topology has none", d.File)
	}
	return q, nil
}

// Close closes every master's raw connections.
func (q *DefQuorum) Close() error {
	var errs []error
	for _, m := range q.masters {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

// Info describes the lock.
func (q *DefQuorum) Info() Info {
	return Info{Name: q.name, Fencing: q.def.Fences(), Nodes: len(q.masters)}
}

// nodeTimeout bounds each master's reply (--node-timeout, else Redlock's
// default for ttl).
func (q *DefQuorum) nodeTimeout(ttl time.Duration) time.Duration {
	if q.opts.NodeTimeout > 0 {
		return q.opts.NodeTimeout
	}
	return NodeTimeoutFor(ttl)
}

// releaseTimeout is never under 500 ms, as Redlock's: a release does not
// race the lease, and giving up early would leave keys behind.
func (q *DefQuorum) releaseTimeout() time.Duration {
	return max(q.opts.NodeTimeout, 500*time.Millisecond)
}

// fan runs op on every master at once, each bounded by timeout, waits for
// all of them, and counts the outcomes against the quorum.
func (q *DefQuorum) fan(ctx context.Context, timeout time.Duration, op func(ctx context.Context, m *DefLock) (Outcome, error)) tally {
	replies := make([]nodeReply, len(q.masters))
	var wg sync.WaitGroup
	for i, m := range q.masters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			out, err := op(nctx, m)
			replies[i] = nodeReply{node: i, out: out, err: err}
		}()
	}
	wg.Wait()
	t := tally{n: len(q.masters), quorum: Quorum(len(q.masters))}
	for _, r := range replies {
		t.add(r)
	}
	return t
}

// Acquire sends the definition's acquire with one token to every master and
// grants with a majority and positive validity; the lease's validity is the
// smaller of that and any validity the masters' replies gave.
func (q *DefQuorum) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	token := q.tokens.token()
	start := time.Now()
	var mu sync.Mutex
	replied := ttl
	t := q.fan(ctx, q.nodeTimeout(ttl), func(nctx context.Context, m *DefLock) (Outcome, error) {
		lease, out, err := m.acquireToken(nctx, key, token, ttl)
		if out == OK && lease.Validity < ttl {
			mu.Lock()
			replied = min(replied, lease.Validity)
			mu.Unlock()
		}
		return out, err
	})
	validity := min(Validity(ttl, time.Since(start), q.opts.DriftFactor), replied)
	if t.ok >= t.quorum && validity > 0 {
		return Lease{Key: key, Token: token, Start: start, Validity: validity}, OK, nil
	}
	q.giveBack(ctx, Lease{Key: key, Token: token, Validity: ttl})
	switch {
	case t.ok >= t.quorum:
		return Lease{}, Failed, fmt.Errorf("%s acquire %s: %w", q.def.File, key, ErrValidityExpired)
	case !t.refused() && t.taken+t.lost > 0:
		return Lease{}, Failed, fmt.Errorf("%s acquire %s: %w (%d of %d masters held by another, %d failed, first: %v)",
			q.def.File, key, ErrSplitVote, t.taken+t.lost, t.n, t.fails, t.firstErr)
	case !t.refused():
		return Lease{}, Failed, fmt.Errorf("%s acquire %s: %w (%d of %d masters failed, first: %v)", q.def.File, key, ErrNoQuorum, t.fails, t.n, t.firstErr)
	}
	return Lease{}, Contended, nil
}

// giveBack runs the definition's release on every master and counts it.
func (q *DefQuorum) giveBack(ctx context.Context, lease Lease) tally {
	return q.fan(context.WithoutCancel(ctx), q.releaseTimeout(), func(nctx context.Context, m *DefLock) (Outcome, error) {
		return m.Release(nctx, lease)
	})
}

// Release runs the definition's release on every master; it is OK when a
// majority released.
func (q *DefQuorum) Release(ctx context.Context, lease Lease) (Outcome, error) {
	t := q.giveBack(ctx, lease)
	if t.ok >= t.quorum {
		return OK, nil
	}
	return q.loss(t, "release", lease.Key)
}

// Renew runs the definition's renew on every master; it is OK with a
// majority and positive validity, on a lease whose validity had not run out
// when the renewal began. A lost renewal gives the key back everywhere: the
// renewal may have extended it on some masters, and the holder will not
// release a lost lease.
func (q *DefQuorum) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	if q.def.renew == nil {
		return Failed, fmt.Errorf("renew %s: definition %s has no renew", lease.Key, q.def.File)
	}
	start := time.Now()
	expired := !start.Before(lease.ValidUntil())
	var mu sync.Mutex
	replied := ttl
	t := q.fan(ctx, q.nodeTimeout(ttl), func(nctx context.Context, m *DefLock) (Outcome, error) {
		one := *lease
		out, err := m.Renew(nctx, &one, ttl)
		if out == OK && one.Validity < ttl {
			mu.Lock()
			replied = min(replied, one.Validity)
			mu.Unlock()
		}
		return out, err
	})
	validity := min(Validity(ttl, time.Since(start), q.opts.DriftFactor), replied)
	if t.ok >= t.quorum && validity > 0 && !expired {
		lease.Start, lease.Validity = start, validity
		return OK, nil
	}
	out, err := q.loss(t, "renew", lease.Key)
	if expired && !out.IsLost() {
		out, err = Lost, nil
	}
	if out.IsLost() || !time.Now().Before(lease.ValidUntil()) {
		q.giveBack(ctx, Lease{Key: lease.Key, Token: lease.Token, Validity: ttl})
	}
	return out, err
}

// loss is Redlock's reading of a renew or release short of a quorum
// (quorumLoss), naming the definition's file.
func (q *DefQuorum) loss(t tally, op, key string) (Outcome, error) {
	out, err := quorumLoss(t, op, key)
	if err != nil {
		err = fmt.Errorf("lock definition %s: %w", q.def.File, err)
	}
	return out, err
}
