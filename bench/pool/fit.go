package pool

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Need is what one trial takes of the machine while it runs: its share of
// the generator and its own servers.
type Need struct {
	// Cores is the CPU one trial needs to itself.
	Cores int
	// MemoryMB is the memory its servers and its share of the generator
	// take at their peak, in MB.
	MemoryMB int
}

// TrialNeed is one trial's need, as stated for --parallel's refusal:
//   - one core: a trial is timed (holds, TTLs, pauses past them, the
//     sentinels' down-after); past one trial per core, one trial's holders
//     wait for a CPU behind another's, and that wait is measured as the
//     lock's (an overrun, a gap, a failover that came late).
//   - 512 MB: the largest trial measured (peak RSS of lockbench and every
//     server it started, sampled every 0.2 s on the 2-core machine): `scenario
//     zk-session-expiry --trials 1`, three ZooKeeper JVMs, 301 MB; `scenario
//     failover --trials 1`, two redis-servers and three sentinels, 125 MB.
//     The rest is room for the JVMs' heaps, each allowed 256 MB (-Xmx256m).
func TrialNeed() Need { return Need{Cores: 1, MemoryMB: 512} }

// Machine is what this machine offers trials.
type Machine struct {
	// Cores is runtime.NumCPU.
	Cores int
	// AvailableMB is the memory the kernel says is available (Linux's
	// MemAvailable); 0 where it is unknown, and memory is then not judged.
	AvailableMB int
}

// ThisMachine reads this machine's cores and available memory.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU()}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		m.AvailableMB = availableMB(f)
		_ = f.Close()
	}
	return m
}

// availableMB reads MemAvailable from /proc/meminfo's text; 0 when absent.
func availableMB(r io.Reader) int {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.Atoi(f[1])
			if err != nil || kb < 0 {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}

// Most is how many trials of need fit m at once (at least 1: one trial
// is what the command ran before --parallel).
func (m Machine) Most(need Need) int {
	n := m.Cores / max(1, need.Cores)
	if m.AvailableMB > 0 && need.MemoryMB > 0 {
		n = min(n, m.AvailableMB/need.MemoryMB)
	}
	return max(1, n)
}

// Fit refuses n trials side by side that would not fit m, in one line
// saying which need and what the machine has; n below 1 is refused too,
// and 1 is never refused.
func (m Machine) Fit(n int, need Need) error {
	most := m.Most(need)
	switch {
	case n < 1:
		return fmt.Errorf("--parallel %d: want a whole number of trials at once from 1 to %d (this machine)", n, most)
	case n == 1:
		// One trial at a time is what the commands always ran.
		return nil
	case n*need.Cores > m.Cores:
		return fmt.Errorf("--parallel %d: %d trials need %d cores (%d each, so that a trial's timing is its lock's, not a wait for a CPU) "+
			"and this machine has %d; want 1 to %d", n, n, n*need.Cores, need.Cores, m.Cores, most)
	case m.AvailableMB > 0 && n*need.MemoryMB > m.AvailableMB:
		return fmt.Errorf("--parallel %d: %d trials need %d MB (%d MB each: their servers at peak) and this machine has %d MB available; want 1 to %d",
			n, n, n*need.MemoryMB, need.MemoryMB, m.AvailableMB, most)
	}
	return nil
}
