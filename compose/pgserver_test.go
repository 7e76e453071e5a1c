package compose

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgServerLifecycle starts a server, crashes and restarts it, stops it,
// and checks that no process of it and no directory is left.
func TestPgServerLifecycle(t *testing.T) {
	if _, err := pgBin("postgres"); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := StartPgServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Stopped on a failure too, so a failing test leaves nothing either.
	t.Cleanup(func() { _ = s.Stop() })
	pids := append([]int{s.PID()}, s.backends()...)
	query := func() error {
		c, err := pgx.Connect(ctx, s.URL())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		var one int
		return c.QueryRow(ctx, "select 1").Scan(&one)
	}
	if err := query(); err != nil {
		t.Fatalf("query a fresh server: %v", err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := query(); err == nil {
		t.Fatal("a killed server still answers")
	}
	if err := s.Start(ctx); err != nil {
		t.Fatalf("restart after a crash: %v", err)
	}
	if err := query(); err != nil {
		t.Fatalf("query after restart: %v", err)
	}
	pids = append(pids, s.PID())
	pids = append(pids, s.backends()...)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d of the server still runs after Stop", p)
		}
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("data directory %s left after Stop (stat: %v)", s.Dir(), err)
	}
}
