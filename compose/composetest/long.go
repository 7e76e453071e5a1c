package composetest

import (
	"os"
	"testing"
)

// LongEnv is the environment variable that turns the long suites on:
// `make test-long` and `.ci/run` set it to 1, `make test` leaves it unset.
// The long suites are those that take minutes by design (every scenario's
// trials, advise's planted pages, a check of every preset); the fast suite
// keeps a short test of the same code path beside each.
const LongEnv = "LOCKBENCH_LONG_TESTS"

// Long skips t unless the long suites were asked for, saying how to run it.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv(LongEnv) != "1" {
		t.Skip("long suite: runs under make test-long (" + LongEnv + "=1)")
	}
}
