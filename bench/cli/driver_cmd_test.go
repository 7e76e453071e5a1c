package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// redisPython is a python3 that imports redis (Debian's python3-redis).
func redisPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import redis").Run() == nil {
			return py
		}
	}
	t.Skip("no python3 with the redis module: apt-get install python3-redis (make python-driver)")
	return ""
}

// pythonDriver is --lock for the reference redis-py driver.
func pythonDriver(t *testing.T) string {
	t.Helper()
	py := redisPython(t)
	script, err := filepath.Abs("../../lockimpl/drivers/python/redispy_driver.py")
	if err != nil {
		t.Fatal(err)
	}
	return "exec:" + py + " " + script
}

// TestDriverBadInput: a driver lock's definition and flags are checked
// before anything starts: exit 2, one line naming the flag.
func TestDriverBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lock", "exec:sh -c 'exit"}, "--lock: \"exec:sh -c 'exit\": unclosed ' quote"},
		{[]string{"--lock", "exec:"}, "no driver command"},
		{[]string{"--lock", "exec:x", "--driver-procs", "many"}, `--driver-procs: "many": accepted: auto, per-worker, shared`},
		{[]string{"--driver-procs", "shared"}, "--driver-procs: needs --lock exec:'CMD ARGS'"},
		{[]string{"--lock", "exec:x", "--topology", "etcd:1"}, "a driver lock cannot run on etcd:1; it runs on single, redlock:N"},
	} {
		code, _, errs := lockbench(t, append([]string{"run", "-d", "1s", "-q", "--out", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestBrokenDriverEndsTheRun: a driver that exits at once, or hangs in the
// middle of the run, ends it with exit 1 and one line naming the driver,
// and leaves no process behind.
func TestBrokenDriverEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	hello := filepath.Join(dir, "hello")
	if err := os.WriteFile(hello, []byte(`{"op":"hello","v":1,"name":"hangs","renews":true,"fences":false,"waits":false}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "pid")
	for _, tc := range []struct {
		name, lock, want string
	}{
		{"exits at once", "exec:sh -c 'echo no server for me >&2; exit 3'", "exited (exit status 3) before its hello; stderr: no server for me"},
		{"hangs", "exec:sh -c 'echo $$ > " + pidFile + "; read h; cat " + hello + "; read r; sleep 60'", "no answer to acquire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, errs := lockbench(t, "run", "--topology", "single", "--lock", tc.lock, "--driver-timeout", "500ms",
				"-c", "2", "-d", "5s", "--warmup", "0", "-q", "--out", t.TempDir())
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			last := lines[len(lines)-1]
			if code != 1 || !strings.Contains(last, "driver \"sh -c") || !strings.Contains(last, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and a line naming the driver with %q", code, errs, tc.want)
			}
			if took := time.Since(start); took > 4*time.Second {
				t.Logf("the run took %v to end (the window is 5s): the failure ended it early", took)
			}
			if b, err := os.ReadFile(pidFile); err == nil && tc.name == "hangs" {
				var pid int
				for _, c := range strings.TrimSpace(string(b)) {
					pid = pid*10 + int(c-'0')
				}
				// SIGKILL lands a moment after it is sent.
				deadline := time.Now().Add(5 * time.Second)
				for syscall.Kill(-pid, 0) == nil && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if syscall.Kill(-pid, 0) == nil {
					t.Errorf("driver process group %d left running", pid)
				}
			}
		})
	}
}

// TestPythonDriverRun runs redis-py's Lock through the reference driver on
// a real redis-server: renewals, and holders paused past the TTL, whose
// pause stops the driver's own process (SIGSTOP): the lock has no fencing,
// so paused holders' writes land late.
func TestPythonDriverRun(t *testing.T) {
	lock := pythonDriver(t)
	doc := runJSON(t, "--topology", "single", "--lock", lock, "--keys", "uniform:2", "--ttl", "150ms",
		"--hold", "const:20ms", "--pause-prob", "0.3", "--pause", "const:300ms", "--retry", "fixed:5ms", "--acquire-timeout", "2s")
	if got := field(t, doc, "lock.library"); got != "redis-py Lock" {
		t.Errorf("lock.library = %v", got)
	}
	if num(t, doc, "counters.paused") == 0 || num(t, doc, "throughput.acquired_per_s") == 0 {
		t.Errorf("paused %v, acquired %v: want both above 0", num(t, doc, "counters.paused"), num(t, doc, "throughput.acquired_per_s"))
	}
	if fenced := field(t, doc, "lock.fencing"); fenced != false {
		t.Errorf("lock.fencing = %v; redis-py's Lock has no fencing", fenced)
	}
	// The driver sends through redis-py's connections, which lockbench
	// does not see: its round trips are not measured, so absent, not 0.
	if _, ok := field(t, doc, "client").(map[string]any)["sent"]; ok {
		t.Error("client.sent present for a driver lock, whose round trips lockbench cannot count")
	}
	renewed := runJSON(t, "--topology", "single", "--lock", lock, "--ttl", "300ms", "--hold", "const:200ms", "--renew-every", "100ms")
	if num(t, renewed, "counters.renewed") == 0 {
		t.Error("no renewal through the driver")
	}
}
