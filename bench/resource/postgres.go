package resource

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/lockimpl"
)

// PgTable is the protected rows of the PostgreSQL resource: per
// key, the value written, the highest fencing token a write carried, the
// newest entry that wrote, and a version every write moves (occ's
// compare-and-set reads and checks it). PgStateTable holds what the
// checks need (holders inside, entries, when a crashed holder left), apart
// from the protected row, so a write held open in a lock's transaction
// never blocks another holder's entry.
const (
	PgTable      = "lockbench_resource"
	PgStateTable = "lockbench_resource_state"
	// PgHoldersTable holds each holder inside with its lease's
	// validity end, to tell a double grant from an overrun.
	PgHoldersTable = "lockbench_resource_holders"
)

// Postgres keeps the protected resource in PostgreSQL, where fencing is
// enforced by the database itself: a write carrying an older fencing token
// is refused by the statement's own condition. The generators of one run see
// each other's holders, and blocked time is taken by the database's clock.
// A lease that holds a transaction (pg-advisory-xact) writes in it, so its
// write commits only with its lock; an optimistic lease (occ) writes by
// compare-and-set on the row's version.
type Postgres struct {
	pool   *pgxpool.Pool
	prefix string
}

// NewPostgres returns the resource kept on pool for the keys under
// prefix; EnsurePgSchema must have run on its database.
func NewPostgres(pool *pgxpool.Pool, prefix string) *Postgres {
	return &Postgres{pool: pool, prefix: prefix}
}

// EnsurePgSchema creates the resource's tables if they are missing.
func EnsurePgSchema(ctx context.Context, q lockimpl.PgExecer) error {
	for _, s := range []string{
		"create table if not exists " + PgTable + " (key text primary key, value text not null, fence bigint not null default 0, last_entry bigint not null default 0, version bigint not null default 0)",
		"create table if not exists " + PgStateTable + " (key text primary key, inside int not null default 0, entries bigint not null default 0, abandoned timestamptz, seq bigint not null default 0)",
		"create table if not exists " + PgHoldersTable + " (key text not null, entry bigint not null, valid_until_us bigint not null, primary key (key, entry))",
	} {
		if _, err := q.Exec(ctx, s); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
				continue // created by another generator at the same moment
			}
			return fmt.Errorf("create the resource's tables: %w", err)
		}
	}
	return nil
}

// DeletePrefix deletes both tables' rows of keys under prefix.
func (p *Postgres) DeletePrefix(ctx context.Context) (int64, error) {
	var n int64
	for _, t := range []string{PgTable, PgStateTable, PgHoldersTable} {
		tag, err := p.pool.Exec(ctx, `delete from `+t+` where left(key, length($1)) = $1`, p.prefix)
		if err != nil {
			return n, fmt.Errorf("delete %s rows under %s: %w", t, p.prefix, err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

func (p *Postgres) key(k int) string { return p.prefix + strconv.Itoa(k) }

// Enter counts one more holder inside and one more entry, takes the time
// the key sat abandoned by the database's clock, and tells an overlap's
// cause from the validity of the holders inside: a double grant when one
// still had a valid lease (less the drift allowance) at this grant, an
// overrun when every one had outlived its lease.
func (p *Postgres) Enter(ctx context.Context, key int, g bench.Grant) (bench.Entry, bench.Overlap, time.Duration, bench.Stamp, error) {
	k := p.key(key)
	var inside int
	var entries, blockedUS, seq int64
	var cause int
	b := p.keyBatch(k)
	b.Queue(`with h as (select max(valid_until_us) as v, count(*) as n from `+PgHoldersTable+` where key = $1)
insert into `+PgStateTable+` as s (key, inside, entries, seq) values ($1, 1, 1, 1)
on conflict (key) do update set inside = s.inside + 1, entries = s.entries + 1, abandoned = null, seq = s.seq + 1
returning inside, entries, seq,
  coalesce((extract(epoch from clock_timestamp() - (select abandoned from `+PgStateTable+` where key = $1)) * 1e6)::bigint, 0),
  (select case when n = 0 then 0 when $2::bigint < v - $3::bigint then 1 else 2 end from h)`,
		k, g.At.UnixMicro(), g.Drift.Microseconds()).QueryRow(func(r pgx.Row) error {
		return r.Scan(&inside, &entries, &seq, &blockedUS, &cause)
	})
	b.Queue(`insert into `+PgHoldersTable+` (key, entry, valid_until_us)
select $1, entries, $2 from `+PgStateTable+` where key = $1
on conflict (key, entry) do update set valid_until_us = excluded.valid_until_us`, k, validUntilUS(g.ValidUntil))
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return bench.NewEntry(key, uint64(entries)), bench.NoOverlap, 0, bench.Stamp{At: time.Now()}, fmt.Errorf("postgres resource enter: %w", err)
	}
	if inside <= 1 {
		cause = int(bench.NoOverlap)
	}
	return bench.NewEntry(key, uint64(entries)), bench.Overlap(cause), time.Duration(max(blockedUS, 0)) * time.Microsecond,
		bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// pgResourceLockClass is the first half of the resource's per-key
// transaction lock. The two-int4 advisory key space is PostgreSQL's own,
// apart from the one-bigint space the advisory locks under test use, so the
// resource never contends with the lock it measures.
const pgResourceLockClass = 0x6c6b6263 // "lkbc"

// keyBatch starts a batch that first takes key's transaction lock. A batch
// is one round trip in one implicit transaction, and under READ COMMITTED
// each later statement takes its snapshot after the lock: every event of a
// key is applied, counted and stamped in one order, each seeing all before
// it, so the run's verdicts and the history's order (the stamps) agree.
// Two statements without it let an entry see a holder counted inside but
// not yet listed, or one listed but already counted out.
func (p *Postgres) keyBatch(key string) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(`select pg_advisory_xact_lock($1::int4, hashtext($2))`, pgResourceLockClass, key)
	return b
}

// validUntilUS is a validity end in unix µs; a lease without expiry ends
// far in the future.
func validUntilUS(t time.Time) int64 { return t.UnixMicro() }

// Renewed records the holder's new validity end.
func (p *Postgres) Renewed(ctx context.Context, e bench.Entry, validUntil time.Time) (bench.Stamp, error) {
	k := p.key(e.Key())
	b := p.keyBatch(k)
	b.Queue(`update `+PgHoldersTable+` set valid_until_us = $3 where key = $1 and entry = $2`,
		k, int64(e.Epoch()), validUntilUS(validUntil))
	var seq int64
	queueBump(b, k, &seq)
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return bench.Stamp{At: time.Now()}, fmt.Errorf("postgres resource renewed: %w", err)
	}
	return bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// bump counts one more event of the key and returns its stamp.
func (p *Postgres) bump(ctx context.Context, key int) (bench.Stamp, error) {
	k := p.key(key)
	b := p.keyBatch(k)
	var seq int64
	queueBump(b, k, &seq)
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return bench.Stamp{At: time.Now()}, fmt.Errorf("postgres resource: %w", err)
	}
	return bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// queueBump queues the statement that counts one more event of key into seq.
func queueBump(b *pgx.Batch, key string, seq *int64) {
	b.Queue(`insert into `+PgStateTable+` as s (key, seq) values ($1, 1)
on conflict (key) do update set seq = s.seq + 1 returning seq`, key).QueryRow(func(r pgx.Row) error { return r.Scan(seq) })
}

// pgWriteFenced writes only if no newer fencing token has written: the
// fence is enforced by the statement. No row back: refused.
const pgWriteFenced = `insert into ` + PgTable + ` as r (key, value, fence, last_entry, version) values ($1, $2, $3, $4, 1)
on conflict (key) do update set value = excluded.value, fence = excluded.fence,
  last_entry = greatest(r.last_entry, excluded.last_entry), version = r.version + 1
where r.fence <= excluded.fence
returning 0`

// pgWriteUnfenced writes whatever came before, and returns the newest
// entry that has written, its own included: a newer one than its own means
// a newer holder wrote first (read from the row as updated, so a concurrent
// writer is never missed).
const pgWriteUnfenced = `insert into ` + PgTable + ` as r (key, value, last_entry, version) values ($1, $2, $3, 1)
on conflict (key) do update set value = excluded.value,
  last_entry = greatest(r.last_entry, excluded.last_entry), version = r.version + 1
returning last_entry`

// pgWriteCAS is occ's compare-and-set: the write applies only if the row's
// version is still the one read ($4; 0 for a row not written yet).
const pgWriteCAS = `with upd as (
  update ` + PgTable + ` set value = $2, last_entry = greatest(last_entry, $3), version = version + 1
  where key = $1 and version = $4 and $4 > 0 returning 1),
ins as (
  insert into ` + PgTable + ` (key, value, last_entry, version) select $1, $2, $3, 1 where $4 = 0
  on conflict (key) do nothing returning 1)
select count(*) from (select * from upd union all select * from ins) w`

// Write is the protected write of lease's holder. A fenced lease's write is
// refused by the database when a newer token has written; an optimistic
// lease's is refused when the version moved (a conflict); a lease that
// holds a transaction writes in it.
func (p *Postgres) Write(ctx context.Context, e bench.Entry, lease lockimpl.Lease, expired bool) (bench.WriteVerdict, bench.Stamp, error) {
	w := p.writeOf(e, lease, expired)
	if tx := lockimpl.PgTx(lease); tx != nil {
		// The write commits with the lock's transaction; the key's lock
		// cannot be taken in it without holding it to the commit.
		v, err := w.verdict(tx.QueryRow(ctx, w.sql, w.args...))
		if err != nil {
			return v, bench.Stamp{At: time.Now()}, fmt.Errorf("postgres resource write: %w", err)
		}
		st, err := p.bump(ctx, e.Key())
		return v, st, err
	}
	// The write and its stamp in one batch behind the key's lock, so writes
	// are stamped in the order the database applied them.
	k := p.key(e.Key())
	b := p.keyBatch(k)
	var v bench.WriteVerdict
	b.Queue(w.sql, w.args...).QueryRow(func(r pgx.Row) error {
		var err error
		v, err = w.verdict(r)
		return err
	})
	var seq int64
	queueBump(b, k, &seq)
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return bench.WriteAccepted, bench.Stamp{At: time.Now()}, fmt.Errorf("postgres resource write: %w", err)
	}
	return v, bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// pgWrite is one protected write: its statement and how its row reads as a
// verdict.
type pgWrite struct {
	sql     string
	args    []any
	verdict func(pgx.Row) (bench.WriteVerdict, error)
}

// writeOf is the protected write of lease's holder: a compare-and-set for an
// optimistic lease, the fenced statement for a fenced one, else the unfenced
// write that reports whether a newer holder wrote first.
func (p *Postgres) writeOf(e bench.Entry, lease lockimpl.Lease, expired bool) pgWrite {
	key := p.key(e.Key())
	if version, ok := lockimpl.ExpectedVersion(lease); ok {
		return pgWrite{pgWriteCAS, []any{key, lease.Token, int64(e.Epoch()), version}, func(r pgx.Row) (bench.WriteVerdict, error) {
			var n int
			if err := r.Scan(&n); err != nil {
				return bench.WriteAccepted, err
			}
			if n == 0 {
				return bench.WriteConflict, nil
			}
			return bench.WriteAccepted, nil
		}}
	}
	if lease.Fence > 0 {
		return pgWrite{pgWriteFenced, []any{key, lease.Token, lease.Fence, int64(e.Epoch())}, func(r pgx.Row) (bench.WriteVerdict, error) {
			var zero int
			switch err := r.Scan(&zero); {
			case errors.Is(err, pgx.ErrNoRows):
				return bench.WriteFencingRejected, nil
			case err != nil:
				return bench.WriteAccepted, err
			}
			return bench.WriteAccepted, nil
		}}
	}
	return pgWrite{pgWriteUnfenced, []any{key, lease.Token, int64(e.Epoch())}, func(r pgx.Row) (bench.WriteVerdict, error) {
		var last int64
		if err := r.Scan(&last); err != nil {
			return bench.WriteAccepted, err
		}
		if bench.MayBeStale(lease, expired) && last > int64(e.Epoch()) {
			return bench.WriteStaleAccepted, nil
		}
		return bench.WriteAccepted, nil
	}}
}

// Exit counts one fewer holder inside.
func (p *Postgres) Exit(ctx context.Context, e bench.Entry) (bench.Stamp, error) {
	return p.leave(ctx, e, false)
}

// Abandon counts one fewer holder inside and stamps when the key was left,
// by the database's clock.
func (p *Postgres) Abandon(ctx context.Context, e bench.Entry, _ time.Time) (bench.Stamp, error) {
	return p.leave(ctx, e, true)
}

// leave takes the holder out; a crashed one leaves the key abandoned.
func (p *Postgres) leave(ctx context.Context, e bench.Entry, crashed bool) (bench.Stamp, error) {
	k := p.key(e.Key())
	b := p.keyBatch(k)
	b.Queue(`delete from `+PgHoldersTable+` where key = $1 and entry = $2`, k, int64(e.Epoch()))
	var seq int64
	b.Queue(`update `+PgStateTable+` set inside = inside - 1, seq = seq + 1,
  abandoned = case when $2 then clock_timestamp() else abandoned end where key = $1 returning seq`, k, crashed).
		QueryRow(func(r pgx.Row) error { return r.Scan(&seq) })
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return bench.Stamp{At: time.Now()}, fmt.Errorf("postgres resource leave: %w", err)
	}
	return bench.Stamp{Seq: uint64(seq), At: time.Now()}, nil
}

// Remote is true: every call is a round trip.
func (p *Postgres) Remote() bool { return true }

// ChecksVersions marks the resource as bench.Versioned: every write moves
// the row's version, and occ's compare-and-set checks it.
func (p *Postgres) ChecksVersions() {}
