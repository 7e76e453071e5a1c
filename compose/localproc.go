package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// localProc is one server process (a ZooKeeper member, a NATS server) that
// lockbench started from a command line in a directory of its own and must
// stop: the directory holds its configuration, data and log, and goes with
// it. Each server kind gives its command line and its readiness probe; the
// process handling (start, crash, pause, stop) is the same for all.
type localProc struct {
	what  string   // the server kind, for messages: "zookeeper", "nats-server"
	addr  string   // host:port clients use, for messages
	dir   string   // the node's own directory
	bin   string   // program to run
	args  []string // its arguments
	env   []string // extra environment
	ready func(ctx context.Context) error

	child
}

// logPath is where the process's standard output and error go.
func (p *localProc) logPath() string { return filepath.Join(p.dir, p.what+".log") }

// start runs the process (again, after kill) and waits until ready says
// yes, the process exits, or timeout passes. On failure the process is
// killed, and the error carries the log's tail.
func (p *localProc) start(ctx context.Context, timeout time.Duration) error {
	p.mu.Lock()
	if p.cmd != nil && !p.exited() {
		p.mu.Unlock()
		return fmt.Errorf("%s %s is already running", p.what, p.addr)
	}
	logf, err := os.OpenFile(p.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("%s log: %w", p.what, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	// Own process group, so a terminal's Ctrl-C reaches only us and we stop
	// the server in order; Pdeathsig, so a killed lockbench leaves no server.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	_ = logf.Close()
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s on %s: %w", p.what, p.addr, err)
	}
	done := p.watch(cmd)
	p.mu.Unlock()
	if err := p.waitReady(ctx, done, timeout); err != nil {
		_ = p.kill()
		log, _ := os.ReadFile(p.logPath())
		return fmt.Errorf("%s on %s did not become ready: %w; %s", p.what, p.addr, err, tail(log))
	}
	return nil
}

// waitReady polls ready until it answers, the process exits, or timeout
// passes.
func (p *localProc) waitReady(ctx context.Context, done <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := p.ready(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-done:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Dir is the server's own directory: its configuration, data and log.
func (p *localProc) Dir() string { return p.dir }

// Kill crashes the server (SIGKILL: nothing flushed); a killed leader is
// replaced by the others' election.
func (p *localProc) Kill() error { return p.kill() }

// Pause stops the server with SIGSTOP: it keeps its sockets and answers
// nothing, to its clients or its peers. It returns once the kernel shows
// the process stopped (or after a second): kill(2) only queues the signal,
// and CI saw a ZooKeeper member, signalled, still answer srvr.
func (p *localProc) Pause() error {
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.mu.Lock()
	pid := 0
	if p.cmd != nil && p.cmd.Process != nil {
		pid = p.cmd.Process.Pid
	}
	p.mu.Unlock()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st, readable := ProcessState(pid); !readable || st == "T" {
			break
		}
	}
	return nil
}

// Resume continues a paused server with SIGCONT.
func (p *localProc) Resume() error { return p.signal(syscall.SIGCONT) }

// signal sends sig to the running process.
func (p *localProc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return fmt.Errorf("%s %s is not running", p.what, p.addr)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s %s: %w", sig, p.what, p.addr, err)
	}
	return nil
}

// waitExit blocks until the process has exited or timeout passes.
func (p *localProc) waitExit(timeout time.Duration) bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// kill crashes the process (SIGKILL: nothing flushed) and waits for it.
func (p *localProc) kill() error {
	// A stopped process must be continued to die promptly on some kernels.
	_ = p.signal(syscall.SIGCONT)
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	p.waitExit(5 * time.Second)
	return nil
}

// stop ends the process (SIGTERM, then SIGKILL after 3 s) and removes its
// directory: nothing of it is left.
func (p *localProc) stop() error {
	if p.PID() != 0 {
		_ = p.signal(syscall.SIGCONT)
		_ = p.signal(syscall.SIGTERM)
		if !p.waitExit(3 * time.Second) {
			_ = p.kill()
		}
	}
	return os.RemoveAll(p.dir)
}

// procGroup is the processes of one deployment (an ensemble's members, a
// cluster's servers), started and stopped together.
type procGroup []*localProc

// startAll starts every process at once, each waiting up to timeout to be
// ready: members of a quorum serve only once enough of them run.
func (g procGroup) startAll(ctx context.Context, timeout time.Duration) error {
	return g.each(func(p *localProc) error { return p.start(ctx, timeout) })
}

// stopAll stops every process and removes their directories.
func (g procGroup) stopAll() error { return g.each((*localProc).stop) }

// each runs f on every process in parallel and joins their errors.
func (g procGroup) each(f func(*localProc) error) error {
	errs := make([]error, len(g))
	var wg sync.WaitGroup
	for i, p := range g {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f(p) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pids lists the running processes' ids.
func (g procGroup) pids() []int {
	var out []int
	for _, p := range g {
		if pid := p.PID(); pid != 0 {
			out = append(out, pid)
		}
	}
	return out
}

// waitFor polls get until it answers or timeout passes.
func waitFor[T any](ctx context.Context, timeout time.Duration, get func() (T, error)) (T, error) {
	deadline := time.Now().Add(timeout)
	for {
		v, err := get()
		if err == nil {
			return v, nil
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("after %v: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dirLeftovers lists what the servers of kind what started by process pid
// left behind: their directories (named by makeTempDir), and processes
// still running that name one on their command line. A process that
// stopped every server it started leaves nothing.
func dirLeftovers(what string, pid int) []string {
	prefix := filepath.Join(os.TempDir(), tempDirPattern(what, pid))
	dirs, _ := filepath.Glob(prefix + "*")
	out := append([]string(nil), dirs...)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmd), prefix) && alive(p) {
			out = append(out, fmt.Sprintf("process %d: %s", p, strings.ReplaceAll(string(cmd), "\x00", " ")))
		}
	}
	return out
}
