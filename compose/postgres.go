package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Application names of a postgres topology's sessions, so that a fault can
// tell the lock's sessions from the resource's and its own.
const (
	// PgLockApp names the lock's sessions.
	PgLockApp = "lockbench-lock"
	// PgResourceApp names the protected resource's sessions.
	PgResourceApp = "lockbench-resource"
	// pgAdminApp names the topology's own session (faults, version).
	pgAdminApp = "lockbench-admin"
)

// pgNode is what the node of a postgres topology knows besides its address.
type pgNode struct {
	// server is the local server, nil for an external one.
	server *PgServer
	// url reaches the server directly, with its password if any.
	url string
}

// upPostgres initialises and starts a local server.
func (t *Topology) upPostgres(ctx context.Context) error {
	if t.opts.Persistence != "" && t.opts.Persistence != PersistNone {
		return fmt.Errorf("persistence %s is a Redis setting; PostgreSQL always keeps its write-ahead log", t.opts.Persistence)
	}
	if t.opts.ClockShim {
		return errors.New("the clock shim is for redis-server; clock faults need Redis topologies")
	}
	t.logf("initialising a PostgreSQL cluster in a temporary directory")
	srv, err := StartPgServer(ctx)
	if err != nil {
		return err
	}
	t.addCleanup(srv.Stop)
	t.Nodes = append(t.Nodes, &Node{Name: "postgres-0", Role: RolePostgres, Addr: srv.Addr(), payload: &pgNode{server: srv, url: srv.URL()}})
	return nil
}

// upPostgresExternal reaches the server at the --postgres URL.
func (t *Topology) upPostgresExternal() error {
	if len(t.opts.URLs) != 1 {
		return fmt.Errorf("topology postgres needs one --postgres URL, got %d", len(t.opts.URLs))
	}
	raw := t.opts.URLs[0]
	if err := ParsePgURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	t.Provider = ProviderExternal
	t.Nodes = append(t.Nodes, &Node{Name: "postgres-0", Role: RolePostgres, Addr: host, payload: &pgNode{url: raw}})
	return nil
}

// pgNodeOf is the topology's server node.
func (t *Topology) pgNodeOf() (*Node, error) {
	for _, n := range t.DataNodes() {
		if n.pgOf() != nil {
			return n, nil
		}
	}
	return nil, fmt.Errorf("topology %s is not postgres", t.Spec)
}

// PgURL is the URL the run's sessions use: through the node's proxy when
// it has one. It may carry the server's password: never print it, use
// RedactURL.
func (t *Topology) PgURL() (string, error) {
	n, err := t.pgNodeOf()
	if err != nil {
		return "", err
	}
	return n.viaProxy(n.pgOf().url)
}

// PgPool opens a pool of up to size sessions named app on the topology's
// server (through its proxy, if any); Close closes it before the server
// stops.
func (t *Topology) PgPool(ctx context.Context, size int, app string) (*pgxpool.Pool, error) {
	u, err := t.PgURL()
	if err != nil {
		return nil, err
	}
	p, err := NewPgPool(ctx, u, size, app)
	if err != nil {
		return nil, err
	}
	t.trackCloser(poolCloser{p})
	return p, nil
}

// poolCloser closes a pgx pool as an io.Closer.
type poolCloser struct{ p *pgxpool.Pool }

func (c poolCloser) Close() error { c.p.Close(); return nil }

// pgAdmin runs f on a short-lived session straight to the server (not
// through its proxy: faults act around the path the lock uses, not on it).
func (t *Topology) pgAdmin(ctx context.Context, f func(ctx context.Context, c *pgx.Conn) error) error {
	n, err := t.pgNodeOf()
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(n.pgOf().url)
	if err != nil {
		return fmt.Errorf("postgres URL %s: %s", RedactURL(n.pgOf().url), redactErr(err, n.pgOf().url))
	}
	cfg.RuntimeParams["application_name"] = pgAdminApp
	cfg.ConnectTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to %s: %s", n.Addr, redactErr(err, n.pgOf().url))
	}
	defer c.Close(context.WithoutCancel(ctx))
	return f(ctx, c)
}

// PgVersion is the server's version as it reports it ("PostgreSQL 15.x …").
func (t *Topology) PgVersion(ctx context.Context) (string, error) {
	var v string
	err := t.pgAdmin(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "select split_part(version(), ' on ', 1)").Scan(&v)
	})
	return v, err
}

// terminateHolder ends one lock holder's session with
// pg_terminate_backend: a session holding an advisory lock if there is one
// (the holder keeps working, unaware), else a lock session in a
// transaction, else any lock session. It names the backend it ended.
// Only the lock's sessions (PgLockApp) are candidates: the protected
// resource's sessions take a transaction-level advisory lock per event too,
// and ending one of those would break the measuring instrument (an exit
// committed but reported failed), not a holder's lock.
func (t *Topology) terminateHolder(ctx context.Context) (string, error) {
	var pid int32
	var why string
	err := t.pgAdmin(ctx, func(ctx context.Context, c *pgx.Conn) error {
		err := c.QueryRow(ctx, `select pid, what from (
  select l.pid, 'advisory lock holder' as what, 0 as rank from pg_locks l
    join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and a.application_name = $1
  union all
  select a.pid, 'lock session in a transaction', 1 from pg_stat_activity a
    where a.application_name = $1 and a.xact_start is not null
  union all
  select a.pid, 'lock session', 2 from pg_stat_activity a where a.application_name = $1
) c order by rank, random() limit 1`, PgLockApp).Scan(&pid, &why)
		if errors.Is(err, pgx.ErrNoRows) {
			return errors.New("no lock session to terminate")
		}
		if err != nil {
			return err
		}
		var ok bool
		// The timeout makes it wait for the backend to end: only then are its
		// locks free, and only then has the fault happened.
		if err := c.QueryRow(ctx, "select pg_terminate_backend($1, 5000)", pid).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("backend %d had already gone or did not end within 5s", pid)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("terminate holder: %w", err)
	}
	return fmt.Sprintf("backend %d (%s)", pid, why), nil
}

// PgServer is the node's local PostgreSQL server, or nil.
func (n *Node) PgServer() *PgServer {
	if n.pgOf() == nil {
		return nil
	}
	return n.pgOf().server
}

// ReadPgStats reads the server's cost counters: transactions committed and
// rolled back in the run's database (pg_stat_database, which backends
// flush about once a second, so a reading may lag by that much), and the
// CPU time of the local server's processes (postgres and its backends as
// they are at the reading; a backend that ended took its share with it). An
// external server's CPU is not readable, which the error says.
func (t *Topology) ReadPgStats(ctx context.Context, _ int) (ServerStats, error) {
	s := ServerStats{Calls: map[string]int64{}}
	err := t.pgAdmin(ctx, func(ctx context.Context, c *pgx.Conn) error {
		var commit, rollback int64
		if err := c.QueryRow(ctx, `select xact_commit, xact_rollback from pg_stat_database where datname = current_database()`).Scan(&commit, &rollback); err != nil {
			return err
		}
		s.Calls["xact_commit"], s.Calls["xact_rollback"] = commit, rollback
		return nil
	})
	if err != nil {
		return ServerStats{}, fmt.Errorf("pg_stat_database: %w", err)
	}
	n, _ := t.pgNodeOf()
	if n == nil || n.pgOf().server == nil {
		return ServerStats{}, errors.New("an external server's CPU time cannot be read")
	}
	s.CPUSeconds = n.pgOf().server.cpuSeconds()
	return s, nil
}
