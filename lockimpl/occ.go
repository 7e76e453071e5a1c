package lockimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// OCC is optimistic concurrency control: no lock at all. Acquire reads the
// version of the key's row in a versioned table (the protected resource's);
// the protected write is a compare-and-set on that version, made by the
// resource's own statement, and a write that finds the version moved is a
// conflict, counted as contention and retried with --retry. It is the
// "no lock, a version check on the row" alternative measured on the same
// workload as the locks.
type OCC struct {
	pool    *pgxpool.Pool
	table   string
	timeout time.Duration
}

// NewOCC returns the optimistic lock reading versions from table, a table
// with a text key and a bigint version column.
func NewOCC(pool *pgxpool.Pool, table string, timeout time.Duration) *OCC {
	if timeout <= 0 {
		timeout = DefaultPgTimeout
	}
	return &OCC{pool: pool, table: table, timeout: timeout}
}

// Optimistic marks OCC as a lock that takes no lock.
func (o *OCC) Optimistic() {}

// Info describes the lock: no fencing token, the version check is the guard.
func (o *OCC) Info() Info { return pgInfo(LockOCC, false, o.timeout) }

// occLease is what an optimistic acquisition read.
type occLease struct{ version int64 }

// ExpectedVersion is the version an optimistic lease read, which its
// write must still find; ok is false for any other lease.
func ExpectedVersion(l Lease) (version int64, ok bool) {
	h, ok := l.handle.(occLease)
	return h.version, ok
}

// Acquire reads the key's version (0 for a row not written yet); it is
// never contended: the conflict, if any, shows at the write.
func (o *OCC) Acquire(ctx context.Context, key string, _ time.Duration) (Lease, Outcome, error) {
	start := time.Now()
	cctx, cancel := pgCall(ctx, o.timeout)
	defer cancel()
	var v int64
	err := o.pool.QueryRow(cctx, `select coalesce((select version from `+o.table+` where key = $1), 0)`, key).Scan(&v)
	if err != nil {
		return Lease{}, Failed, fmt.Errorf("read version of %s: %w", key, err)
	}
	return Lease{Key: key, Token: NewToken(), Start: start, Validity: NoExpiry, handle: occLease{version: v}}, OK, nil
}

// Renew is refused: nothing is held.
func (o *OCC) Renew(_ context.Context, lease *Lease, _ time.Duration) (Outcome, error) {
	return Failed, fmt.Errorf("renew %s: %s: %w", lease.Key, LockOCC, ErrNoRenewal)
}

// Release has nothing to give back: OK without a round trip.
func (o *OCC) Release(context.Context, Lease) (Outcome, error) { return OK, nil }
