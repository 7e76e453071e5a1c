//go:build unix

package composetest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SwarmLockFile is the file SwarmLock locks, in the temporary directory.
// It is not /tmp/lockbench-swarm.lock, which people take with flock(1)
// around a whole `go test`: the test inside would wait on its own parent.
const SwarmLockFile = "lockbench-swarm-tests.lock"

// SwarmLock holds the machine's Docker Swarm for t, across processes: go
// test runs the packages' test binaries at once, and one test's Leave
// would pull the Swarm from under another's services. Every test that
// joins or leaves the Swarm, or starts a service, calls it first (before
// it reads the engine's state to compare after); the lock is released
// after every cleanup the test registers later, its Leave included.
func SwarmLock(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), SwarmLockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("swarm test lock %s: %v", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		t.Fatalf("swarm test lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	})
}
