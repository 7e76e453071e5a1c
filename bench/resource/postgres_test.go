package resource_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/bench/resource"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// pgResourceFixture starts a local PostgreSQL with the resource's tables.
func pgResourceFixture(t *testing.T) (*pgxpool.Pool, *resource.Postgres) {
	t.Helper()
	s := composetest.PgServer(t)
	pool := composetest.PgPool(t, s, 40, compose.PgLockApp)
	if err := resource.EnsurePgSchema(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	if err := lockimpl.EnsurePgLeaseSchema(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool, resource.NewPostgres(pool, "lb:t:")
}

// TestPgResourceVerdicts: the database refuses an older fencing token,
// tells a stale unfenced write from a live one, and refuses a
// compare-and-set whose version moved; overlaps and blocked time are seen.
func TestPgResourceVerdicts(t *testing.T) {
	pool, r := pgResourceFixture(t)
	ctx := context.Background()
	enter := func(k int) (bench.Entry, bool, time.Duration) {
		t.Helper()
		now := time.Now()
		e, overlap, blocked, _, err := r.Enter(ctx, k, bench.Grant{At: now, ValidUntil: now.Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		return e, overlap != bench.NoOverlap, blocked
	}
	write := func(e bench.Entry, l lockimpl.Lease, expired bool) bench.WriteVerdict {
		t.Helper()
		v, _, err := r.Write(ctx, e, l, expired)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ttl := lockimpl.Lease{Validity: time.Second}

	// Fencing: token 5 written, then token 4 refused by the statement.
	e1, overlap, _ := enter(1)
	now := time.Now()
	e2, cause, _, _, err := r.Enter(ctx, 1, bench.Grant{At: now, ValidUntil: now.Add(time.Second)})
	if err != nil || overlap || cause != bench.DoubleGrant {
		t.Fatalf("overlap %v, then %v (%v); want none, then a double grant (the first holder's lease is still valid)", overlap, cause, err)
	}
	f5, f4 := ttl, ttl
	f5.Fence, f4.Fence = 5, 4
	if v := write(e2, f5, false); v != bench.WriteAccepted {
		t.Fatalf("fence 5: %v, want accepted", v)
	}
	if v := write(e1, f4, true); v != bench.WriteFencingRejected {
		t.Fatalf("fence 4 after 5: %v, want rejected", v)
	}

	// Unfenced: the older entry's write after the newer one's is stale
	// when its lease expired, or has no TTL; not when it is live.
	a, _, _ := enter(2)
	b, _, _ := enter(2)
	if v := write(b, ttl, false); v != bench.WriteAccepted {
		t.Fatalf("newer unfenced write: %v", v)
	}
	if v := write(a, ttl, false); v != bench.WriteAccepted {
		t.Fatalf("older write by a live lease: %v, want accepted (an overlap, not a stale write)", v)
	}
	if v := write(a, ttl, true); v != bench.WriteStaleAccepted {
		t.Fatalf("older write by an expired lease: %v, want stale accepted", v)
	}
	if v := write(a, lockimpl.Lease{Validity: lockimpl.NoExpiry}, false); v != bench.WriteStaleAccepted {
		t.Fatalf("older write by a lease without TTL: %v, want stale accepted", v)
	}

	// Compare-and-set: two readers of version 0, the second write conflicts.
	occ := lockimpl.NewOCC(pool, resource.PgTable, 0)
	r1, _, _ := occ.Acquire(ctx, "lb:t:3", time.Second)
	r2, _, _ := occ.Acquire(ctx, "lb:t:3", time.Second)
	if v := write(bench.NewEntry(3, 0), r1, false); v != bench.WriteAccepted {
		t.Fatalf("first compare-and-set: %v", v)
	}
	if v := write(bench.NewEntry(3, 0), r2, false); v != bench.WriteConflict {
		t.Fatalf("second compare-and-set on the same version: %v, want conflict", v)
	}
	r3, _, _ := occ.Acquire(ctx, "lb:t:3", time.Second)
	if v, _ := lockimpl.ExpectedVersion(r3); v != 1 {
		t.Fatalf("version after one write: %d, want 1", v)
	}
	if v := write(bench.NewEntry(3, 0), r3, false); v != bench.WriteAccepted {
		t.Fatalf("compare-and-set on the current version: %v", v)
	}

	// Blocked time: an abandoned key's next entry measures the gap.
	c, _, _ := enter(4)
	if _, err := r.Abandon(ctx, c, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if _, overlap, blocked := enter(4); overlap || blocked < 25*time.Millisecond || blocked > 5*time.Second {
		t.Fatalf("entry after an abandon: overlap %v, blocked %v; want none and about 30ms", overlap, blocked)
	}
	if n, err := r.DeletePrefix(ctx); err != nil || n == 0 {
		t.Fatalf("delete prefix: %d, %v", n, err)
	}
}

// TestRunOCCCountsConflictsAsContention: on one key, optimistic writers
// conflict; each conflict is a contended attempt, each acquisition a
// committed write, and the version moved once per acquisition.
func TestRunOCCCountsConflictsAsContention(t *testing.T) {
	pool, r := pgResourceFixture(t)
	occ := lockimpl.NewOCC(pool, resource.PgTable, 0)
	keys, kerr := workloads.ParseKeys("uniform:1")
	hold, herr := workloads.ParseDist("1ms")
	if kerr != nil || herr != nil {
		t.Fatal(kerr, herr)
	}
	wl := workloads.Workload{Keys: keys, TTL: time.Second, Hold: hold}
	opts := bench.Options{Concurrency: 8, Duration: 700 * time.Millisecond, KeyPrefix: "lb:t:", Resource: r,
		Retry: lockimpl.RetryPolicy{Kind: lockimpl.RetryExp, Delay: 100 * time.Microsecond, Cap: 2 * time.Millisecond, Timeout: time.Second}}
	res := runPg(t, occ, wl, opts)
	c := res.Contention
	// An attempt the retry timeout cut short (a loaded machine stretches the
	// conflicts' backoff) is a failed attempt, neither acquired nor contended.
	failed := res.Ops[results.OpAcquireFailed].Count
	if c.Acquired == 0 || c.Contended == 0 || c.Attempts != c.Acquired+c.Contended+failed {
		t.Fatalf("contention %+v, %d failed (%v): want acquisitions, conflicts, and attempts = acquired + contended + failed",
			c, failed, res.Errors)
	}
	if res.Incidents.Total() != 0 {
		t.Fatalf("incidents %+v with compare-and-set writes", res.Incidents)
	}
	var version int64
	if err := pool.QueryRow(context.Background(), "select version from "+resource.PgTable+" where key = 'lb:t:0'").Scan(&version); err != nil {
		t.Fatal(err)
	}
	// Each committed write moved the version once: every counted
	// acquisition is one, and at most one try per worker, whose read ended
	// just after the window closed, wrote uncounted.
	if version < c.Acquired || version > c.Acquired+int64(opts.Concurrency) {
		t.Fatalf("version %d after %d acquisitions; want that many, plus at most one uncounted write per worker", version, c.Acquired)
	}
}

// runPg runs l through bench.Run and fills a result from its measurement.
func runPg(t *testing.T, l lockimpl.Locker, wl workloads.Workload, opts bench.Options) *results.Result {
	t.Helper()
	m, err := bench.Run(context.Background(), l, wl, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Result{}
	if err := m.Fill(r); err != nil {
		t.Fatal(err)
	}
	return r
}
