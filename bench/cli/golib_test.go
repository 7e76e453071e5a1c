package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exampleDir is the Go example module: lockbench as a library, with a
// lock of its own registered through cli.Options.Locks.
const exampleDir = "../../lockimpl/examples/mylock"

// buildExample builds the example module as a fresh clone would: from a
// copy whose replace points at this repository, with the module cache the
// repository's own build filled, offline (GOPROXY=off); go.sum lines it
// lacks are taken from that cache (GOSUMDB=off: the cache was verified
// when the repository's build filled it).
func buildExample(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(exampleDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			b = bytes.ReplaceAll(b, []byte("=> ../../.."), []byte("=> "+root))
		}
		if err := os.WriteFile(filepath.Join(src, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "mylock")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the example: %v\n%s", err, out)
	}
	return bin
}

// TestGoLibraryExample builds the example module and runs its own lock,
// go:stamped, through run and lock-cost on a real redis-server (the local
// single topology each command starts): the lock is built in-process over
// lockbench's clients, so its round trips are counted, its fences are
// carried, and it sits in lock-cost beside the built-in single.
func TestGoLibraryExample(t *testing.T) {
	bin := buildExample(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--topology", "single", "--lock", "go:stamped", "-c", "4", "-d", "1s", "--warmup", "0",
		"--ttl", "300ms", "--renew-every", "100ms", "--hold", "const:2ms", "--format", "json", "-q", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("run's output is not JSON: %v\n%s", err, stdout.String())
	}
	if got := field(t, doc, "lock.name"); got != "go:stamped" {
		t.Errorf("lock.name = %v, want go:stamped", got)
	}
	if got := field(t, doc, "lock.fencing"); got != true {
		t.Errorf("lock.fencing = %v: the example's leases carry fences", got)
	}
	if num(t, doc, "throughput.acquired_per_s") == 0 || num(t, doc, "incidents.overlaps") != 0 {
		t.Errorf("acquired %v/s, overlaps %v: want acquisitions and no overlap",
			num(t, doc, "throughput.acquired_per_s"), num(t, doc, "incidents.overlaps"))
	}
	cost := exec.Command(bin, "lock-cost", "--lock", "single", "--lock", "go:stamped", "-c", "4", "-d", "1s", "--out", out)
	b, err := cost.CombinedOutput()
	if err != nil {
		t.Fatalf("lock-cost: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "| go:stamped |") || !strings.Contains(string(b), "|     single |") {
		t.Errorf("lock-cost has no row for go:stamped beside single:\n%s", b)
	}
	// Its row in the renewal matrix: a measured word, not n/a.
	rc := exec.Command(bin, "renewal-check", "--locks", "go:stamped", "--cases", "process-paused", "--trials", "1", "--budget", "0",
		"--format", "json", "-q", "--out", out)
	b, err = rc.Output()
	if err != nil {
		t.Fatalf("renewal-check: %v\n%s", err, b)
	}
	var matrix struct {
		Cells [][]struct{ Case, Lock, Verdict string }
	}
	if err := json.Unmarshal(b, &matrix); err != nil || len(matrix.Cells) != 1 || len(matrix.Cells[0]) != 1 {
		t.Fatalf("renewal-check's output: %v\n%s", err, b)
	}
	if c := matrix.Cells[0][0]; c.Lock != "go:stamped" || c.Verdict == "n/a" || c.Verdict == "not measured" {
		t.Errorf("process-paused on go:stamped: %+v; want a measured word", c)
	}
	// A name the program did not register is bad input, named.
	bad := exec.Command(bin, "run", "--topology", "single", "--lock", "go:nope", "-d", "1s", "-q", "--out", out)
	b, err = bad.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(b), "go:nope: not registered; this program registers go:stamped") {
		t.Errorf("go:nope: %v\n%s\nwant exit 2 naming the registered locks", err, b)
	}
}

// TestGoLockWithoutProgram: the stock binary registers no Go lock, and a
// Go lock's name is checked like any --lock before anything starts (no
// server is started for a run a registered name would refuse).
func TestGoLockWithoutProgram(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--lock", "go:a b"}, "a Go lock's name is letters, digits"},
		// Unregistered comes first: no program registered it anywhere.
		{[]string{"run", "--lock", "go:x", "--topology", "etcd:1"}, "this program registered no Go lock"},
		{[]string{"run", "--lock", "go:x", "--topology", "single"}, "this program registered no Go lock"},
		{[]string{"lock-cost", "--lock", "single", "--lock", "go:x"}, "--lock: lock go:x: this program registered no Go lock"},
		{[]string{"sweep", "--lock", "single,go:x"}, "--lock: lock go:x: this program registered no Go lock"},
		{[]string{"capacity", "--lock", "go:x"}, "--lock: lock go:x: this program registered no Go lock"},
	} {
		code, _, errs := lockbench(t, append(tc.args, "-d", "1s", "-q", "--out", t.TempDir())...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "starting") {
			t.Errorf("%q: exit %d, stderr %q; want 2 with %q and nothing started", tc.args, code, errs, tc.want)
		}
	}
}
