package compose

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
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

// TestPgServersFromTemplate starts servers with an empty cache, two of them
// at once (both initdb, one template wins), then two more from the cached
// template: every one starts, owns its data directory as the server's user,
// and is independent (a table made on one is absent from the others).
func TestPgServersFromTemplate(t *testing.T) {
	if _, err := pgBin("postgres"); err != nil {
		t.Skip(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func(n int) []*PgServer {
		servers := make([]*PgServer, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				servers[i], errs[i] = StartPgServer(ctx)
			}()
		}
		wg.Wait()
		for i, s := range servers {
			if s != nil {
				t.Cleanup(func() { _ = s.Stop() })
			}
			if errs[i] != nil {
				t.Fatalf("server %d: %v", i, errs[i])
			}
		}
		return servers
	}
	servers := start(2)
	initdb, _ := pgBin("initdb")
	tmpl := pgTemplateDir(ctx, initdb, []string{"-U", pgUser, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"}, servers[0].cred)
	if _, err := os.Stat(filepath.Join(pgTemplateData(tmpl), "PG_VERSION")); err != nil {
		t.Fatalf("no template cached after the first servers: %v", err)
	}
	if left, _ := filepath.Glob(tmpl + ".tmp-*"); len(left) > 0 {
		t.Errorf("a racing save left %v", left)
	}
	servers = append(servers, start(2)...)
	for i, s := range servers {
		if s.cred != nil {
			var st syscall.Stat_t
			if err := syscall.Stat(s.dataDir(), &st); err != nil || st.Uid != s.cred.Uid {
				t.Errorf("server %d: data dir owned by %d (%v), want the server's user %d", i, st.Uid, err, s.cred.Uid)
			}
		}
		c, err := pgx.Connect(ctx, s.URL())
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
		_, err = c.Exec(ctx, fmt.Sprintf("create table only_on_%d (x int)", i))
		var tables int
		if err == nil {
			err = c.QueryRow(ctx, "select count(*) from pg_tables where tablename like 'only_on_%'").Scan(&tables)
		}
		_ = c.Close(ctx)
		if err != nil || tables != 1 {
			t.Errorf("server %d sees %d only_on_ tables (%v), want its own one", i, tables, err)
		}
	}
}

// TestRemoveStaleCopies: a template copy older than the bound (one left by
// a process killed mid-save) is removed; a fresh one (a save under way),
// the template itself and another name's copy are kept.
func TestRemoveStaleCopies(t *testing.T) {
	parent := t.TempDir()
	now := time.Now()
	dirs := map[string]time.Duration{
		"pg-template-ab.tmp-111": time.Hour,   // stale: removed
		"pg-template-ab.tmp-222": time.Second, // a save under way: kept
		"pg-template-ab":         time.Hour,   // the template: kept
		"pg-template-cd.tmp-333": time.Hour,   // another template's: kept
	}
	for name, age := range dirs {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleCopies(parent, "pg-template-ab.tmp-", 10*time.Minute, now)
	for name := range dirs {
		_, err := os.Stat(filepath.Join(parent, name))
		if gone, want := err != nil, name == "pg-template-ab.tmp-111"; gone != want {
			t.Errorf("%s: removed %v, want %v (stat: %v)", name, gone, want, err)
		}
	}
	removeStaleCopies(filepath.Join(parent, "absent"), "x", time.Minute, now) // no directory: nothing to do, no panic
}
