package lockimpl_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// pgFixture is one local PostgreSQL for a test, with a pool for the locks
// and one for the test's own look-ups.
type pgFixture struct {
	locks, admin *pgxpool.Pool
}

func newPgFixture(t *testing.T) pgFixture {
	t.Helper()
	s := composetest.PgServer(t)
	f := pgFixture{locks: composetest.PgPool(t, s, 40, compose.PgLockApp), admin: composetest.PgPool(t, s, 4, "test")}
	if err := lockimpl.EnsurePgLeaseSchema(context.Background(), f.admin); err != nil {
		t.Fatal(err)
	}
	return f
}

// terminateHolders ends every session holding an advisory lock and says how
// many; it waits (up to 5 s) for each backend to be gone, since a backend
// frees its locks only as it exits, after pg_terminate_backend returned.
func (f pgFixture) terminateHolders(t *testing.T) int {
	t.Helper()
	var n int
	err := f.admin.QueryRow(context.Background(),
		`select count(pg_terminate_backend(pid, 5000)) from pg_locks where locktype = 'advisory' and granted`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPgLocksMutualExclusion runs 16 contenders on one key for each lock
// that excludes: none may ever be inside with another.
func TestPgLocksMutualExclusion(t *testing.T) {
	f := newPgFixture(t)
	for _, l := range []lockimpl.Locker{
		lockimpl.NewPgAdvisory(f.locks, 0), lockimpl.NewPgAdvisoryXact(f.locks, 0), lockimpl.NewPgLease(f.locks, 0),
	} {
		t.Run(l.Info().Name, func(t *testing.T) {
			ctx := context.Background()
			var inside, acquired, contended, overlaps atomic.Int64
			deadline := time.Now().Add(800 * time.Millisecond)
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for time.Now().Before(deadline) {
						lease, out, err := l.Acquire(ctx, "lb:test:mutex", time.Second)
						if err != nil {
							t.Errorf("acquire: %v", err)
							return
						}
						if out != lockimpl.OK {
							contended.Add(1)
							continue
						}
						if inside.Add(1) != 1 {
							overlaps.Add(1)
						}
						acquired.Add(1)
						time.Sleep(200 * time.Microsecond)
						inside.Add(-1)
						if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
							t.Errorf("release: %v, %v", out, err)
						}
					}
				})
			}
			wg.Wait()
			if acquired.Load() == 0 || contended.Load() == 0 || overlaps.Load() != 0 {
				t.Fatalf("acquired %d, contended %d, overlaps %d; want some, some and none", acquired.Load(), contended.Load(), overlaps.Load())
			}
		})
	}
}

// TestPgAdvisoryTerminatedSessionFreesTheLock: a holder's session ended
// under it frees the key for another holder while the first still believes
// it holds it, and the first holder's release is lost.
func TestPgAdvisoryTerminatedSessionFreesTheLock(t *testing.T) {
	f := newPgFixture(t)
	l := lockimpl.NewPgAdvisory(f.locks, 0)
	ctx := context.Background()
	key := "lb:test:terminate"
	a, out, err := l.Acquire(ctx, key, time.Second)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if _, out, _ := l.Acquire(ctx, key, time.Second); out != lockimpl.Contended {
		t.Fatalf("second acquire while held: %v, want contended", out)
	}
	if n := f.terminateHolders(t); n != 1 {
		t.Fatalf("terminated %d holders, want 1", n)
	}
	b, out, err := l.Acquire(ctx, key, time.Second)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after the holder's session ended: %v, %v; want ok", out, err)
	}
	if out, err := l.Release(ctx, a); out != lockimpl.Lost || err != nil {
		t.Fatalf("release by the terminated holder: %v, %v; want lost", out, err)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("release by the live holder: %v, %v; want ok", out, err)
	}
	if a.Expires() || a.Fence != 0 {
		t.Fatalf("advisory lease: expires %v, fence %d; want no expiry and no fence", a.Expires(), a.Fence)
	}
}

// TestPgAdvisoryXactWriteDiesWithTheSession: the protected write made in
// the lease's transaction does not survive the session's end.
func TestPgAdvisoryXactWriteDiesWithTheSession(t *testing.T) {
	f := newPgFixture(t)
	ctx := context.Background()
	if _, err := f.admin.Exec(ctx, "create table w (k text primary key, v int)"); err != nil {
		t.Fatal(err)
	}
	l := lockimpl.NewPgAdvisoryXact(f.locks, 0)
	write := func(lease lockimpl.Lease, v int) error {
		tx := lockimpl.PgTx(lease)
		if tx == nil {
			t.Fatal("xact lease has no transaction")
		}
		_, err := tx.Exec(ctx, "insert into w values ('k', $1) on conflict (k) do update set v = excluded.v", v)
		return err
	}
	a, out, err := l.Acquire(ctx, "lb:test:xact", time.Second)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if err := write(a, 1); err != nil {
		t.Fatal(err)
	}
	if n := f.terminateHolders(t); n != 1 {
		t.Fatalf("terminated %d holders, want 1", n)
	}
	b, out, err := l.Acquire(ctx, "lb:test:xact", time.Second)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after the holder's session ended: %v, %v", out, err)
	}
	if err := write(b, 2); err != nil {
		t.Fatal(err)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("commit of the live holder: %v, %v", out, err)
	}
	if err := write(a, 3); err == nil {
		t.Fatal("a write in a terminated session's transaction succeeded")
	}
	if out, err := l.Release(ctx, a); out != lockimpl.Lost {
		t.Fatalf("commit of the terminated holder: %v (%v), want lost", out, err)
	}
	var v int
	if err := f.admin.QueryRow(ctx, "select v from w where k = 'k'").Scan(&v); err != nil || v != 2 {
		t.Fatalf("row holds %d (%v); want 2, the live holder's write only", v, err)
	}
}

// TestPgLeaseExpiryAndFencing: a lease expires by the database's clock,
// the next holder gets a larger fencing token, and the first holder's
// renewal and release find the key taken.
func TestPgLeaseExpiryAndFencing(t *testing.T) {
	f := newPgFixture(t)
	l := lockimpl.NewPgLease(f.locks, 0)
	ctx := context.Background()
	key := "lb:test:lease"
	a, out, err := l.Acquire(ctx, key, 100*time.Millisecond)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v, %v", out, err)
	}
	if out, err := l.Renew(ctx, &a, 100*time.Millisecond); out != lockimpl.OK || err != nil {
		t.Fatalf("renew while held: %v, %v", out, err)
	}
	if _, out, _ := l.Acquire(ctx, key, time.Second); out != lockimpl.Contended {
		t.Fatalf("acquire while held: %v, want contended", out)
	}
	time.Sleep(150 * time.Millisecond)
	b, out, err := l.Acquire(ctx, key, time.Second)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire after expiry: %v, %v", out, err)
	}
	if b.Fence <= a.Fence {
		t.Fatalf("fence %d after %d; want larger", b.Fence, a.Fence)
	}
	if out, _ := l.Renew(ctx, &a, time.Second); out != lockimpl.Taken {
		t.Fatalf("renew of the expired lease: %v, want taken", out)
	}
	if out, _ := l.Release(ctx, a); out != lockimpl.Taken {
		t.Fatalf("release of the expired lease: %v, want taken", out)
	}
	if out, err := l.Release(ctx, b); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v, %v", out, err)
	}
	if n, err := l.DeletePrefix(ctx, "lb:test:"); err != nil || n != 0 {
		t.Fatalf("delete prefix after release: %d, %v; want 0 rows", n, err)
	}
}

// TestPgNoTTLLocksRefuseRenewal: the locks without a TTL refuse renewal
// with ErrNoRenewal, named no_renewal in the error counters.
func TestPgNoTTLLocksRefuseRenewal(t *testing.T) {
	f := newPgFixture(t)
	if _, err := f.admin.Exec(context.Background(), "create table v (key text primary key, version bigint)"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []lockimpl.Locker{lockimpl.NewPgAdvisory(f.locks, 0), lockimpl.NewPgAdvisoryXact(f.locks, 0), lockimpl.NewOCC(f.locks, "v", 0)} {
		ctx := context.Background()
		lease, out, err := l.Acquire(ctx, "lb:test:renew", time.Second)
		if out != lockimpl.OK || err != nil {
			t.Fatalf("%s acquire: %v, %v", l.Info().Name, out, err)
		}
		out, err = l.Renew(ctx, &lease, time.Second)
		if out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrNoRenewal) || lockimpl.ErrorKind(err) != "no_renewal" {
			t.Fatalf("%s renew: %v, %v; want failed with ErrNoRenewal", l.Info().Name, out, err)
		}
		if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
			t.Fatalf("%s release: %v, %v", l.Info().Name, out, err)
		}
	}
}

// TestOCCReadsTheVersion: an optimistic acquisition reads the row's version
// (0 before any write) and is never contended.
func TestOCCReadsTheVersion(t *testing.T) {
	f := newPgFixture(t)
	ctx := context.Background()
	if _, err := f.admin.Exec(ctx, "create table v (key text primary key, version bigint); insert into v values ('lb:a', 7)"); err != nil {
		t.Fatal(err)
	}
	l := lockimpl.NewOCC(f.locks, "v", 0)
	for key, want := range map[string]int64{"lb:a": 7, "lb:b": 0} {
		lease, out, err := l.Acquire(ctx, key, time.Second)
		got, ok := lockimpl.ExpectedVersion(lease)
		if out != lockimpl.OK || err != nil || !ok || got != want {
			t.Fatalf("acquire %s: %v, %v, version %d (%v); want ok and %d", key, out, err, got, ok, want)
		}
	}
	if _, ok := lockimpl.ExpectedVersion(lockimpl.Lease{}); ok {
		t.Fatal("a lease of another lock has an expected version")
	}
}
