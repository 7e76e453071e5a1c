package plan

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// closedPort is a loopback address nothing listens on: a run against it
// fails to start.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestBatchStoresEveryRun runs plans through the batch runner against local
// redis-server processes and checks what it stored and handed back: each
// result in its plan's --out, repeats of one plan sharing a group, a lone
// run without one, and a run that cannot start failing with nothing stored.
func TestBatchStoresEveryRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flags     Values
		count     int
		cancelled bool
		runs      int
		grouped   bool
		wantErr   func(error) bool
	}{
		{name: "repeats share a group", count: 2, runs: 2, grouped: true},
		{name: "a lone run has no group", count: 1, runs: 1},
		{name: "two topologies, one run each", flags: Values{"topology": {"single", "redlock:2"}}, count: 1, runs: 2},
		{name: "an unreachable server fails, nothing stored", flags: Values{"redis": {"redis://" + closedPort(t)}}, count: 2,
			wantErr: func(err error) bool { return err != nil && !errors.Is(err, ErrInterrupted) }},
		{name: "interrupted before the window, nothing stored", count: 1, cancelled: true,
			wantErr: func(err error) bool { return errors.Is(err, ErrInterrupted) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			v := Values{"duration": {"300ms"}, "warmup": {"0"}, "out": {out}}
			for k, s := range tc.flags {
				v.Set(k, s...)
			}
			plans, err := Expand(v)
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			var stored []*results.Result
			b := Batch{Log: &log, Stored: func(dir string, r *results.Result) {
				if dir != out {
					t.Errorf("stored in %q, want %q", dir, out)
				}
				stored = append(stored, r)
			}}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancelled {
				cancel()
			}
			defer cancel()
			done, err := b.Run(ctx, plans, tc.count)
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("error %v, not the one wanted", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(done) != tc.runs || len(stored) != tc.runs {
				t.Fatalf("%d results handed back, %d stored, want %d", len(done), len(stored), tc.runs)
			}
			files, _ := filepath.Glob(filepath.Join(out, "*.json"))
			if len(files) != tc.runs {
				t.Errorf("%d result files in --out, want %d", len(files), tc.runs)
			}
			if n := strings.Count(log.String(), "result stored in "); n != tc.runs {
				t.Errorf("%d 'result stored in' lines, want %d:\n%s", n, tc.runs, log.String())
			}
			groups := map[any]bool{}
			for _, r := range done {
				groups[r.Config["group"]] = true
			}
			if _, lone := groups[nil]; tc.runs > 0 && lone == tc.grouped {
				t.Errorf("groups %v: grouped should be %v", groups, tc.grouped)
			}
			if tc.grouped && len(groups) != 1 {
				t.Errorf("repeats of one plan in %d groups, want 1", len(groups))
			}
		})
	}
}

// TestBatchRunValuesIsQuiet checks that a cell runs quietly (no step lines,
// whatever the batch's log) and is stored with its place among repeats.
func TestBatchRunValuesIsQuiet(t *testing.T) {
	out := t.TempDir()
	var log bytes.Buffer
	b := Batch{Log: &log}
	r, err := b.RunValues(context.Background(), Values{"duration": {"300ms"}, "warmup": {"0"}, "out": {out}}, "g-x", 1)
	if err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Errorf("a cell wrote step lines:\n%s", log.String())
	}
	if r.Config["group"] != "g-x" {
		t.Errorf("group %v, want g-x", r.Config["group"])
	}
	if _, err := os.Stat(filepath.Join(out, results.FileName(r.ID))); err != nil {
		t.Errorf("result not stored: %v", err)
	}
}
