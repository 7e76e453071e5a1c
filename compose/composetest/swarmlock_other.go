//go:build !unix

package composetest

import "testing"

// SwarmLock skips t where flock(2) is missing: without the lock, one
// test's Leave could pull the Swarm from under another's.
func SwarmLock(t testing.TB) {
	t.Helper()
	t.Skip("the Swarm tests' cross-process lock needs flock(2)")
}
