package lockimpl

import (
	"context"
	"errors"
	"runtime/debug"
	"syscall"
	"testing"

	"github.com/go-redsync/redsync/v4"
)

// The errors below are built the way redsync v4's actOnPoolsAsync builds
// them: errors.Join folded one master at a time, pointers to its types.
func joined(errs ...error) error {
	var err error
	for _, e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

func nodeDown(i int) error  { return &redsync.RedisError{Node: i, Err: syscall.ECONNREFUSED} }
func nodeTaken(i int) error { return &redsync.ErrNodeTaken{Node: i} }

func TestRedsyncAcquireOutcome(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	for _, tc := range []struct {
		name  string
		nodes int
		ctx   context.Context
		err   error
		want  Outcome
		kind  string
	}{
		{"quorum taken", 5, live, &redsync.ErrTaken{Nodes: []int{0, 1, 2}}, Contended, ""},
		{"one master, taken", 1, live, &redsync.ErrTaken{Nodes: []int{0}}, Contended, ""},
		{"one master, down", 1, live, joined(nodeDown(0)), Failed, "conn_refused"},
		{"two taken, one down of 5: the down one decides, a split vote", 5, live,
			joined(nodeTaken(0), nodeTaken(1), nodeDown(2)), Failed, "split_vote"},
		{"two down of 5, none taken: no quorum", 5, live,
			joined(nodeDown(0), nodeDown(1)), Failed, "no_quorum"},
		{"three taken, two down of 5: contended regardless", 5, live,
			joined(nodeTaken(0), nodeDown(1), nodeTaken(2), nodeDown(3), nodeTaken(4)), Contended, ""},
		{"two of four taken, none down: no quorum possible", 4, live, joined(nodeTaken(0), nodeTaken(1)), Contended, ""},
		{"quorum too late", 5, live, redsync.ErrFailed, Failed, "validity_expired"},
		{"fail-fast quorum too late, one taken", 5, live, joined(nodeTaken(4)), Failed, "validity_expired"},
		{"cancelled between tries", 3, cancelled, redsync.ErrFailed, Failed, "canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Redsync{nodes: tc.nodes}
			out, err := r.acquireOutcome(tc.ctx, tc.err)
			if out != tc.want {
				t.Fatalf("outcome %v (%v), want %v", out, err, tc.want)
			}
			if (err == nil) != (tc.kind == "") || ErrorKind(err) != tc.kind {
				t.Fatalf("error %v of kind %q, want kind %q", err, ErrorKind(err), tc.kind)
			}
		})
	}
}

func TestRedsyncRenewAndReleaseOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    string
		nodes int
		err   error
		want  Outcome
		kind  string
	}{
		// Extend's script answers 0 for a key gone and one held by another
		// alike: redsync reports both as taken, lockbench as lost.
		{"quorum refused", "renew", 3, &redsync.ErrTaken{Nodes: []int{0, 1}}, Lost, ""},
		{"one refused, one down of 3", "renew", 3, joined(nodeTaken(0), nodeDown(1)), Failed, "split_vote"},
		{"quorum too late", "renew", 3, redsync.ErrExtendFailed, Failed, "validity_expired"},
		{"quorum taken", "release", 3, &redsync.ErrTaken{Nodes: []int{0, 1}}, Taken, ""},
		{"gone on the one master", "release", 1, joined(redsync.ErrLockAlreadyExpired), Lost, ""},
		{"gone on two of three, one down", "release", 3, joined(redsync.ErrLockAlreadyExpired, nodeDown(1), redsync.ErrLockAlreadyExpired), Lost, ""},
		{"gone on one, taken on one, of three", "release", 3, joined(redsync.ErrLockAlreadyExpired, nodeTaken(2)), Taken, ""},
		{"gone on one, two down, of three", "release", 3, joined(redsync.ErrLockAlreadyExpired, nodeDown(1), nodeDown(2)), Failed, "no_quorum"},
		{"the one master down", "release", 1, joined(nodeDown(0)), Failed, "conn_refused"},
	} {
		t.Run(tc.op+"/"+tc.name, func(t *testing.T) {
			r := &Redsync{nodes: tc.nodes}
			mapping := r.releaseOutcome
			if tc.op == "renew" {
				mapping = r.renewOutcome
			}
			out, err := mapping(tc.err)
			if out != tc.want {
				t.Fatalf("outcome %v (%v), want %v", out, err, tc.want)
			}
			if (err == nil) != (tc.kind == "") || ErrorKind(err) != tc.kind {
				t.Fatalf("error %v of kind %q, want kind %q", err, ErrorKind(err), tc.kind)
			}
		})
	}
}

func TestModuleVersionIn(t *testing.T) {
	info := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: RedsyncModule, Version: "v4.18.1"},
		{Path: RedislockModule, Version: "v0.9.4", Replace: &debug.Module{Path: "../redislock"}},
		{Path: "example.com/x", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/y", Version: "v1.0.1"}},
	}}
	for path, want := range map[string]string{
		RedsyncModule:    "v4.18.1",
		RedislockModule:  "replaced by ../redislock",
		"example.com/x":  "v1.0.1 (replaced by example.com/y)",
		"example.com/no": "unknown",
	} {
		if got := moduleVersionIn(info, path); got != want {
			t.Errorf("version of %s = %q, want %q", path, got, want)
		}
	}
}
