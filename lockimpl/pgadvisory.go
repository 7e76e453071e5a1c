package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PgAdvisory is PostgreSQL's session-level advisory lock: pg_try_advisory_lock
// on a connection pinned to the holder for as long as it holds the key,
// pg_advisory_unlock to release. It has no TTL: a crashed holder's lock is
// freed only when its session ends, and a session ended under a holder that
// is still working (pg_terminate_backend, a server restart) frees the lock
// without the holder knowing: the advisory-lock analogue of expiry during
// work. Its leases carry no fencing token.
type PgAdvisory struct {
	pool    *pgxpool.Pool
	timeout time.Duration
}

// NewPgAdvisory returns the session-level advisory lock over pool; each
// statement is bounded by timeout (0: DefaultPgTimeout). The pool must allow
// a connection per concurrent holder.
func NewPgAdvisory(pool *pgxpool.Pool, timeout time.Duration) *PgAdvisory {
	if timeout <= 0 {
		timeout = DefaultPgTimeout
	}
	return &PgAdvisory{pool: pool, timeout: timeout}
}

// Info describes the lock: no fencing, one server.
func (p *PgAdvisory) Info() Info { return pgInfo(LockPgAdvisory, false, p.timeout) }

// Acquire pins a connection and tries the key's advisory lock on it; a
// contended attempt gives the connection back at once.
func (p *PgAdvisory) Acquire(ctx context.Context, key string, _ time.Duration) (Lease, Outcome, error) {
	start := time.Now()
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	conn, err := p.pool.Acquire(cctx)
	if err != nil {
		return Lease{}, Failed, fmt.Errorf("acquire %s: connection: %w", key, err)
	}
	var got bool
	if err := conn.QueryRow(cctx, "select pg_try_advisory_lock($1)", advisoryKey(key)).Scan(&got); err != nil {
		// The lock may have been granted though the answer was lost: ending
		// the session frees it, so no orphan lock is left pinned in the pool.
		discard(conn)
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	}
	if !got {
		conn.Release()
		return Lease{}, Contended, nil
	}
	return Lease{Key: key, Token: NewToken(), Start: start, Validity: NoExpiry, handle: conn}, OK, nil
}

// discard closes a pooled connection's session and hands the dead
// connection back, so the pool drops it.
func discard(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Conn().Close(ctx)
	conn.Release()
}

// Renew is refused: the lock has no TTL, it lasts as long as the session.
func (p *PgAdvisory) Renew(_ context.Context, lease *Lease, _ time.Duration) (Outcome, error) {
	return Failed, fmt.Errorf("renew %s: %s: %w", lease.Key, LockPgAdvisory, ErrNoRenewal)
}

// Release unlocks the key on the holder's own session and unpins it. A
// session that was ended under the holder has lost the lock: Lost.
func (p *PgAdvisory) Release(ctx context.Context, lease Lease) (Outcome, error) {
	conn, err := pgPinned(lease)
	if err != nil {
		return Failed, err
	}
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	var held bool
	err = conn.QueryRow(cctx, "select pg_advisory_unlock($1)", advisoryKey(lease.Key)).Scan(&held)
	if err != nil {
		discard(conn)
		if sessionLost(err) {
			return Lost, nil
		}
		// Closing the session frees the lock in any case.
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	}
	conn.Release()
	if !held {
		return Lost, nil
	}
	return OK, nil
}

// sessionLost reports whether err says the session is gone (terminated by
// an administrator, the server shut down or the connection closed), which
// ends every lock it held.
func sessionLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	k := pgErrorKind(err)
	return k == "conn_closed" || k == "tx_closed" || errors.Is(err, pgx.ErrTxClosed)
}

// PgAdvisoryXact is PostgreSQL's transaction-level advisory lock:
// pg_try_advisory_xact_lock inside a transaction opened for the holder,
// released at its commit or rollback. The protected write runs in the same
// transaction (PgTx), so it commits only if the session that held the lock
// survived: a holder whose session was ended cannot write at all.
type PgAdvisoryXact struct {
	pool    *pgxpool.Pool
	timeout time.Duration
}

// NewPgAdvisoryXact returns the transaction-level advisory lock over pool.
func NewPgAdvisoryXact(pool *pgxpool.Pool, timeout time.Duration) *PgAdvisoryXact {
	if timeout <= 0 {
		timeout = DefaultPgTimeout
	}
	return &PgAdvisoryXact{pool: pool, timeout: timeout}
}

// Info describes the lock: no fencing token (the transaction is the fence).
func (p *PgAdvisoryXact) Info() Info { return pgInfo(LockPgAdvisoryXact, false, p.timeout) }

// Acquire opens a transaction and tries the key's transaction-level lock in
// it; a contended attempt rolls back at once.
func (p *PgAdvisoryXact) Acquire(ctx context.Context, key string, _ time.Duration) (Lease, Outcome, error) {
	start := time.Now()
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	tx, err := p.pool.Begin(cctx)
	if err != nil {
		return Lease{}, Failed, fmt.Errorf("acquire %s: begin: %w", key, err)
	}
	var got bool
	if err := tx.QueryRow(cctx, "select pg_try_advisory_xact_lock($1)", advisoryKey(key)).Scan(&got); err != nil {
		rollback(tx)
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	}
	if !got {
		rollback(tx)
		return Lease{}, Contended, nil
	}
	return Lease{Key: key, Token: NewToken(), Start: start, Validity: NoExpiry, handle: &pgTxHandle{tx: tx}}, OK, nil
}

// rollback ends a transaction whose outcome no longer matters, bounded.
func rollback(tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = tx.Rollback(ctx)
}

// Renew is refused: the lock lasts as long as its transaction.
func (p *PgAdvisoryXact) Renew(_ context.Context, lease *Lease, _ time.Duration) (Outcome, error) {
	return Failed, fmt.Errorf("renew %s: %s: %w", lease.Key, LockPgAdvisoryXact, ErrNoRenewal)
}

// Release commits the transaction: the protected write and the lock's end
// together. A commit refused because the session ended or the transaction
// failed is Lost: the write did not happen.
func (p *PgAdvisoryXact) Release(ctx context.Context, lease Lease) (Outcome, error) {
	h, err := pgTxOf(lease)
	if err != nil {
		return Failed, err
	}
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	err = h.tx.Commit(cctx)
	switch {
	case err == nil:
		return OK, nil
	case errors.Is(err, pgx.ErrTxCommitRollback), sessionLost(err):
		return Lost, nil
	}
	rollback(h.tx)
	return Failed, fmt.Errorf("release %s: commit: %w", lease.Key, err)
}
