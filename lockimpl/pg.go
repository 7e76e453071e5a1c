package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Names of the PostgreSQL locks (pgadvisory.go, pglease.go, occ.go).
const (
	// LockPgAdvisory is the session-level advisory lock.
	LockPgAdvisory = "pg-advisory"
	// LockPgAdvisoryXact is the transaction-level advisory lock.
	LockPgAdvisoryXact = "pg-advisory-xact"
	// LockPgLease is the lease row with a fencing token from a sequence.
	LockPgLease = "pg-lease"
	// LockOCC is optimistic concurrency: no lock, a compare-and-set on a
	// version column.
	LockOCC = "occ"
)

// PgModule is the driver the PostgreSQL locks are built on.
const PgModule = "github.com/jackc/pgx/v5"

// PgLocks lists the locks that run on a PostgreSQL topology, from the
// registry.
func PgLocks() []string { return LocksOn(BackendPostgres) }

// IsPgLock reports whether name is one of the PostgreSQL locks.
func IsPgLock(name string) bool { return mustDescribe(name).Backend == BackendPostgres }

// NoExpiry is the validity of a lease that has no TTL (the advisory locks):
// its holder owns the key for as long as its session lives, and cannot tell
// when the session ended under it.
const NoExpiry = time.Duration(math.MaxInt64)

// Expires reports whether the lease has a TTL of its own.
func (l Lease) Expires() bool { return l.Validity != NoExpiry }

// ErrNoRenewal is returned by Renew of a lock that has no TTL to extend.
var ErrNoRenewal = errors.New("this lock has no TTL: nothing to renew")

// NewPg builds the named PostgreSQL lock over pool; occ reads its versions
// from versions, the protected resource's table. Each statement is bounded
// by timeout (0: DefaultPgTimeout).
func NewPg(name string, pool *pgxpool.Pool, versions string, timeout time.Duration) (Locker, error) {
	switch name {
	case LockPgAdvisory:
		return NewPgAdvisory(pool, timeout), nil
	case LockPgAdvisoryXact:
		return NewPgAdvisoryXact(pool, timeout), nil
	case LockPgLease:
		return NewPgLease(pool, timeout), nil
	case LockOCC:
		return NewOCC(pool, versions, timeout), nil
	}
	return nil, fmt.Errorf("lock %q is not a PostgreSQL lock; want one of %s", name, strings.Join(PgLocks(), ", "))
}

// Optimistic is implemented by a lock that takes no lock at all: Acquire
// reads a version (ExpectedVersion), the protected write is the resource's
// compare-and-set on it, and a write that lost the race is contention, not
// an acquisition. The runner counts an acquisition only when
// its write committed.
type Optimistic interface {
	Locker
	// Optimistic marks the lock; it does nothing.
	Optimistic()
}

// PgTx is the open transaction a lease holds (pg-advisory-xact), on
// which the protected write must run so that it commits with the lease; nil
// for any other lease.
func PgTx(l Lease) pgx.Tx {
	if h, ok := l.handle.(*pgTxHandle); ok {
		return h.tx
	}
	return nil
}

// pgTxHandle is the transaction behind a transaction-scoped lease.
type pgTxHandle struct {
	tx pgx.Tx
}

// advisoryKey maps a lock key to the bigint an advisory lock takes (FNV-1a,
// 64 bits): keys of one run do not collide in practice, and a collision
// would only make two keys share a lock, never break exclusion.
func advisoryKey(key string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int64(h.Sum64())
}

// pgCall bounds one statement (or a connection's checkout and its
// statement) by timeout.
func pgCall(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, timeout)
}

// DefaultPgTimeout bounds each statement of the PostgreSQL locks unless
// told otherwise: a paused server must not hold a worker for ever.
const DefaultPgTimeout = time.Second

// pgErrorKind names a PostgreSQL error for the errors-by-kind counters by
// its condition (admin_shutdown for a terminated session, …), or "" when
// err is none.
func pgErrorKind(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if name, ok := pgConditions[pe.Code]; ok {
			return name
		}
		return "sqlstate_" + strings.ToLower(pe.Code)
	}
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce):
		return "connect"
	case errors.Is(err, pgx.ErrTxClosed):
		return "tx_closed"
	case strings.Contains(err.Error(), "conn closed"):
		// pgx's words for a session it already knows is gone.
		return "conn_closed"
	}
	return ""
}

// pgConditions names the SQLSTATEs a run is likely to meet.
var pgConditions = map[string]string{
	"57P01": "admin_shutdown", // pg_terminate_backend, or a fast shutdown
	"57P02": "crash_shutdown",
	"57P03": "cannot_connect_now",
	"57014": "query_canceled",
	"08006": "connection_failure",
	"08003": "connection_does_not_exist",
	"40001": "serialization_failure",
	"40P01": "deadlock_detected",
	"53300": "too_many_connections",
	"25P02": "in_failed_sql_transaction",
}

// pgPinned returns a lease's pinned connection, or ErrForeignLease.
func pgPinned(lease Lease) (*pgxpool.Conn, error) {
	c, ok := lease.handle.(*pgxpool.Conn)
	if !ok {
		return nil, fmt.Errorf("pg lease of %s: %w", lease.Key, ErrForeignLease)
	}
	return c, nil
}

// pgTxOf returns a lease's transaction handle, or ErrForeignLease.
func pgTxOf(lease Lease) (*pgTxHandle, error) {
	h, ok := lease.handle.(*pgTxHandle)
	if !ok {
		return nil, fmt.Errorf("pg lease of %s: %w", lease.Key, ErrForeignLease)
	}
	return h, nil
}

// pgInfo describes a PostgreSQL lock.
func pgInfo(name string, fencing bool, timeout time.Duration) Info {
	return Info{Name: name, Fencing: fencing, Nodes: 1, Library: PgModule, Version: ModuleVersion(PgModule),
		Settings: map[string]string{"statement-timeout": timeout.String()}}
}
