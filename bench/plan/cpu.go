package plan

import (
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/results"
)

// maxCPUs bounds --cpus: more than any host this runs on has, small enough
// that a typo (a rate given as CPUs) is caught.
const maxCPUs = 4096

// useCPUs sets GOMAXPROCS to n for a run (n = 0 keeps Go's default) and
// returns what restores the setting before it. GOMAXPROCS is the process's:
// a batch runs its runs one at a time, so each gets its own setting.
func useCPUs(n int) (restore func()) {
	if n <= 0 {
		return func() {}
	}
	before := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(before) }
}

// cpuMeter reads this process's CPU time around the measured window. The
// readings sit inside the server INFO readings, so parsing INFO is not
// counted, and the closing one comes after background releases (Redlock's)
// have finished, as the server cost does. Workers finishing their last
// operation after the window are counted (a few operations in a window of
// thousands); in-process proxies of latency and partition faults are too.
//
// It also reads the host's CPU times (every process on it), so a result can
// tell a generator that was starved by other processes from an idle one.
type cpuMeter struct {
	from, to         time.Duration
	startErr         error
	stopErr          error
	started          bool
	hostFrom, hostTo hostTimes
	hostErr          error
	// lock, when set, is a lock with processes of its own (a driver's):
	// their CPU is the client's too, added to this process's.
	lock ownCPU
}

// ownCPU is a lock that runs processes of its own (a driver lock's): the
// CPU time they have used so far.
type ownCPU interface {
	ProcessCPU() (time.Duration, error)
}

// clientCPU is this process's CPU time and that of the lock's own
// processes.
func (m *cpuMeter) clientCPU() (time.Duration, error) {
	d, err := processCPU()
	if err != nil || m.lock == nil {
		return d, err
	}
	own, err := m.lock.ProcessCPU()
	return d + own, err
}

func (m *cpuMeter) start() {
	m.from, m.startErr = m.clientCPU()
	m.hostFrom, m.hostErr = readHostTimes()
	m.started = true
}

func (m *cpuMeter) stop() {
	m.to, m.stopErr = m.clientCPU()
	var err error
	if m.hostTo, err = readHostTimes(); m.hostErr == nil {
		m.hostErr = err
	}
}

// client is the window's CPU cost per acquisition and its share of the CPUs
// Go may use over secs seconds, or why there is none.
func (m *cpuMeter) client(acquired int64, secs float64) *results.Client {
	switch err := firstErr(m.startErr, m.stopErr); {
	case !m.started:
		return &results.Client{Unavailable: "the measured window never started"}
	case err != nil:
		return &results.Client{Unavailable: err.Error()}
	}
	c := &results.Client{CPUUS: float64((m.to - m.from).Microseconds()), CPUs: runtime.GOMAXPROCS(0)}
	c.SetPerAcquire(acquired)
	if secs > 0 {
		c.CPUShare = c.CPUUS / (secs * 1e6 * float64(c.CPUs))
	}
	if m.hostErr == nil {
		c.HostCPUShare = hostShare(m.hostFrom, m.hostTo)
	}
	return c
}

// processCPU is the user and system CPU time every thread of this process
// has used so far (getrusage RUSAGE_SELF; children, such as the servers it
// started, are not included).
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
