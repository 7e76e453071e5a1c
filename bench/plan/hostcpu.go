package plan

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// hostTimes are the host's CPU times so far, summed over every CPU, in
// clock ticks: busy (any process, the kernel included) and in all.
type hostTimes struct {
	busy, total uint64
}

// errNoHostCPU is why the host's CPU share is absent where /proc/stat is not.
var errNoHostCPU = errors.New("the host's CPU times are not readable here (no /proc/stat)")

// readHostTimes reads the host's CPU times from /proc/stat's first line:
// busy is every field but idle and iowait.
func readHostTimes() (hostTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return hostTimes{}, errNoHostCPU
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return hostTimes{}, fmt.Errorf("read /proc/stat: %w", err)
	}
	return parseHostTimes(line)
}

// parseHostTimes parses /proc/stat's aggregate "cpu" line.
func parseHostTimes(line string) (hostTimes, error) {
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return hostTimes{}, fmt.Errorf("/proc/stat: unexpected first line %q", strings.TrimSpace(line))
	}
	var t hostTimes
	// user nice system idle iowait irq softirq steal (guest times are
	// already inside user and nice, so they are not added again).
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return hostTimes{}, fmt.Errorf("/proc/stat: field %d %q: %w", i+1, f, err)
		}
		t.total += v
		if i != 3 && i != 4 {
			t.busy += v
		}
	}
	return t, nil
}

// hostShare is the share of the host's CPUs busy between from and to, or
// nil when it could not be read or no time passed.
func hostShare(from, to hostTimes) *float64 {
	if to.total <= from.total || to.busy < from.busy {
		return nil
	}
	v := float64(to.busy-from.busy) / float64(to.total-from.total)
	return &v
}
