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

// PgLease is a TTL lock on PostgreSQL, like the Redis lease lock: one row a
// key with its owner's token, an expiry by the database's clock and a
// fencing token from a sequence. Acquire, renew and release are each one
// conditional statement, so no statement ever acts on another owner's row.
type PgLease struct {
	pool    *pgxpool.Pool
	timeout time.Duration
}

// PgLeaseTable and PgFenceSequence hold the lease rows and the fencing
// tokens; EnsurePgLeaseSchema creates them.
const (
	PgLeaseTable    = "lockbench_lease"
	PgFenceSequence = "lockbench_fence"
)

// NewPgLease returns the lease lock over pool; EnsurePgLeaseSchema must have
// run on its database.
func NewPgLease(pool *pgxpool.Pool, timeout time.Duration) *PgLease {
	if timeout <= 0 {
		timeout = DefaultPgTimeout
	}
	return &PgLease{pool: pool, timeout: timeout}
}

// EnsurePgLeaseSchema creates the lease table and the fencing sequence if
// they are missing; it never drops or changes anything that exists.
func EnsurePgLeaseSchema(ctx context.Context, q PgExecer) error {
	return ensureSchema(ctx, q,
		"create table if not exists "+PgLeaseTable+" (key text primary key, owner text not null, fence bigint not null, expires timestamptz not null)",
		"create sequence if not exists "+PgFenceSequence)
}

// PgExecer runs a statement: a pool, a connection or a transaction.
type PgExecer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// ensureSchema runs create-if-missing statements; two generators creating
// the same object at once make one of them fail with a duplicate, which is
// the outcome wanted.
func ensureSchema(ctx context.Context, q PgExecer, stmts ...string) error {
	for _, s := range stmts {
		if _, err := q.Exec(ctx, s); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
				continue
			}
			return fmt.Errorf("create schema (%s): %w", s, err)
		}
	}
	return nil
}

// Info describes the lock: fenced by the sequence.
func (p *PgLease) Info() Info { return pgInfo(LockPgLease, true, p.timeout) }

// pgLeaseAcquire inserts the row, or takes over a row whose lease has
// expired by the database's clock; no row back means another owner holds it.
const pgLeaseAcquire = `insert into ` + PgLeaseTable + ` as l (key, owner, fence, expires)
values ($1, $2, nextval('` + PgFenceSequence + `'), clock_timestamp() + $3::bigint * interval '1 microsecond')
on conflict (key) do update set owner = excluded.owner, fence = excluded.fence, expires = excluded.expires
where l.expires <= clock_timestamp()
returning fence`

// Acquire makes one attempt at key for ttl.
func (p *PgLease) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	start := time.Now()
	token := NewToken()
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	var fence int64
	err := p.pool.QueryRow(cctx, pgLeaseAcquire, key, token, ttl.Microseconds()).Scan(&fence)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Lease{}, Contended, nil
	case err != nil:
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	}
	return Lease{Key: key, Token: token, Fence: fence, Start: start, Validity: ttl}, OK, nil
}

// Renew moves the expiry to ttl from now by the database's clock, only
// while the row is still the caller's and unexpired.
func (p *PgLease) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	start := time.Now()
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	tag, err := p.pool.Exec(cctx, `update `+PgLeaseTable+` set expires = clock_timestamp() + $3::bigint * interval '1 microsecond'
where key = $1 and owner = $2 and expires > clock_timestamp()`, lease.Key, lease.Token, ttl.Microseconds())
	if err != nil {
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	if tag.RowsAffected() == 0 {
		return p.lostOrTaken(cctx, lease.Key)
	}
	lease.Start, lease.Validity = start, ttl
	return OK, nil
}

// Release deletes the row only if it is still the caller's; a row of ours
// that had expired is deleted too (nobody holds it) but the release is Lost.
func (p *PgLease) Release(ctx context.Context, lease Lease) (Outcome, error) {
	cctx, cancel := pgCall(ctx, p.timeout)
	defer cancel()
	var live bool
	err := p.pool.QueryRow(cctx, `delete from `+PgLeaseTable+` where key = $1 and owner = $2 returning expires > clock_timestamp()`,
		lease.Key, lease.Token).Scan(&live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return p.lostOrTaken(cctx, lease.Key)
	case err != nil:
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	case !live:
		return Lost, nil
	}
	return OK, nil
}

// lostOrTaken tells a key another owner holds now (Taken) from one nobody
// holds (Lost), once the caller's own row is known gone.
func (p *PgLease) lostOrTaken(ctx context.Context, key string) (Outcome, error) {
	var held bool
	err := p.pool.QueryRow(ctx, `select exists (select 1 from `+PgLeaseTable+` where key = $1 and expires > clock_timestamp())`, key).Scan(&held)
	if err != nil {
		return Lost, fmt.Errorf("%s: lease gone; whether another owner holds it is unknown: %w", key, err)
	}
	if held {
		return Taken, nil
	}
	return Lost, nil
}

// DeletePrefix deletes the lease rows of keys under prefix, and nothing
// else; it returns how many it deleted.
func (p *PgLease) DeletePrefix(ctx context.Context, prefix string) (int64, error) {
	return deletePgPrefix(ctx, p.pool, PgLeaseTable, prefix)
}

// deletePgPrefix deletes table's rows whose key starts with prefix.
func deletePgPrefix(ctx context.Context, q PgExecer, table, prefix string) (int64, error) {
	tag, err := q.Exec(ctx, `delete from `+table+` where left(key, length($1)) = $1`, prefix)
	if err != nil {
		return 0, fmt.Errorf("delete %s rows under %s: %w", table, prefix, err)
	}
	return tag.RowsAffected(), nil
}
