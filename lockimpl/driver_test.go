package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// fakeHello is a well-formed driver hello for the shell drivers below.
const fakeHello = `{"op":"hello","v":1,"name":"fake","renews":true,"fences":false,"waits":false}`

// shDriver is an exec: lock running script under sh; $PIDFILE in it is
// replaced by a file the script may write its pid to, HELLO by a command
// writing fakeHello, and ANSWER by one writing answer.
func shDriver(t *testing.T, script, answer string) (lock, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "pid")
	hello, ans := filepath.Join(dir, "hello"), filepath.Join(dir, "answer")
	if err := os.WriteFile(hello, []byte(fakeHello+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ans, []byte(answer+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script = strings.ReplaceAll(script, "$PIDFILE", pidFile)
	script = strings.ReplaceAll(script, "HELLO", "cat "+hello)
	script = strings.ReplaceAll(script, "ANSWER", "cat "+ans)
	return "exec:sh -c '" + script + "'", pidFile
}

// gone waits for the process group of the pid in pidFile to be gone.
func gone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return // the driver never got as far as writing it
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("driver process group %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDriverBadAtStart(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"exits at once", `echo $$ > $PIDFILE; echo "no redis here" >&2; exit 3`, "exited (exit status 3) before its hello; stderr: no redis here"},
		{"hangs before its hello", `echo $$ > $PIDFILE; sleep 30`, "no hello within"},
		{"hello not JSON", `echo $$ > $PIDFILE; echo hi there; sleep 30`, `hello "hi there": not a JSON object`},
		{"hello of another version", `echo $$ > $PIDFILE; ANSWER; sleep 30`, "protocol version 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock, pidFile := shDriver(t, tc.script, `{"op":"hello","v":2,"name":"x"}`)
			_, err := lockimpl.NewDriver(context.Background(), lock, nil, lockimpl.DriverOptions{Timeout: 100 * time.Millisecond, Workers: 2})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), `driver "sh -c`) {
				t.Fatalf("err = %v, want one naming the driver and %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err is more than one line: %q", err)
			}
			gone(t, pidFile)
		})
	}
}

func TestDriverBrokenWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name, script, answer, want string
	}{
		{"hangs", `read h; HELLO; echo $$ > $PIDFILE; sleep 30`, "", "no answer to acquire 1 within"},
		{"not JSON", `read h; HELLO; echo $$ > $PIDFILE; read r; echo oops; sleep 30`, "", `wrote "oops": not a JSON object`},
		{"granted without a token", `read h; HELLO; echo $$ > $PIDFILE; read r; ANSWER; sleep 30`, `{"id":1,"result":"granted"}`, "granted acquire 1 without a token"},
		{"answers an id not asked", `read h; HELLO; echo $$ > $PIDFILE; read r; ANSWER; sleep 30`, `{"id":7,"result":"held"}`, "answered request id 7, which it was not asked"},
		{"exits", `read h; HELLO; echo $$ > $PIDFILE; read r; echo bye >&2; exit 0`, "", "exited while running; stderr: bye"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock, pidFile := shDriver(t, tc.script, tc.answer)
			d, err := lockimpl.NewDriver(context.Background(), lock, nil, lockimpl.DriverOptions{Timeout: 300 * time.Millisecond, Procs: lockimpl.DriverShared})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			_, out, err := d.Acquire(context.Background(), "k", time.Second)
			if out != lockimpl.Failed || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("acquire = %v, %v; want failed with %q", out, err, tc.want)
			}
			select {
			case <-d.Failed():
			default:
				t.Fatal("the driver is not marked failed")
			}
			if d.Err() == nil || !strings.HasPrefix(d.Err().Error(), `driver "sh -c`) {
				t.Errorf("Err = %v, want one naming the driver", d.Err())
			}
			if _, out, _ := d.Acquire(context.Background(), "k", time.Second); out != lockimpl.Failed {
				t.Errorf("an acquisition after the failure = %v, want failed", out)
			}
			gone(t, pidFile)
		})
	}
}

func TestParseDriverCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"exec:python3 driver.py", []string{"python3", "driver.py"}, ""},
		{"exec:  sh -c 'echo a b'  ", []string{"sh", "-c", "echo a b"}, ""},
		{`exec:prog "two words" x''y`, []string{"prog", "two words", "xy"}, ""},
		{"exec:", nil, "no driver command"},
		{"exec:prog 'open", nil, "unclosed ' quote"},
		{"single", nil, "exec:'CMD ARGS'"},
	} {
		got, err := lockimpl.ParseDriverCommand(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// goDriver builds the Go driver (null and single) once per test.
func goDriver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "godriver")
	out, err := exec.Command("go", "build", "-o", bin, "./drivers/godriver").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// exerciseDriver takes, renews and releases a key through d, and checks a
// second holder is refused while the first holds it.
func exerciseDriver(t *testing.T, d *lockimpl.Driver, contended bool) {
	t.Helper()
	ctx := context.Background()
	key := "lockbench:test:driver:" + lockimpl.NewToken()
	lease, out, err := d.Acquire(lockimpl.WithWorker(ctx, 0), key, 2*time.Second)
	if out != lockimpl.OK || err != nil || lease.Token == "" {
		t.Fatalf("acquire = %v, %v, %+v", out, err, lease)
	}
	if contended {
		if _, out, err := d.Acquire(lockimpl.WithWorker(ctx, 1), key, 2*time.Second); out != lockimpl.Contended {
			t.Fatalf("second acquire = %v, %v; want contended", out, err)
		}
	}
	if out, err := d.Renew(ctx, &lease, 3*time.Second); out != lockimpl.OK || lease.Validity != 3*time.Second {
		t.Fatalf("renew = %v, %v, validity %v", out, err, lease.Validity)
	}
	if out, err := d.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release = %v, %v", out, err)
	}
	if contended {
		if out, err := d.Release(ctx, lease); !out.IsLost() {
			t.Fatalf("second release = %v, %v; want lost", out, err)
		}
	}
}

func TestGoDriverSingleOnRedis(t *testing.T) {
	bin := goDriver(t)
	srv := startServer(t)
	for _, procs := range []string{lockimpl.DriverPerWorker, lockimpl.DriverShared, lockimpl.DriverAuto} {
		t.Run(procs, func(t *testing.T) {
			d, err := lockimpl.NewDriver(context.Background(), "exec:"+bin+" single", []string{"redis://" + srv + "/0"},
				lockimpl.DriverOptions{Procs: procs, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Caps().Name != "single (Go driver)" || !d.Caps().Renews || !d.Caps().Concurrent {
				t.Errorf("caps = %+v", d.Caps())
			}
			// auto shares the process of a driver that serves concurrently.
			if want := map[string]string{lockimpl.DriverAuto: lockimpl.DriverShared}[procs]; want != "" && d.Info().Settings["driver-procs"] != want {
				t.Errorf("auto ran %s, want %s", d.Info().Settings["driver-procs"], want)
			}
			exerciseDriver(t, d, true)
		})
	}
}

// redisPython is a python3 that imports redis (Debian's python3-redis),
// or "" with the reason.
func redisPython() (string, string) {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if err := exec.Command(py, "-c", "import redis").Run(); err == nil {
			return py, ""
		}
	}
	return "", "no python3 with the redis module (Debian: apt-get install python3-redis, or make python-driver)"
}

func TestPythonRedisPyDriver(t *testing.T) {
	py, why := redisPython()
	if py == "" {
		t.Skip(why)
	}
	srv := startServer(t)
	driverPy, _ := filepath.Abs("drivers/python/redispy_driver.py")
	d, err := lockimpl.NewDriver(context.Background(), "exec:"+py+" "+driverPy, []string{"redis://" + srv + "/0"},
		lockimpl.DriverOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Caps().Name != "redis-py Lock" || !d.Caps().Renews || d.Caps().Fences || d.Caps().Concurrent {
		t.Errorf("caps = %+v", d.Caps())
	}
	// auto gives a driver that answers one request at a time a process per worker.
	if got := d.Info().Settings["driver-procs"]; got != lockimpl.DriverPerWorker {
		t.Errorf("auto ran %s, want per-worker", got)
	}
	exerciseDriver(t, d, true)
}

func TestDriverStallStopsItsProcess(t *testing.T) {
	bin := goDriver(t)
	d, err := lockimpl.NewDriver(context.Background(), "exec:"+bin+" null", nil, lockimpl.DriverOptions{Workers: 1, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lease, out, err := d.Acquire(context.Background(), "k", time.Second)
	if out != lockimpl.OK {
		t.Fatal(out, err)
	}
	pid := d.Pid(lease)
	done := make(chan struct{})
	go func() { d.Stall(lease, 400*time.Millisecond); close(done) }()
	time.Sleep(100 * time.Millisecond)
	if state := procState(t, pid); state != "T" {
		t.Errorf("driver state during the stall = %q, want T (stopped)", state)
	}
	// A call during the stall waits it out: longer than the timeout, and
	// no hang.
	if out, err := d.Release(context.Background(), lease); out != lockimpl.OK {
		t.Fatalf("release during the stall = %v, %v", out, err)
	}
	<-done
	if d.Err() != nil {
		t.Fatalf("a stall broke the driver: %v", d.Err())
	}
}

// procState is the state letter of pid from /proc.
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return strings.Fields(s[i+1:])[0]
}

// startServer starts a redis-server for t and returns its address.
func startServer(t *testing.T) string {
	t.Helper()
	return composetest.Server(t, compose.ServerOptions{}).Addr()
}

// TestDriverProcessCPU: the CPU a driver's processes use is read, so a
// driver lock's client CPU is lockbench's and its driver's.
func TestDriverProcessCPU(t *testing.T) {
	lock, _ := shDriver(t, `read h; HELLO; while :; do :; done`, "")
	d, err := lockimpl.NewDriver(context.Background(), lock, nil, lockimpl.DriverOptions{Procs: lockimpl.DriverShared})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cpu, err := d.ProcessCPU()
		if err != nil {
			t.Fatal(err)
		}
		if cpu > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a busy driver used no CPU in 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDriverCrashKillsItsProcess: a crash of a holder (--crash-prob)
// SIGKILLs the driver process holding the lease — the key stays held on
// the server until its TTL, as a dead client leaves it — and a new process
// takes the slot, so the worker's next acquisition goes on. With a shared
// process, a call on the dead one by another holder fails as crashed, and
// does not break the lock.
func TestDriverCrashKillsItsProcess(t *testing.T) {
	bin := goDriver(t)
	srv := startServer(t)
	for _, procs := range []string{lockimpl.DriverPerWorker, lockimpl.DriverShared} {
		t.Run(procs, func(t *testing.T) {
			d, err := lockimpl.NewDriver(context.Background(), "exec:"+bin+" single", []string{"redis://" + srv + "/0"},
				lockimpl.DriverOptions{Procs: procs, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			w0, w1 := lockimpl.WithWorker(context.Background(), 0), lockimpl.WithWorker(context.Background(), 1)
			key := "lockbench:test:crash:" + lockimpl.NewToken()
			lease, out, err := d.Acquire(w0, key, 2*time.Second)
			if out != lockimpl.OK {
				t.Fatal(out, err)
			}
			other, out, err := d.Acquire(w1, key+":other", 2*time.Second)
			if out != lockimpl.OK {
				t.Fatal(out, err)
			}
			pid := d.Pid(lease)
			if err := d.Crash(lease); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, 0); err == nil {
				t.Errorf("driver process %d still there after the crash", pid)
			}
			if d.Crashes() != 1 {
				t.Errorf("crashes = %d, want 1", d.Crashes())
			}
			// The dead client never released: the key is still held.
			if _, out, _ := d.Acquire(w0, key, time.Second); out != lockimpl.Contended {
				t.Errorf("acquire of the crashed holder's key = %v, want contended until its TTL", out)
			}
			next, out, err := d.Acquire(w0, key+":next", time.Second)
			if out != lockimpl.OK || d.Pid(next) == pid || d.Pid(next) == 0 {
				t.Fatalf("acquire after the crash = %v, %v on pid %d (crashed %d); want a new process", out, err, d.Pid(next), pid)
			}
			out, err = d.Release(w1, other)
			switch procs {
			case lockimpl.DriverShared:
				// The other holder's client died with the shared process.
				if !errors.Is(err, lockimpl.ErrDriverCrashed) || lockimpl.ErrorKind(err) != "driver_crashed" {
					t.Errorf("release on the dead shared process = %v, %v; want ErrDriverCrashed", out, err)
				}
			default:
				if out != lockimpl.OK {
					t.Errorf("release on the other worker's process = %v, %v", out, err)
				}
			}
			if d.Err() != nil {
				t.Fatalf("a crash broke the driver: %v", d.Err())
			}
		})
	}
}
