package lockimpl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// DriverPrefix starts a --lock value that runs the user's own program as
// the lock: --lock exec:'CMD ARGS'.
const DriverPrefix = "exec:"

// DefaultDriverTimeout is how long a driver may take to say hello or to
// answer one request before lockbench calls it hung and ends the run.
const DefaultDriverTimeout = 5 * time.Second

// Driver process layouts (--driver-procs).
const (
	// DriverAuto shares one process when the driver's hello says it serves
	// requests concurrently, and starts one per worker when it does not:
	// measured the faster layout for each kind (see the README).
	DriverAuto = "auto"
	// DriverPerWorker starts one driver process per worker: a worker's
	// calls never queue behind another's, and a pause of the holder's
	// process pauses that holder only.
	DriverPerWorker = "per-worker"
	// DriverShared starts one driver process that every worker's requests
	// share, told apart by their ids.
	DriverShared = "shared"
)

// IsDriver reports whether lock is a driver lock (exec:CMD).
func IsDriver(lock string) bool { return strings.HasPrefix(lock, DriverPrefix) }

// driverDescriptor is what lockbench knows of a driver lock before its
// hello: a lease on Redis servers that may renew (the hello says whether
// it does; a run that renews a driver whose hello says it does not fails).
func driverDescriptor(name string) Descriptor {
	return Descriptor{Name: name, Backend: BackendRedis, Lease: true, Renewable: true, Quorum: false,
		Driver: true, OwnClient: true, RunFlags: []string{"driver-procs", "driver-timeout"}}
}

// DriverOptions configure a driver lock.
type DriverOptions struct {
	// Procs is DriverPerWorker or DriverShared; "" means DriverPerWorker.
	Procs string
	// Workers is the run's concurrency: how many processes per-worker starts.
	Workers int
	// Timeout bounds the hello and each answer; 0 means DefaultDriverTimeout.
	Timeout time.Duration
}

// ParseDriverCommand splits the command of an exec: lock into its program
// and arguments: words apart by spaces, kept together by single or double
// quotes (no escapes, no variables: no shell is involved).
func ParseDriverCommand(lock string) ([]string, error) {
	cmd, ok := strings.CutPrefix(lock, DriverPrefix)
	if !ok {
		return nil, fmt.Errorf("lock %q: a driver lock is exec:'CMD ARGS'", lock)
	}
	var argv []string
	var word strings.Builder
	inWord := false
	var quote rune
	for _, r := range cmd {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				argv, inWord = append(argv, word.String()), false
				word.Reset()
			}
		case r == '\n' || r == '\r' || r == 0:
			return nil, fmt.Errorf("lock %q: a driver command is one line without NUL", lock)
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("lock %q: unclosed %c quote in the driver command", lock, quote)
	}
	if inWord {
		argv = append(argv, word.String())
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("lock %q: no driver command; give exec:'PROGRAM ARGS'", lock)
	}
	return argv, nil
}

// Driver is a lock run by the user's own program: each call is a request
// of the JSON-lines protocol (driverproto.go) to a driver process. A
// driver that breaks the protocol, exits or hangs fails the whole lock
// (Failed, Err): the run ends with one line naming it, and every process
// is stopped.
type Driver struct {
	name    string
	argv    []string
	opts    DriverOptions
	servers []string
	caps    DriverCaps
	// procs are the processes by slot; a crash (Crash) replaces one, so
	// they are read under procsMu.
	procsMu sync.RWMutex
	procs   []*driverProc
	// crashedCPU is the CPU time of the processes a crash ended.
	crashedCPU time.Duration
	// next spreads a call without a worker over the processes.
	next atomic.Uint64

	// crashes counts the processes Crash replaced.
	crashes atomic.Int64

	failOnce sync.Once
	failed   chan struct{}
	err      error
}

// NewDriver starts the driver processes of lock (exec:CMD) and reads each
// one's hello; servers are the topology's redis:// URLs, handed to each
// driver in lockbench's hello. A driver that does not start or greet
// properly is stopped, with the others, and named in the error.
func NewDriver(ctx context.Context, lock string, servers []string, opts DriverOptions) (*Driver, error) {
	argv, err := ParseDriverCommand(lock)
	if err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultDriverTimeout
	}
	if opts.Procs == "" {
		opts.Procs = DriverAuto
	}
	if opts.Procs != DriverAuto && opts.Procs != DriverPerWorker && opts.Procs != DriverShared {
		return nil, fmt.Errorf("--driver-procs %q: accepted: %s, %s, %s", opts.Procs, DriverAuto, DriverPerWorker, DriverShared)
	}
	d := &Driver{name: lock, argv: argv, opts: opts, servers: servers, failed: make(chan struct{}), procs: make([]*driverProc, 1)}
	// The first process's hello decides auto's layout.
	first, firstCaps, err := d.start(ctx, 0)
	if err != nil {
		return nil, err
	}
	d.procs[0] = first
	if d.opts.Procs == DriverAuto {
		d.opts.Procs = DriverPerWorker
		if firstCaps.Concurrent {
			d.opts.Procs = DriverShared
		}
	}
	n := 1
	if d.opts.Procs == DriverPerWorker {
		n = max(1, opts.Workers)
	}
	d.procs = append(d.procs, make([]*driverProc, n-1)...)
	// Started side by side: an interpreter's start-up is most of a hello.
	caps, errs := make([]DriverCaps, n), make([]error, n)
	caps[0] = firstCaps
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Go(func() { d.procs[i], caps[i], errs[i] = d.start(ctx, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = d.Close()
		return nil, firstErr(errs)
	}
	d.caps = caps[0]
	for i, c := range caps {
		if c != d.caps {
			_ = d.Close()
			return nil, d.named(fmt.Errorf("process %d said hello %+v, process 0 %+v: one driver, one hello", i, c, d.caps))
		}
	}
	for _, p := range d.procs {
		go p.readAnswers()
	}
	return d, nil
}

// ProbeDriver starts one process of a driver lock, reads its hello and
// stops it: what the lock can do, before a plan of runs is made for it.
// The hello names a server no one listens on; a driver must not reach
// its servers before its first request.
func ProbeDriver(ctx context.Context, lock string) (DriverCaps, error) {
	d, err := NewDriver(ctx, lock, []string{"redis://127.0.0.1:1/0"}, DriverOptions{Procs: DriverShared})
	if err != nil {
		return DriverCaps{}, err
	}
	defer d.Close()
	return d.Caps(), nil
}

// firstErr is the first non-nil error.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// start starts process i and reads its hello.
func (d *Driver) start(ctx context.Context, i int) (*driverProc, DriverCaps, error) {
	p, err := startDriverProc(d, i)
	if err != nil {
		return nil, DriverCaps{}, d.named(err)
	}
	hello, _ := json.Marshal(DriverHello{Op: OpHello, V: DriverProtocol, Servers: d.servers})
	if err := p.write(hello); err != nil {
		p.kill()
		return nil, DriverCaps{}, d.named(fmt.Errorf("writing the hello: %w%s", err, p.stderrTail()))
	}
	// Four timeouts: many interpreters may start at once on a loaded host.
	caps, err := p.readHello(ctx, 4*d.opts.Timeout)
	if err != nil {
		p.kill()
		return nil, DriverCaps{}, d.named(err)
	}
	return p, caps, nil
}

// named puts the driver's command before err, so the one line a failure
// prints says which program broke.
func (d *Driver) named(err error) error {
	return fmt.Errorf("driver %q: %w", strings.TrimPrefix(d.name, DriverPrefix), err)
}

// fail marks the lock broken by err, once, and stops every process:
// pending calls end with the error, new ones fail at once.
func (d *Driver) fail(err error) {
	d.failOnce.Do(func() {
		d.err = d.named(err)
		close(d.failed)
		for _, p := range d.procList() {
			if p != nil {
				p.kill()
			}
		}
	})
}

// Failed is closed when the driver broke; Err then says how.
func (d *Driver) Failed() <-chan struct{} { return d.failed }

// Err is why the driver broke, nil while it works.
func (d *Driver) Err() error {
	select {
	case <-d.failed:
		return d.err
	default:
		return nil
	}
}

// Caps is the driver's hello.
func (d *Driver) Caps() DriverCaps { return d.caps }

// Close stops every driver process: stdin closed (a driver may finish its
// releases), then, after a short grace, SIGKILL to its process group.
func (d *Driver) Close() error {
	d.failOnce.Do(func() {
		d.err = d.named(errors.New("closed"))
		close(d.failed)
		for _, p := range d.procList() {
			if p != nil {
				p.stop()
			}
		}
	})
	for _, p := range d.procList() {
		if p != nil {
			p.kill()
		}
	}
	return nil
}

// procList is a copy of the processes by slot.
func (d *Driver) procList() []*driverProc {
	d.procsMu.RLock()
	defer d.procsMu.RUnlock()
	return slices.Clone(d.procs)
}

// Info describes the driver lock: its command as the name, the hello's
// library and version.
func (d *Driver) Info() Info {
	return Info{Name: d.name, Fencing: d.caps.Fences, Nodes: len(d.servers), Library: d.caps.Name, Version: d.caps.Version,
		Settings: map[string]string{"driver-procs": d.opts.Procs, "driver-timeout": d.opts.Timeout.String()}}
}

// procFor is the process an acquisition goes to: the worker's own with
// per-worker processes, else the one shared.
func (d *Driver) procFor(ctx context.Context) *driverProc {
	d.procsMu.RLock()
	defer d.procsMu.RUnlock()
	if w, ok := WorkerOf(ctx); ok {
		return d.procs[w%len(d.procs)]
	}
	return d.procs[int(d.next.Add(1))%len(d.procs)]
}

// Acquire asks the driver for one attempt at key.
func (d *Driver) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	p := d.procFor(ctx)
	start := time.Now()
	a, err := p.call(ctx, DriverRequest{Op: OpAcquire, Key: key, TTLms: ttlMs(ttl)})
	if err != nil {
		return Lease{}, Failed, err
	}
	switch a.Result {
	case ResultGranted:
		lease := Lease{Key: key, Token: a.Token, Fence: a.Fence, Start: start, Validity: validity(a, ttl), handle: p}
		return lease, OK, nil
	case ResultHeld:
		return Lease{}, Contended, nil
	case ResultLost:
		d.fail(fmt.Errorf("answered acquire %d with lost; an acquire is granted, held or error", a.ID))
		return Lease{}, Failed, d.err
	}
	return Lease{}, Failed, &DriverError{Message: a.Message}
}

// Renew asks the process that granted lease to extend it.
func (d *Driver) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	if !d.caps.Renews {
		return Failed, fmt.Errorf("%w: driver %s says it does not renew", ErrNoRenewal, d.caps.Name)
	}
	p, ok := lease.handle.(*driverProc)
	if !ok || p.driver != d {
		return Failed, ErrForeignLease
	}
	start := time.Now()
	a, err := p.call(ctx, DriverRequest{Op: OpRenew, Key: lease.Key, Token: lease.Token, TTLms: ttlMs(ttl)})
	if err != nil {
		return Failed, err
	}
	out, err := ownedOutcome(a)
	if out == OK {
		lease.Start, lease.Validity = start, validity(a, ttl)
	}
	return out, err
}

// Release asks the process that granted lease to give it up.
func (d *Driver) Release(ctx context.Context, lease Lease) (Outcome, error) {
	p, ok := lease.handle.(*driverProc)
	if !ok || p.driver != d {
		return Failed, ErrForeignLease
	}
	a, err := p.call(ctx, DriverRequest{Op: OpRelease, Key: lease.Key, Token: lease.Token})
	if err != nil {
		return Failed, err
	}
	return ownedOutcome(a)
}

// Staller is a lock whose holders live in processes of their own (a
// driver's): a holder's pause stops its process rather than its goroutine.
type Staller interface {
	// Stall pauses the holder of lease for pause, and returns after it.
	Stall(lease Lease, pause time.Duration)
}

// Stall stops the process holding lease for pause (SIGSTOP, then SIGCONT):
// the holder's own runtime stops, as a GC pause or a descheduled VM would
// stop it. A shared process stalls every worker's client, as it would.
func (d *Driver) Stall(lease Lease, pause time.Duration) {
	p, ok := lease.handle.(*driverProc)
	if !ok {
		time.Sleep(pause)
		return
	}
	p.signal(syscall.SIGSTOP)
	time.Sleep(pause)
	p.signal(syscall.SIGCONT)
}

// Crasher is a Locker whose holder's client can die for real: a holder
// that crashes (--crash-prob) ends the client that holds its lease, and a
// new one takes the client's place, as a restarted service would.
type Crasher interface {
	// Crash kills the client holding lease and starts its successor; an
	// error is a successor that could not start, which fails the lock.
	Crash(lease Lease) error
}

// ErrDriverCrashed is the error of a call on a driver process that a
// crash killed (a lease it granted, renewed or released after it).
var ErrDriverCrashed = errors.New("its driver process was killed by a crash (--crash-prob)")

// Crash kills the process holding lease (SIGKILL to its group: the user's
// runtime dies without releasing, as a crashed client does) and starts a
// new process in its slot, with a hello of its own, for the worker's next
// acquisitions. With a shared process every holder's client dies with it:
// their later calls on it fail with ErrDriverCrashed.
func (d *Driver) Crash(lease Lease) error {
	p, ok := lease.handle.(*driverProc)
	if !ok {
		return nil
	}
	d.procsMu.Lock()
	defer d.procsMu.Unlock()
	if p.index >= len(d.procs) || d.procs[p.index] != p || d.Err() != nil {
		// Another holder's crash already replaced it, or the lock is done.
		return nil
	}
	if p.cmd.Process != nil {
		if cpu, err := procCPU(p.cmd.Process.Pid); err == nil {
			d.crashedCPU += cpu
		}
	}
	p.crash()
	next, caps, err := d.start(context.Background(), p.index)
	if err == nil && caps != d.caps {
		next.kill()
		err = d.named(fmt.Errorf("restarted after a crash, said hello %+v, before %+v: one driver, one hello", caps, d.caps))
	}
	if err != nil {
		go d.fail(fmt.Errorf("restarting after a crash: %w", err))
		return err
	}
	d.procs[p.index] = next
	d.crashes.Add(1)
	go next.readAnswers()
	return nil
}

// Crashes is how many driver processes a crash killed and replaced.
func (d *Driver) Crashes() int64 { return d.crashes.Load() }

// crash SIGKILLs the process group at once and answers the calls still
// waiting on it with ErrDriverCrashed.
func (p *driverProc) crash() {
	p.crashed.Store(true)
	p.killed.Store(true)
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(2 * time.Second):
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, pc := range p.wait {
		delete(p.wait, id)
		pc.answer <- DriverAnswer{ID: id, Result: ResultError, Message: ErrDriverCrashed.Error()}
	}
}

// ownedOutcome maps a renew's or release's answer to its outcome.
func ownedOutcome(a DriverAnswer) (Outcome, error) {
	switch a.Result {
	case ResultGranted:
		return OK, nil
	case ResultHeld:
		return Taken, nil
	case ResultLost:
		return Lost, nil
	}
	return Failed, &DriverError{Message: a.Message}
}

// validity is a granted answer's validity: the driver's, else the TTL.
func validity(a DriverAnswer, ttl time.Duration) time.Duration {
	if a.ValidityMs > 0 {
		return time.Duration(a.ValidityMs) * time.Millisecond
	}
	return ttl
}

// ttlMs is ttl in whole milliseconds, at least 1.
func ttlMs(ttl time.Duration) int64 { return max(1, ttl.Milliseconds()) }

// DriverError is an error answer of a driver: the attempt failed for the
// reason its message gives (counted as kind driver).
type DriverError struct{ Message string }

func (e *DriverError) Error() string { return "driver: " + e.Message }

// driverProc is one driver process: requests written under a mutex,
// answers read by one goroutine and handed to their callers by id.
type driverProc struct {
	driver *Driver
	index  int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer

	wmu  sync.Mutex
	ids  atomic.Uint64
	mu   sync.Mutex
	wait map[uint64]*pendingCall
	// exited is closed once the process was reaped; waitErr is then how
	// it ended.
	exited  chan struct{}
	waitErr error
	killed  atomic.Bool
	// crashed is set when a crash killed it (Crash): calls on it fail
	// with ErrDriverCrashed and do not fail the lock.
	crashed atomic.Bool
	// stalls counts the pauses (Stall) in progress, and resumed is when
	// the last one ended (unix nanoseconds): an answer late by a pause is
	// not a hang.
	stalls  atomic.Int32
	resumed atomic.Int64
}

// pendingCall is a request awaiting its answer.
type pendingCall struct {
	op     string
	answer chan DriverAnswer
}

// startDriverProc starts process i of d in a process group of its own (so
// a pause or kill reaches its children too) that dies with lockbench.
func startDriverProc(d *Driver, i int) (*driverProc, error) {
	cmd := exec.Command(d.argv[0], d.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &driverProc{driver: d, index: i, cmd: cmd, stderr: &tailBuffer{max: 2048}, wait: map[uint64]*pendingCall{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	// A pipe of our own for stdout: Wait (which reaps the process as soon
	// as it exits) must not close it under the reader's unread answers.
	out, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	p.stdin, p.out = in, bufio.NewReaderSize(out, 4096)
	go func() {
		p.waitErr = cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	return p, nil
}

// write sends one line.
func (p *driverProc) write(line []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	line = append(line, '\n')
	_, err := p.stdin.Write(line)
	return err
}

// readLine reads one line of at most maxDriverLine bytes.
func (p *driverProc) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := p.out.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, chunk...)
		if len(line) > maxDriverLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxDriverLine)
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// readHello reads the driver's hello within timeout.
func (p *driverProc) readHello(ctx context.Context, timeout time.Duration) (DriverCaps, error) {
	type read struct {
		line []byte
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := p.readLine()
		got <- read{line, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-got:
		if r.err != nil {
			return DriverCaps{}, p.exitError("before its hello", r.err)
		}
		caps, err := ParseDriverCaps(r.line)
		if err != nil {
			return DriverCaps{}, fmt.Errorf("hello %q: %w", clip(r.line), err)
		}
		return caps, nil
	case <-t.C:
		return DriverCaps{}, fmt.Errorf("no hello within %v (4 × --driver-timeout)%s", timeout, p.stderrTail())
	case <-ctx.Done():
		return DriverCaps{}, ctx.Err()
	}
}

// exitError says how the process ended, with the end of its stderr.
func (p *driverProc) exitError(when string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
		status := "closed its output"
		select {
		case <-p.exited:
			status = "exited"
			if p.waitErr != nil {
				status = "exited (" + p.waitErr.Error() + ")"
			}
		case <-time.After(time.Second):
		}
		return fmt.Errorf("%s %s%s", status, when, p.stderrTail())
	}
	return fmt.Errorf("reading its output %s: %w", when, err)
}

// readAnswers hands each answer to its caller until the process ends or
// breaks the protocol, which fails the lock.
func (p *driverProc) readAnswers() {
	for {
		line, err := p.readLine()
		if err != nil {
			if p.killed.Load() {
				return
			}
			p.driver.fail(p.exitError("while running", err))
			return
		}
		a, err := ParseDriverAnswer(line)
		if err != nil {
			p.driver.fail(fmt.Errorf("wrote %q: %w", clip(line), err))
			return
		}
		p.mu.Lock()
		pc, ok := p.wait[a.ID]
		delete(p.wait, a.ID)
		p.mu.Unlock()
		switch {
		case !ok && p.killed.Load():
			// Killed on purpose (a crash): crash answered its callers
			// with ErrDriverCrashed, and what the process wrote before it
			// died, still in the pipe, is moot. CI saw such a line fail a
			// shared process's run.
			return
		case !ok:
			p.driver.fail(fmt.Errorf("answered request id %d, which it was not asked (or was answered already)", a.ID))
			return
		case pc.op == OpAcquire && a.Result == ResultGranted && a.Token == "":
			p.driver.fail(fmt.Errorf("granted acquire %d without a token", a.ID))
			return
		}
		pc.answer <- a
	}
}

// call sends one request and waits for its answer. A request unanswered
// within the driver's timeout fails the lock: a hung driver ends the run.
// One the caller stops waiting for (its context ended) stays asked: its
// answer is read and dropped, and a lease it granted is released.
func (p *driverProc) call(ctx context.Context, req DriverRequest) (DriverAnswer, error) {
	d := p.driver
	if err := d.Err(); err != nil {
		return DriverAnswer{}, err
	}
	if p.crashed.Load() {
		return DriverAnswer{}, d.named(ErrDriverCrashed)
	}
	req.ID = p.ids.Add(1)
	pc := &pendingCall{op: req.Op, answer: make(chan DriverAnswer, 1)}
	p.mu.Lock()
	p.wait[req.ID] = pc
	p.mu.Unlock()
	line, _ := json.Marshal(req)
	if err := p.write(line); err != nil {
		if p.crashed.Load() {
			return DriverAnswer{}, d.named(ErrDriverCrashed)
		}
		d.fail(fmt.Errorf("writing request %d: %w%s", req.ID, err, p.stderrTail()))
		return DriverAnswer{}, d.err
	}
	t := time.NewTimer(d.opts.Timeout)
	defer t.Stop()
	for {
		select {
		case a := <-pc.answer:
			if a.Result == ResultError && p.crashed.Load() && a.Message == ErrDriverCrashed.Error() {
				return DriverAnswer{}, d.named(ErrDriverCrashed)
			}
			return a, nil
		case <-d.failed:
			return DriverAnswer{}, d.err
		case <-t.C:
			if p.crashed.Load() {
				return DriverAnswer{}, d.named(ErrDriverCrashed)
			}
			if left := p.hangLeft(d.opts.Timeout); left > 0 {
				// Paused on purpose (Stall): the wait is the pause's, not a hang.
				t.Reset(left)
				continue
			}
			d.fail(fmt.Errorf("no answer to %s %d within %v (--driver-timeout)", req.Op, req.ID, d.opts.Timeout))
			return DriverAnswer{}, d.err
		case <-ctx.Done():
			go p.drop(pc, req)
			return DriverAnswer{}, ctx.Err()
		}
	}
}

// hangLeft is how much longer an unanswered request may wait before the
// driver is hung: a full timeout from the end of the last pause, or a
// timeout more while one lasts; 0 when it is hung.
func (p *driverProc) hangLeft(timeout time.Duration) time.Duration {
	if p.stalls.Load() > 0 {
		return timeout
	}
	return timeout - time.Since(time.Unix(0, p.resumed.Load()))
}

// drop waits for the answer to a request its caller gave up on, and
// releases a lease it granted, so no key stays held by nobody.
func (p *driverProc) drop(pc *pendingCall, req DriverRequest) {
	select {
	case a := <-pc.answer:
		if req.Op == OpAcquire && a.Result == ResultGranted {
			ctx, cancel := context.WithTimeout(context.Background(), p.driver.opts.Timeout)
			_, _ = p.call(ctx, DriverRequest{Op: OpRelease, Key: req.Key, Token: a.Token})
			cancel()
		}
	case <-p.driver.failed:
	}
}

// signal sends sig to the process's group.
func (p *driverProc) signal(sig syscall.Signal) {
	if p.cmd.Process == nil {
		return
	}
	if sig == syscall.SIGSTOP {
		p.stalls.Add(1)
	}
	if sig == syscall.SIGCONT {
		// Another holder's pause of the same (shared) process goes on.
		p.resumed.Store(time.Now().UnixNano())
		if p.stalls.Add(-1) > 0 {
			return
		}
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// stop closes the driver's stdin, so a well-behaved driver exits.
func (p *driverProc) stop() { _ = p.stdin.Close() }

// kill ends the process group, and reaps it, once.
func (p *driverProc) kill() {
	if p.killed.Swap(true) || p.cmd.Process == nil {
		return
	}
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(200 * time.Millisecond):
	}
	// The group too: a driver's children (a shell's program) go with it.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
	}
}

// ProcessCPU is the user and system CPU time the driver's processes (and
// the children they waited for) have used so far, from /proc: the
// client's CPU of a driver lock is lockbench's and its driver's.
func (d *Driver) ProcessCPU() (time.Duration, error) {
	d.procsMu.RLock()
	total := d.crashedCPU
	d.procsMu.RUnlock()
	for _, p := range d.procList() {
		if p == nil || p.cmd.Process == nil {
			continue
		}
		cpu, err := procCPU(p.cmd.Process.Pid)
		if err != nil {
			return 0, fmt.Errorf("driver process %d: %w", p.cmd.Process.Pid, err)
		}
		total += cpu
	}
	return total, nil
}

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on Linux.
const userHZ = 100

// procCPU reads utime, stime, cutime and cstime of pid from /proc.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command (in parentheses, which may hold spaces).
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:15] { // utime stime cutime cstime (fields 14–17)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// Pid is the driver process of lease, 0 when lease is not a driver's.
func (d *Driver) Pid(lease Lease) int {
	if p, ok := lease.handle.(*driverProc); ok && p.cmd.Process != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// tailBuffer keeps the last max bytes written to it (a driver's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(b), nil
}

// lastLine is the last non-empty line written.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// stderrTail is "; stderr: LINE" with the driver's last stderr line, or "".
func (p *driverProc) stderrTail() string {
	if l := p.stderr.lastLine(); l != "" {
		return "; stderr: " + l
	}
	return ""
}

// clip shortens a line for a message.
func clip(b []byte) string {
	const n = 80
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// workerKey is the context key of the worker a call comes from.
type workerKey struct{}

// WithWorker marks ctx as worker id's: a lock that keeps something per
// worker (a driver process) serves the worker's calls from its own.
func WithWorker(ctx context.Context, id int) context.Context {
	return context.WithValue(ctx, workerKey{}, id)
}

// WorkerOf is the worker ctx was marked with (WithWorker).
func WorkerOf(ctx context.Context) (int, bool) {
	id, ok := ctx.Value(workerKey{}).(int)
	return id, ok
}

// serverURLs are the redis:// URLs of the clients behind nodes, for a
// driver's hello (with the password: the hello goes to its stdin only).
func serverURLs(nodes []redis.Cmdable) ([]string, error) {
	var out []string
	for _, n := range nodes {
		c, ok := n.(*redis.Client)
		if !ok {
			return nil, fmt.Errorf("a driver lock needs plain clients to its servers, not %T", n)
		}
		o := c.Options()
		u := url.URL{Scheme: "redis", Host: o.Addr, Path: "/" + strconv.Itoa(o.DB)}
		if o.Password != "" {
			u.User = url.UserPassword(o.Username, o.Password)
		}
		out = append(out, u.String())
	}
	return out, nil
}
