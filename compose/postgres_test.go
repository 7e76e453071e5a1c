package compose_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lockbench/lockbench/compose"
)

// TestPostgresTopology brings a local postgres up, ends a lock session
// holding an advisory lock with terminate holder, crashes and restarts the
// server through the proxy, and checks Close leaves no process and no
// directory behind.
func TestPostgresTopology(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec, err := compose.ParseSpec("postgres")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := compose.Up(ctx, spec, compose.UpOptions{Proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	// A cleanup, not a defer: Close closes the pools it handed out, which
	// waits for their connections, and the sessions advisoryHolder took
	// register their release as cleanups after this one, so they run first
	// when the test fails holding them.
	t.Cleanup(func() {
		if !closed {
			_ = topo.Close()
		}
	})
	n := topo.DataNodes()[0]
	if n.ProxyAddr == "" || n.Role != compose.RolePostgres {
		t.Fatalf("node %+v: want a postgres node behind a proxy", n)
	}
	if v, err := topo.PgVersion(ctx); err != nil || !strings.HasPrefix(v, "PostgreSQL ") {
		t.Fatalf("version %q, %v", v, err)
	}
	pool, err := topo.PgPool(ctx, 4, compose.PgLockApp)
	if err != nil {
		t.Fatal(err)
	}
	conn := advisoryHolder(t, ctx, pool, "select pg_advisory_lock(42)")
	// The protected resource's sessions take advisory locks of their own;
	// the fault must never pick one of them (it would break the instrument,
	// not a holder's lock). Four of them beside one holder: a fault that
	// picked among all five would miss the holder four times in five.
	const resourceSessions = 4
	rpool, err := topo.PgPool(ctx, resourceSessions, compose.PgResourceApp)
	if err != nil {
		t.Fatal(err)
	}
	var rconns []*pgxpool.Conn
	for i := range resourceSessions {
		rconns = append(rconns, advisoryHolder(t, ctx, rpool, fmt.Sprintf("select pg_advisory_lock(1, %d)", i)))
	}
	f, _ := compose.ParseFault("at=0s terminate holder")
	if _, err := topo.Apply(ctx, f); err != nil {
		t.Fatalf("terminate holder: %v", err)
	}
	if _, err := conn.Exec(ctx, "select 1"); err == nil {
		t.Fatal("the holder's session still answers after terminate")
	}
	conn.Release()
	for i, rc := range rconns {
		if _, err := rc.Exec(ctx, "select pg_advisory_unlock(1, $1)", i); err != nil {
			t.Fatalf("resource session %d was terminated instead of (or with) the holder's: %v", i, err)
		}
		rc.Release()
	}
	rpool.Close()

	restart, _ := compose.ParseFault("at=0s restart node=0")
	undo, err := topo.Apply(ctx, restart)
	if err != nil {
		t.Fatal(err)
	}
	if down := topo.Down(); len(down) != 1 {
		t.Fatalf("down after the kill: %v, want the server", down)
	}
	if err := undo(); err != nil {
		t.Fatalf("start again: %v", err)
	}
	var one int
	if err := pool.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		t.Fatalf("query through the proxy after the restart: %v", err)
	}
	dir := n.PgServer().Dir()
	pids := n.PgServer().Processes()
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data directory %s left after Close (%v)", dir, err)
	}
	for _, p := range pids {
		if compose.ProcessAlive(p) {
			t.Errorf("postgres process %d left after Close", p)
		}
	}
}

// advisoryHolder takes a session from pool and has it take an advisory lock
// with lock (a statement), so that it holds one as a fault looks.
func advisoryHolder(t *testing.T, ctx context.Context, pool *pgxpool.Pool, lock string) *pgxpool.Conn {
	t.Helper()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release) // a second Release is a no-op
	if _, err := conn.Exec(ctx, lock); err != nil {
		t.Fatal(err)
	}
	return conn
}
