package compose

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// clockShimSource is the LD_PRELOAD shim that moves one server's wall clock.
//
//go:embed clockshim/clockshim.c
var clockShimSource string

// ClockFileEnv names the environment variable that tells the clock shim which
// control file to read.
const ClockFileEnv = "LOCKBENCH_CLOCK_FILE"

// ErrNoCCompiler is returned by BuildClockShim when no C compiler is on PATH.
var ErrNoCCompiler = errors.New("clock faults need a C compiler (cc) to build the LD_PRELOAD shim: apt-get install gcc")

// ppmOne is a clock speed of 1 in the shim's parts-per-million.
const ppmOne = 1_000_000

// BuildClockShim compiles the LD_PRELOAD clock shim into dir and returns the
// path of the shared object. The shim is built on the machine that runs
// redis-server because it must match that machine's libc ABI; it is small
// enough that building takes well under a second.
func BuildClockShim(dir string) (soPath string, err error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", ErrNoCCompiler
	}
	src := filepath.Join(dir, "clockshim.c")
	if err := os.WriteFile(src, []byte(clockShimSource), 0o600); err != nil {
		return "", fmt.Errorf("write clock shim source: %w", err)
	}
	so := filepath.Join(dir, "clockshim.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", so, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build clock shim with %s: %w: %s", cc, err, strings.TrimSpace(tail(out)))
	}
	return so, nil
}

// clockState is the wall clock one shimmed server sees, kept here and written
// to the control file the shim re-reads every 200 ms.
type clockState struct {
	path string

	mu     sync.Mutex
	offset time.Duration // added to the real clock
	ppm    int64         // speed in parts per million of real time
	anchor time.Time     // when the current speed began
}

// clockFor builds the shim once per topology and gives data node i its own
// control file.
func (t *Topology) clockFor(i int, env []string) (*clockState, []string, error) {
	dir, err := t.workDir()
	if err != nil {
		return nil, nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shim == "" {
		so, err := BuildClockShim(dir)
		if err != nil {
			return nil, nil, err
		}
		t.shim = so
	}
	c := &clockState{path: filepath.Join(dir, fmt.Sprintf("clock-%d", i)), ppm: ppmOne}
	if err := c.write(); err != nil {
		return nil, nil, err
	}
	return c, append(env, "LD_PRELOAD="+t.shim, ClockFileEnv+"="+c.path), nil
}

// write publishes the state; rename makes the change atomic for the reader.
// Call with mu held (or before the state is shared).
func (c *clockState) write() error {
	var anchor int64
	if !c.anchor.IsZero() {
		anchor = c.anchor.UnixNano()
	}
	line := fmt.Sprintf("%d %d %d\n", c.offset.Nanoseconds(), c.ppm, anchor)
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(line), 0o600); err != nil {
		return fmt.Errorf("write clock file: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("publish clock file: %w", err)
	}
	return nil
}

// jump moves the clock by d at once (negative d moves it back).
func (c *clockState) jump(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	return c.write()
}

// setSpeed makes the clock run at factor × real time from now on. The time
// it gained (or lost) at the previous speed is kept as offset, so changing
// the speed never jumps the clock.
func (c *clockState) setSpeed(factor float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.ppm != ppmOne && !c.anchor.IsZero() {
		c.offset += time.Duration(float64(now.Sub(c.anchor)) * float64(c.ppm-ppmOne) / ppmOne)
	}
	c.ppm = int64(factor*ppmOne + 0.5)
	c.anchor = now
	if c.ppm == ppmOne {
		c.anchor = time.Time{}
	}
	return c.write()
}

// clockFits is the fit of the faults that move a node's clock: a local
// server of a kind whose program the clock shim can move (KindInfo.ClockShim).
func clockFits(k FaultKind, info KindInfo, provider string) string {
	switch {
	case provider == ProviderExternal:
		return notTaken(k, info, provider)
	case !info.ClockShim && info.ClockNote != "":
		return info.ClockNote
	case !info.ClockShim:
		return notTaken(k, info, provider)
	case provider == ProviderDocker:
		return "the clock shim needs a local server; the docker provider cannot move a container's clock (use the local provider)"
	case provider != ProviderLocal:
		return notTaken(k, info, provider)
	}
	return ""
}

// clockMisfit says what n lacks for a fault of kind k that moves its clock.
func clockMisfit(k FaultKind, n *Node) string {
	if n.Server == nil {
		return fmt.Sprintf("%s needs a local server, and %s (%s) is external", k, n.Name, n.Addr)
	}
	if n.clock == nil {
		return fmt.Sprintf("%s needs the servers started with the clock shim (UpOptions.ClockShim)", k)
	}
	return ""
}
