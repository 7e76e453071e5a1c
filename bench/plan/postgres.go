package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/bench/resource"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Renewable reports whether lock has a lease with a TTL to renew: the
// session and transaction locks of PostgreSQL (and occ) have none. The
// lock registry says so (lockimpl.Descriptor.Renewable).
func Renewable(lock string) bool { return lockimpl.IsRenewable(lock) }

// pgChecks refuses what the PostgreSQL locks cannot do: renew a lock that
// has no TTL, or write their transaction's protected write elsewhere.
func (p *parser) pgChecks(pl *Plan) {
	if p.err != nil || !lockimpl.IsPgLock(pl.Lock) {
		return
	}
	switch {
	case !lockimpl.IsRenewable(pl.Lock) && pl.Workload.RenewEvery > 0:
		p.fail("renew-every", "%s has no TTL to renew: it lasts as long as its session (or transaction); drop --renew-every, or use --lock pg-lease", pl.Lock)
	case lockimpl.IsInTransaction(pl.Lock) && pl.Resource != "":
		p.fail("resource", "%s makes its protected write as part of the lock (in its transaction, or as its compare-and-set), on the topology's database; drop --resource", pl.Lock)
	}
}

// openPgResource keeps the protected resource in the PostgreSQL at url;
// its close deletes a lone run's rows and closes the pool.
func openPgResource(ctx context.Context, url string, pool int, prefix string) (bench.Protected, func(lone bool), error) {
	res, closePool, err := pgResource(ctx, url, pool, prefix)
	if err != nil {
		return nil, nil, err
	}
	return res, func(lone bool) {
		if lone {
			_, _ = res.DeletePrefix(context.WithoutCancel(ctx))
		}
		closePool()
	}, nil
}

// armPostgres reaches a postgres topology's server and builds the plan's
// PostgreSQL lock over a pool of its own, with the protected resource in
// the same database (unless --resource names another), server cost from
// pg_stat_database, and a cleanup that deletes the run's rows.
func armPostgres(ctx context.Context, pl Plan, env Env, id, prefix string, topo *compose.Topology) (armed, *results.Result, error) {
	version, err := topo.PgVersion(ctx)
	if err != nil {
		if ierr := interrupted(ctx, "while reaching the server"); ierr != nil {
			return armed{}, nil, ierr
		}
		return armed{}, nil, fmt.Errorf("%s does not answer: %w", topo.DataNodes()[0].Addr, err)
	}
	pool, err := topo.PgPool(ctx, pl.PoolSize, compose.PgLockApp)
	if err != nil {
		return armed{}, nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := lockimpl.EnsurePgLeaseSchema(sctx, pool); err != nil {
		return armed{}, nil, err
	}
	if err := resource.EnsurePgSchema(sctx, pool); err != nil {
		return armed{}, nil, err
	}
	locker, err := lockimpl.NewPg(pl.Lock, pool, resource.PgTable, pl.LockOptions.Redlock.NodeTimeout)
	if err != nil {
		return armed{}, nil, badInput("lock", "%v", err)
	}
	a := armed{locker: locker, meter: newCostMeter(topo.Addrs(), "pg_stat_database", topo.ReadPgStats),
		cleanUp: func(ctx context.Context, m *bench.Measurement, _ map[string]string, env Env) {
			cleanUpPg(ctx, pl, locker, pool, m, prefix, env)
		}}
	if pl.Lock == lockimpl.LockPgLease {
		a.remaining = pgLeaseRemaining(pool)
	}
	if pl.Resource == "" {
		rpool, err := topo.PgPool(ctx, pl.PoolSize, compose.PgResourceApp)
		if err != nil {
			return armed{}, nil, err
		}
		a.resource = resource.NewPostgres(rpool, prefix)
		a.resourceName = "postgres (the topology's database)"
	}
	r := newResult(id, pl, topo, locker, version, env)
	return a, r, nil
}

// cleanUpPg deletes the run's lease rows (pg-lease) and, for a lone run, the
// resource's rows; advisory locks end with their sessions. A generator of a
// shared run releases only the leases its own crashed holders left.
func cleanUpPg(ctx context.Context, pl Plan, locker lockimpl.Locker, pool *pgxpool.Pool, m *bench.Measurement, prefix string, env Env) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if pl.RunID != "" {
		env.logf("cleanup: released %d lease(s) left by crashed holders", releaseAbandoned(cctx, locker, m))
		return
	}
	released := releaseAbandoned(cctx, locker, m)
	var n int64
	var err error
	if l, ok := locker.(*lockimpl.PgLease); ok {
		n, err = l.DeletePrefix(cctx, prefix)
	}
	if err == nil && pl.Resource == "" {
		var k int64
		k, err = resource.NewPostgres(pool, prefix).DeletePrefix(cctx)
		n += k
	}
	if released > 0 {
		env.logf("cleanup: released %d lock(s) left by crashed holders", released)
	}
	logDeleted(env, prefix, int(n), err)
}

// pgResource opens the PostgreSQL --resource, with its tables.
func pgResource(ctx context.Context, url string, pool int, prefix string) (*resource.Postgres, func(), error) {
	p, err := compose.NewPgPool(ctx, url, pool, compose.PgResourceApp)
	if err != nil {
		return nil, nil, badInput("resource", "%s", strings.TrimPrefix(err.Error(), "--postgres "))
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := resource.EnsurePgSchema(sctx, p); err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("--resource %s: %w", compose.RedactURL(url), err)
	}
	return resource.NewPostgres(p, prefix), p.Close, nil
}

// pgLeaseRemaining reads the key's expiry column against the server's
// clock; a row whose expiry passed holds nobody, and is absent.
func pgLeaseRemaining(pool *pgxpool.Pool) remaining {
	return remaining{resolution: time.Microsecond, read: func(ctx context.Context, key string) (time.Duration, bool, error) {
		var us int64
		err := pool.QueryRow(ctx, `select (extract(epoch from expires - clock_timestamp()) * 1e6)::bigint from `+
			lockimpl.PgLeaseTable+` where key = $1 and expires > clock_timestamp()`, key).Scan(&us)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return 0, false, nil
		case err != nil:
			return 0, false, fmt.Errorf("expiry of %s: %w", key, err)
		}
		return time.Duration(us) * time.Microsecond, true, nil
	}}
}
