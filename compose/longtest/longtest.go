// Package longtest gates the long test suites: tests that take minutes by
// design (every scenario's trials, the Docker engine's container and Swarm
// tests) run under `make test-long` and `.ci/run`, and skip under
// `make test`, the fast suite. It imports nothing of lockbench, so that any
// package's tests, compose's own included, can use it.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long suites on: `make
// test-long` and `.ci/run` set it to 1, `make test` leaves it unset.
const Env = "LOCKBENCH_LONG_TESTS"

// Skip skips t unless the long suites were asked for, saying how to run it.
func Skip(t testing.TB) {
	t.Helper()
	if os.Getenv(Env) != "1" {
		t.Skip("long suite: runs under make test-long (" + Env + "=1)")
	}
}

// Enabled reports whether the long suites were asked for.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Waiting is Skip for a long test that mostly waits (a sentinel's
// down-after, an election, a session's expiry) on servers of its own: it
// runs beside the package's other waiting tests (t.Parallel), so a
// package of them takes the longest one's time, not their sum. Such a
// test checks for leftovers of its own processes only where no other
// waiting test of its package starts the same kind.
func Waiting(t *testing.T) {
	t.Helper()
	Skip(t)
	t.Parallel()
}
