package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBinDir is where Debian's postgresql package puts the server binaries.
const PgBinDir = "/usr/lib/postgresql/15/bin"

// ErrNoPostgres is returned when the PostgreSQL server binaries are missing.
var ErrNoPostgres = errors.New("PostgreSQL server binaries not found in " + PgBinDir + " or on PATH; install them (Debian/Ubuntu: apt-get install postgresql; the system service is never used) or pass --postgres URL")

// pgUser is the database superuser a local server is created with; local
// servers trust loopback connections, so it has no password.
const pgUser = "lockbench"

// PgServer is one local PostgreSQL server that this program initialised in a
// temporary directory and must stop: postgres and its backends form one
// process group, signalled together, so a kill or pause reaches every
// session. Run by root, the server runs as an unprivileged user (PostgreSQL
// refuses root), which owns the data directory.
type PgServer struct {
	bin  string
	dir  string // holds data/ and postgres.log
	port int
	cred *syscall.Credential // nil when not run by root

	child
}

// pgBin finds a PostgreSQL server binary: Debian's versioned directory
// first, then PATH.
func pgBin(name string) (string, error) {
	p := filepath.Join(PgBinDir, name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", ErrNoPostgres
}

// PgInstalled reports whether this machine has the PostgreSQL server
// programs a local postgres topology needs (initdb and postgres).
func PgInstalled() bool {
	_, initdb := pgBin("initdb")
	_, server := pgBin("postgres")
	return initdb == nil && server == nil
}

// StartPgServer initialises a database cluster in a new temporary
// directory and starts postgres on a free loopback port, waiting until it
// accepts connections. On error nothing is left running or on disk.
func StartPgServer(ctx context.Context) (*PgServer, error) {
	initdb, err := pgBin("initdb")
	if err != nil {
		return nil, err
	}
	bin, err := pgBin("postgres")
	if err != nil {
		return nil, err
	}
	// The creator's pid in the name lets a check find what one process left.
	dir, err := makeTempDir(pgDirWhat)
	if err != nil {
		return nil, fmt.Errorf("temp dir for postgres: %w", err)
	}
	s := &PgServer{bin: bin, dir: dir}
	if err := s.init(ctx, initdb); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for try := 0; ; try++ {
		if s.port, err = freePort(); err == nil {
			if err = s.Start(ctx); err == nil {
				return s, nil
			}
		}
		if try == 4 || ctx.Err() != nil {
			_ = s.Stop()
			return nil, err
		}
	}
}

// init fills dir/data as initdb run as the server's user would: from the
// cached template of the same initdb and arguments when there is one
// (pgtemplate.go), else by running initdb, whose fresh directory then
// becomes the template.
func (s *PgServer) init(ctx context.Context, initdb string) error {
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			return err
		}
		s.cred = cred
		if err := os.Chown(s.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("give %s to the postgres user: %w", s.dir, err)
		}
	}
	args := []string{"-U", pgUser, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"}
	tmpl := pgTemplateDir(ctx, initdb, args, s.cred)
	if fromPgTemplate(ctx, tmpl, s.dataDir()) {
		return nil
	}
	cmd := exec.CommandContext(ctx, initdb, append([]string{"-D", s.dataDir()}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb in %s: %w; %s", s.dir, err, tail(out))
	}
	// A cache that cannot be written costs the next server an initdb,
	// nothing else.
	_ = savePgTemplate(ctx, tmpl, s.dataDir())
	return nil
}

// unprivileged is the user a root-run server runs as: postgres if the
// system has one, else nobody.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
		}
	}
	return nil, errors.New("running as root, and neither a postgres nor a nobody user exists to run the PostgreSQL server as (it refuses root)")
}

func (s *PgServer) dataDir() string { return filepath.Join(s.dir, "data") }

// Dir is the server's temporary directory (data/ and postgres.log).
func (s *PgServer) Dir() string { return s.dir }

// Addr is host:port of the server.
func (s *PgServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the connection URL of the server's postgres database; it has no
// password (loopback connections are trusted).
func (s *PgServer) URL() string {
	return "postgres://" + pgUser + "@" + s.Addr() + "/postgres?sslmode=disable"
}

// Start starts postgres (again, after Kill) on the same port and data.
func (s *PgServer) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.cmd != nil && !s.exited() {
		s.mu.Unlock()
		return fmt.Errorf("postgres %s is already running", s.Addr())
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("postgres log: %w", err)
	}
	cmd := exec.Command(s.bin, "-D", s.dataDir(), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		// Room for a pinned session per worker and the resource's pool.
		"-c", "max_connections=600", "-c", "logging_collector=off")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// Own process group, so a terminal's Ctrl-C reaches only us and we
	// stop the server in order;
	// Pdeathsig, so a killed lockbench leaves no postmaster behind (its
	// backends exit when they see it gone).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	_ = logf.Close()
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("start postgres on %s: %w", s.Addr(), err)
	}
	done := s.watch(cmd)
	s.mu.Unlock()
	if err := s.waitReady(ctx, done); err != nil {
		_ = s.Kill()
		log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
		return fmt.Errorf("postgres on %s did not become ready: %w; %s", s.Addr(), err, tail(log))
	}
	return nil
}

// waitReady connects until the server accepts a session (after a crash it
// first replays its WAL), it exits, or 30 s pass.
func (s *PgServer) waitReady(ctx context.Context, done <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := pgx.Connect(cctx, s.URL())
		if err == nil {
			_ = c.Close(cctx)
			cancel()
			return nil
		}
		cancel()
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-done:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signalAll sends sig to postgres and every backend. Each backend makes
// itself a process group leader (setsid), so they are found by parent, not
// by group.
func (s *PgServer) signalAll(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.exited() {
		return fmt.Errorf("postgres %s is not running", s.Addr())
	}
	pid := s.cmd.Process.Pid
	kids := childrenOf(pid)
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signal %v to postgres %s: %w", sig, s.Addr(), err)
	}
	for _, k := range kids {
		_ = syscall.Kill(k, sig)
	}
	return nil
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(child) == pid {
			out = append(out, child)
		}
	}
	return out
}

// exitAll waits until postgres and the backends it had have exited, so its
// shared memory is free for a new postmaster, or timeout passes.
func (s *PgServer) exitAll(kids []int, timeout time.Duration) bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	deadline := time.Now().Add(timeout)
	if done != nil {
		select {
		case <-done:
		case <-time.After(timeout):
			return false
		}
	}
	for _, k := range kids {
		for alive(k) {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return true
}

// backends lists the running server's child processes.
func (s *PgServer) backends() []int {
	pid := s.PID()
	if pid == 0 {
		return nil
	}
	return childrenOf(pid)
}

// Kill crashes the server: SIGKILL to postgres and every backend at once,
// nothing flushed; a Start replays the WAL.
func (s *PgServer) Kill() error {
	kids := s.backends()
	_ = s.signalAll(syscall.SIGCONT)
	if err := s.signalAll(syscall.SIGKILL); err != nil {
		return err
	}
	s.exitAll(kids, 5*time.Second)
	return nil
}

// Pause stops postgres and every backend with SIGSTOP: sockets stay open,
// nothing answers.
func (s *PgServer) Pause() error { return s.signalAll(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *PgServer) Resume() error { return s.signalAll(syscall.SIGCONT) }

// Stop shuts the server down (fast shutdown, then SIGKILL after 5 s) and
// removes its directory: nothing of it is left.
func (s *PgServer) Stop() error {
	if s.PID() != 0 {
		kids := s.backends()
		_ = s.signalAll(syscall.SIGCONT)
		_ = s.signalAll(syscall.SIGINT)
		if !s.exitAll(kids, 5*time.Second) {
			_ = s.Kill()
		}
	}
	return os.RemoveAll(s.dir)
}

// Processes lists the running server's processes: postgres and its
// backends.
func (s *PgServer) Processes() []int {
	pid := s.PID()
	if pid == 0 {
		return nil
	}
	return append([]int{pid}, childrenOf(pid)...)
}

// ProcessAlive reports whether pid names a running process (a zombie is
// not running).
func ProcessAlive(pid int) bool { return alive(pid) }

// cpuSeconds sums user and system CPU time of the server's processes now.
func (s *PgServer) cpuSeconds() float64 {
	secs, _ := processCPUSeconds(s.Processes()...)
	return secs
}

// pgDirWhat names PostgreSQL's data directories (makeTempDir).
const pgDirWhat = "postgres"

// pgDirPrefix starts the name of every data directory process pid creates.
func pgDirPrefix(pid int) string { return tempDirPattern(pgDirWhat, pid) }

// PgLeftovers lists what the local PostgreSQL servers started by process
// pid left behind: their temporary directories, and postgres processes
// still running on them. A process that stopped every server it started
// leaves nothing.
func PgLeftovers(pid int) []string {
	prefix := filepath.Join(os.TempDir(), pgDirPrefix(pid))
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
