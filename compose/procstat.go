package compose

import (
	"os"
	"strconv"
	"strings"
)

// procStatFields reads /proc/PID/stat and returns its fields after the
// command name (statFields), the state letter first, then the parent's
// pid; ok is false where /proc cannot tell (no such process, or no /proc).
func procStatFields(pid int) (fields []string, ok bool) {
	if pid <= 0 {
		return nil, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	f, named := statFields(string(b))
	return f, named && len(f) > 0
}

// statFields splits a /proc/PID/stat line, "pid (comm) state ppid …",
// into its fields after the command name. The name is in parentheses and
// may itself hold spaces and parentheses, so the fields start after the
// last ')'; named is false where there is none.
func statFields(stat string) (fields []string, named bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(stat[i+1:]), true
}

// ProcessState is pid's state letter as /proc shows it ("R", "S", "T" for
// stopped by a signal, "Z" for exited and not yet reaped, …); readable is
// false where /proc cannot tell.
func ProcessState(pid int) (state string, readable bool) {
	f, ok := procStatFields(pid)
	if !ok {
		return "", false
	}
	return f[0], true
}

// alive reports whether pid names a running (not zombie) process.
func alive(pid int) bool {
	st, ok := ProcessState(pid)
	return ok && st != "Z" && st != "X"
}

// parentOf reads a process's parent id from /proc/PID/stat, or -1.
func parentOf(pid int) int {
	f, ok := procStatFields(pid)
	if !ok || len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}
