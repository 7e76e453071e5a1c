package compose

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The data directories lockbench makes for the servers it starts are named
// lockbench-WHAT-PID-RANDOM in the temporary directory: PID is the lockbench
// process that made them. A lockbench killed outright (SIGKILL: an OOM kill,
// a CI timeout) stops no server and removes nothing; its servers die with it
// (they are started with a parent-death signal) and leave their
// directories, which the next run removes (RemoveStaleDirs) because the
// process named in them is gone.
const tempDirPrefix = "lockbench-"

// makeTempDir makes a data directory for what (redis-server, etcd,
// postgres, topology) named by this process.
func makeTempDir(what string) (string, error) {
	return os.MkdirTemp("", tempDirPattern(what, os.Getpid()))
}

// tempDirPattern is the MkdirTemp pattern of process pid's directories of
// what: its random part follows the last dash.
func tempDirPattern(what string, pid int) string {
	return tempDirPrefix + what + "-" + strconv.Itoa(pid) + "-"
}

// tempDirOwner reads the process named in a lockbench data directory's
// name; ok is false for a name that is not one (a directory made before
// names carried the process).
func tempDirOwner(name string) (pid int, ok bool) {
	if !strings.HasPrefix(name, tempDirPrefix) {
		return 0, false
	}
	parts := strings.Split(strings.TrimPrefix(name, tempDirPrefix), "-")
	// WHAT (which may itself hold dashes), PID, RANDOM.
	if len(parts) < 3 {
		return 0, false
	}
	if _, err := strconv.ParseUint(parts[len(parts)-1], 10, 64); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// RemoveStaleDirs removes the data directories, in the temporary directory,
// of lockbench processes that are no longer running: what a killed lockbench
// left. A directory is kept while its process runs, while any running
// process works in it or names it on its command line (a server that
// outlived its lockbench), and where it is another user's. It returns the
// directories removed; a directory it could not remove is an error, the
// others are still removed.
func RemoveStaleDirs() ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, dir := range dirs {
		pid, ok := tempDirOwner(filepath.Base(dir))
		if !ok || alive(pid) || !ownDir(dir) {
			continue
		}
		stale = append(stale, dir)
	}
	if len(stale) == 0 {
		return nil, nil
	}
	inUse := dirsInUse()
	var removed []string
	var errs []error
	for _, dir := range stale {
		if inUse(dir) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s, left by a lockbench no longer running: %w", dir, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// ownDir reports whether dir is a directory this user may clean up: its
// own, or any for root (which gives PostgreSQL's to the postgres user).
func ownDir(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && (os.Getuid() == 0 || int(sys.Uid) == os.Getuid())
}

// dirsInUse reads every running process's working directory and command
// line once, and reports whether one of them is in dir or names it.
func dirsInUse() func(dir string) bool {
	var cwds, cmdlines []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil {
			cwds = append(cwds, cwd)
		}
		if cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil {
			cmdlines = append(cmdlines, string(cmd))
		}
	}
	return func(dir string) bool {
		for _, cwd := range cwds {
			if cwd == dir || strings.HasPrefix(cwd, dir+"/") {
				return true
			}
		}
		for _, cmd := range cmdlines {
			if strings.Contains(cmd, dir) {
				return true
			}
		}
		return false
	}
}

// removeStaleDirs is RemoveStaleDirs before a local topology comes up,
// saying on log (where set) what it removed and what it could not: a full
// temporary directory fails the servers' start later, so it is not fatal.
func removeStaleDirs(log io.Writer) {
	removed, err := RemoveStaleDirs()
	if log == nil {
		return
	}
	if len(removed) > 0 {
		fmt.Fprintf(log, "removed %d data directories left by lockbench processes no longer running (%s)\n",
			len(removed), filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	}
	if err != nil {
		fmt.Fprintf(log, "warning: %v\n", err)
	}
}
