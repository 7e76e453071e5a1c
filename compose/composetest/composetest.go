// Package composetest starts real redis-server processes for tests, on free
// loopback ports, and stops them when the test ends.
package composetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
)

// Server starts a redis-server for t and stops it at cleanup. A missing
// redis-server fails the test with the install hint rather than skipping it,
// so a CI machine without Redis cannot pass by testing nothing.
func Server(t testing.TB, opts compose.ServerOptions) *compose.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := compose.StartServer(ctx, opts)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// Servers starts n servers.
func Servers(t testing.TB, n int) []*compose.Server {
	t.Helper()
	out := make([]*compose.Server, n)
	for i := range out {
		out[i] = Server(t, compose.ServerOptions{})
	}
	return out
}

// Client returns a client for s, with lockbench's client settings (no
// automatic retries), closed at cleanup.
func Client(t testing.TB, s *compose.Server) *redis.Client {
	t.Helper()
	return ClientAt(t, s.Addr())
}

// ClientAt is Client for any address (a proxy in front of a server, say).
func ClientAt(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ContextTimeoutEnabled: true,
		DisableIdentity: true, PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Clients returns one client per server.
func Clients(t testing.TB, servers []*compose.Server) []*redis.Client {
	t.Helper()
	out := make([]*redis.Client, len(servers))
	for i, s := range servers {
		out[i] = Client(t, s)
	}
	return out
}

// PgServer starts a local PostgreSQL for t and stops it at cleanup; missing
// binaries fail the test with the install hint.
func PgServer(t testing.TB) *compose.PgServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := compose.StartPgServer(ctx)
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// PgPool returns a pool on s with room for n sessions named app, closed at
// cleanup (before the server stops).
func PgPool(t testing.TB, s *compose.PgServer, n int, app string) *pgxpool.Pool {
	t.Helper()
	p, err := compose.NewPgPool(context.Background(), s.URL(), n, app)
	if err != nil {
		t.Fatal(err)
	}
	// Close waits for every acquired connection; a test that failed while
	// holding one (a pinned lock session) would hang there for good, so the
	// wait is bounded and the server's stop ends what is left.
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { p.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Logf("pool %s: connections still held after 10s; the server's stop ends them", app)
		}
	})
	return p
}

// Main runs a package's tests with go-redis's own log lines held back, then
// fails the run if any local PostgreSQL, ZooKeeper or NATS server a test
// started left a process or a data directory. go-redis logs every failed dial by itself ("failed to
// dial after 5 attempts"), which tests that stop or pause servers provoke on
// purpose: a passing package prints none of them, a failing one prints them
// all after its tests, where they may explain the failure.
func Main(m *testing.M) int {
	held := &HeldLog{}
	redis.SetLogger(held)
	code := m.Run()
	if code != 0 {
		held.PrintTo(os.Stderr)
	}
	left := compose.PgLeftovers(os.Getpid())
	left = append(left, compose.ZkLeftovers(os.Getpid())...)
	left = append(left, compose.NatsLeftovers(os.Getpid())...)
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: tests left local servers behind (PostgreSQL, ZooKeeper, NATS):\n  %s\n", strings.Join(left, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	return code
}
