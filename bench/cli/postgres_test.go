package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// lockbenchProcess runs lockbench as a process of its own (this test binary
// re-executed as the CLI); interruptAfter, when positive, sends it SIGINT
// then, as Ctrl-C would. It returns the exit code, the output, and the pid.
func lockbenchProcess(t *testing.T, interruptAfter time.Duration, args ...string) (int, string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if interruptAfter > 0 {
		timer := time.AfterFunc(interruptAfter, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
		defer timer.Stop()
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), cmd.Process.Pid
}

// TestPostgresRunLeavesNothing: a run on a local postgres, ended normally
// and by Ctrl-C mid-window, leaves no postgres process and no data
// directory.
func TestPostgresRunLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		interrupt time.Duration
		want      int
	}{
		{"success", 0, 0},
		{"ctrl-c in the window", 4 * time.Second, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, pid := lockbenchProcess(t, tc.interrupt, "run", "--topology", "postgres", "--lock", "pg-advisory",
				"-c", "4", "-d", "6s", "--warmup", "0", "-q", "--out", t.TempDir())
			if code != tc.want {
				t.Fatalf("exit %d, want %d: %s", code, tc.want, out)
			}
			if left := compose.PgLeftovers(pid); len(left) > 0 {
				t.Fatalf("lockbench (pid %d) left PostgreSQL behind: %v", pid, left)
			}
		})
	}
}

// TestPostgresPasswordNeverWritten runs with an external --postgres URL
// carrying a password and greps everything lockbench wrote for it.
func TestPostgresPasswordNeverWritten(t *testing.T) {
	const pw = "Pg-7c1e99ab04"
	srv := composetest.PgServer(t)
	url := "postgres://lockbench:" + pw + "@" + srv.Addr() + "/postgres?sslmode=disable"
	runs := filepath.Join(t.TempDir(), "runs")
	var written strings.Builder
	for _, args := range [][]string{
		{"run", "--topology", "postgres", "--postgres", url, "--lock", "pg-lease", "-c", "2", "-d", "1s", "--warmup", "0", "--out", runs, "--format", "json"},
		{"run", "--topology", "postgres", "--postgres", url, "--lock", "occ", "-c", "2", "-d", "1s", "--warmup", "0", "--out", runs, "--fault", "at=500ms terminate holder"},
		{"run", "--topology", "postgres", "--postgres", "postgres://lockbench:" + pw + "@127.0.0.1:1/postgres", "-d", "1s", "--out", runs},
	} {
		code, out, errs := lockbench(t, args...)
		written.WriteString(out + errs)
		if code != 0 && !strings.Contains(args[4], "127.0.0.1:1/") {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	_ = filepath.WalkDir(runs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			written.Write(b)
		}
		return nil
	})
	if strings.Contains(written.String(), pw) {
		t.Fatal("the --postgres password was written to output or a result file")
	}
	if !strings.Contains(written.String(), "xxxxx") {
		t.Fatal("no redacted URL anywhere: was the external server used?")
	}
}
