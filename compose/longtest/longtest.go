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
