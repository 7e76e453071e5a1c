package compose

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is the kernel's USER_HZ, in which /proc reports CPU time
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// processCPUSeconds sums the user and system CPU time, every thread
// included, of the local processes pids from /proc/PID/stat; a process
// that has exited adds nothing. ok is false when none could be read.
func processCPUSeconds(pids ...int) (secs float64, ok bool) {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		t, err := parseProcStatCPU(string(b))
		if err != nil {
			continue
		}
		ticks += t
		ok = true
	}
	return float64(ticks) / clockTicks, ok
}

// parseProcStatCPU reads utime + stime, in clock ticks, from a
// /proc/PID/stat line: "pid (comm) state ppid … utime stime …", where comm
// may itself hold spaces and parentheses.
func parseProcStatCPU(stat string) (int64, error) {
	f, named := statFields(stat)
	if !named {
		return 0, fmt.Errorf("/proc stat %q: no command name", shorten(stat))
	}
	// After the command: state(0) ppid(1) … utime(11) stime(12).
	if len(f) <= 12 {
		return 0, fmt.Errorf("/proc stat %q: %d fields after the command, want utime and stime (12 and 13)", shorten(stat), len(f))
	}
	var ticks int64
	for _, field := range f[11:13] {
		t, err := strconv.ParseInt(field, 10, 64)
		if err != nil || t < 0 {
			return 0, fmt.Errorf("/proc stat %q: CPU time %q is not a count of ticks", shorten(stat), field)
		}
		ticks += t
	}
	return ticks, nil
}

// localProcCPU is the CPU seconds of a local server process, or why there
// are none: it is not running (a fault stopped it), or /proc cannot be read.
func localProcCPU(p *localProc) (float64, error) {
	pid := p.PID()
	if pid == 0 {
		return 0, fmt.Errorf("%s %s is not running", p.what, p.addr)
	}
	secs, ok := processCPUSeconds(pid)
	if !ok {
		return 0, fmt.Errorf("%s %s: /proc/%d/stat cannot be read", p.what, p.addr, pid)
	}
	return secs, nil
}

// shorten cuts s to a length an error line can carry.
func shorten(s string) string {
	const max = 80
	s = strings.TrimSpace(s)
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
