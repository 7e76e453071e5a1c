package compose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Persistence names how a local server keeps data across a restart.
type Persistence string

const (
	// PersistNone keeps nothing: a restarted server comes back empty.
	PersistNone Persistence = "none"
	// PersistAOFAlways fsyncs the append-only file after every write.
	PersistAOFAlways Persistence = "aof-always"
)

// ParsePersistence accepts none or aof-always.
func ParsePersistence(s string) (Persistence, error) {
	switch Persistence(s) {
	case PersistNone, "":
		return PersistNone, nil
	case PersistAOFAlways:
		return PersistAOFAlways, nil
	}
	return "", fmt.Errorf("persistence %q: want none or aof-always", s)
}

// ErrNoRedisServer is returned when redis-server is not on PATH.
var ErrNoRedisServer = errors.New("redis-server not found on PATH; install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or pass --redis URL")

// ServerOptions configures one local redis-server.
type ServerOptions struct {
	// Port to listen on; 0 picks a free loopback port.
	Port int
	// Persistence of the server's data.
	Persistence Persistence
	// Args are extra "--name value" configuration arguments.
	Args []string
	// Env is extra environment for the process (LD_PRELOAD for the clock shim).
	Env []string
	// Binary overrides the redis-server binary name.
	Binary string
	// Sentinel, when not nil, starts a Redis Sentinel (redis-server
	// sentinel.conf --sentinel) instead of a data server, with these lines in
	// its sentinel.conf. The file is written on the first start only: Sentinel
	// rewrites it with what it learns (its id, the current primary, the other
	// sentinels), and a restarted sentinel must keep that.
	Sentinel []string

	// program, when set, starts another backend's server instead of a
	// redis-server (an etcd member, compose/etcd.go): its arguments and
	// readiness probe.
	program serverProgram
}

// serverProgram is a server program other than redis-server that a Server
// runs: the command line for its port and directory, and the probe that
// says it serves.
type serverProgram interface {
	command() string
	logName() string
	args(port int, dir string) []string
	ready(addr string) error
}

// name is the program the server runs.
func (o ServerOptions) name() string {
	if o.program != nil {
		return o.program.command()
	}
	return "redis-server"
}

// logFile is the server's log file in its directory.
func (o ServerOptions) logFile() string {
	if o.program != nil {
		return o.program.logName()
	}
	return "redis.log"
}

// Server is one redis-server process that this program started and must stop.
type Server struct {
	opts ServerOptions
	port int
	dir  string

	child
}

// StartServer starts a redis-server on loopback and waits until it answers PING.
func StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	if opts.Binary == "" {
		opts.Binary = "redis-server"
	}
	if _, err := exec.LookPath(opts.Binary); err != nil {
		return nil, ErrNoRedisServer
	}
	dir, err := makeTempDir(opts.name())
	if err != nil {
		return nil, fmt.Errorf("temp dir for %s: %w", opts.name(), err)
	}
	s := &Server{opts: opts, dir: dir, port: opts.Port}
	// A free port can be taken between our probe and the server's bind: retry a few.
	for try := 0; ; try++ {
		if opts.Port == 0 {
			if s.port, err = freePort(); err != nil {
				_ = os.RemoveAll(dir)
				return nil, err
			}
		}
		if err = s.Start(ctx); err == nil {
			return s, nil
		}
		if opts.Port != 0 || try == 4 || ctx.Err() != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

// freePort finds a free loopback port.
func freePort() (int, error) { return freePortOn("127.0.0.1") }

// Addr is host:port of the server.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// Dir is the server's working directory (its log, AOF and RDB files).
func (s *Server) Dir() string { return s.dir }

func (s *Server) args() []string {
	if s.opts.program != nil {
		return s.opts.program.args(s.port, s.dir)
	}
	if s.opts.Sentinel != nil {
		// Persistence and the data options mean nothing to a sentinel.
		return append([]string{s.sentinelConf(), "--sentinel",
			"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
			"--daemonize", "no", "--protected-mode", "yes",
			// Room for a pool per worker at -c 10000 (Redis lowers it to what
			// the process's file limit allows, and logs so).
			"--maxclients", "16384",
			"--logfile", filepath.Join(s.dir, "redis.log")}, s.opts.Args...)
	}
	args := []string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--daemonize", "no", "--protected-mode", "yes",
		// Room for a pool per worker at -c 10000 (Redis lowers it to what
		// the process's file limit allows, and logs so).
		"--maxclients", "16384",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}
	args = append(args, persistenceArgs(s.opts.Persistence)...)
	return append(args, s.opts.Args...)
}

// persistenceArgs are redis-server's options for p: never RDB snapshots, and
// an append-only file synced on every write only with aof-always.
func persistenceArgs(p Persistence) []string {
	if p == PersistAOFAlways {
		return []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}
	}
	return []string{"--save", "", "--appendonly", "no"}
}

func (s *Server) sentinelConf() string { return filepath.Join(s.dir, "sentinel.conf") }

// Start starts the process (again, after Kill or Stop) on the same port and dir.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.cmd != nil && !s.exited() {
		s.mu.Unlock()
		return fmt.Errorf("%s %s is already running", s.opts.name(), s.Addr())
	}
	if s.opts.Sentinel != nil {
		if _, err := os.Stat(s.sentinelConf()); errors.Is(err, os.ErrNotExist) {
			conf := strings.Join(s.opts.Sentinel, "\n") + "\n"
			if err := os.WriteFile(s.sentinelConf(), []byte(conf), 0o600); err != nil {
				s.mu.Unlock()
				return fmt.Errorf("write sentinel.conf for %s: %w", s.Addr(), err)
			}
		}
	}
	cmd := exec.Command(s.opts.Binary, s.args()...)
	cmd.Env = append(os.Environ(), s.opts.Env...)
	// Own process group, so a terminal's Ctrl-C reaches us and we stop the server
	// in order; Pdeathsig, so a killed lockbench leaves no server behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("start %s on %s: %w", s.opts.name(), s.Addr(), err)
	}
	done := s.watch(cmd)
	s.mu.Unlock()

	if err := s.waitReady(ctx, done); err != nil {
		_ = s.Kill()
		logTail, _ := os.ReadFile(filepath.Join(s.dir, s.opts.logFile()))
		return fmt.Errorf("%s on %s did not become ready: %w; %s%s", s.opts.name(), s.Addr(), err, tail(stderr.Bytes()), tail(logTail))
	}
	return nil
}

// child is a server process lockbench started (redis-server, postgres): its
// command, and a channel closed once it has exited; mu guards both.
type child struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// PID is the running process's id, or 0 when it is not running.
func (c *child) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil || c.exited() {
		return 0
	}
	return c.cmd.Process.Pid
}

// exited reports whether the process has exited; the caller holds mu.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// watch records cmd, just started, as the running process and returns the
// channel closed when it exits; the caller holds mu.
func (c *child) watch(cmd *exec.Cmd) <-chan struct{} {
	done := make(chan struct{})
	c.cmd, c.done = cmd, done
	go func() { _ = cmd.Wait(); close(done) }()
	return done
}

func tail(b []byte) string {
	const n = 400
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}

// waitReady polls PING until the server answers, it exits, or 10 s pass.
func (s *Server) waitReady(ctx context.Context, done <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	probe := rawPing
	if s.opts.program != nil {
		probe = s.opts.program.ready
	}
	for {
		if err := probe(s.Addr()); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return err
		}
		select {
		case <-done:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// rawPing speaks just enough RESP to ask PING, without a client library that
// would log every refused dial while the server starts.
func rawPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	// A server with requirepass answers NOAUTH: it is up all the same.
	if reply := string(buf[:n]); !strings.HasPrefix(reply, "+PONG") && !strings.HasPrefix(reply, "-NOAUTH") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(reply))
	}
	return nil
}

// signal sends sig to the running process.
func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.exited() {
		return fmt.Errorf("%s %s is not running", s.opts.name(), s.Addr())
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s %s: %w", sig, s.opts.name(), s.Addr(), err)
	}
	return nil
}

// wait blocks until the process has exited or timeout passes.
func (s *Server) wait(timeout time.Duration) bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
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

// Kill sends SIGKILL (a crash: nothing is flushed) and waits for the exit.
func (s *Server) Kill() error {
	// A stopped process must be continued to die promptly on some kernels.
	_ = s.signal(syscall.SIGCONT)
	if err := s.signal(syscall.SIGKILL); err != nil {
		return err
	}
	s.wait(5 * time.Second)
	return nil
}

// Pause stops the process with SIGSTOP: it keeps its sockets but answers nothing.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

// Stop ends the process (SIGTERM, then SIGKILL after 3 s) and removes its dir.
func (s *Server) Stop() error {
	if s.PID() != 0 {
		_ = s.signal(syscall.SIGCONT)
		_ = s.signal(syscall.SIGTERM)
		if !s.wait(3 * time.Second) {
			_ = s.Kill()
		}
	}
	return os.RemoveAll(s.dir)
}
