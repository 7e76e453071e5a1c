//go:build unix

package composetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSwarmLockExcludes: while a test holds the Swarm, another process
// cannot take the lock; once the test ends, it can.
func TestSwarmLockExcludes(t *testing.T) {
	path := filepath.Join(os.TempDir(), SwarmLockFile)
	held := func() bool {
		// flock -n exits 1 where the lock is held elsewhere.
		err := exec.Command("flock", "-n", path, "true").Run()
		return err != nil
	}
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs flock(1) to try the lock from another process")
	}
	t.Run("held", func(t *testing.T) {
		SwarmLock(t)
		if !held() {
			t.Error("another process took the lock while a test held it")
		}
	})
	// Released: another process takes it (waiting out a Swarm test of
	// another package that may hold it meanwhile).
	if err := exec.Command("flock", "-w", "600", path, "true").Run(); err != nil {
		t.Errorf("the lock is still held after the test ended: %v", err)
	}
}
