package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// TestPasswordNeverWritten runs against a real server that requires a
// password, given as a flag and through the environment, and greps every
// byte lockbench wrote: stdout, stderr, the runs dir, a report, a sweep, a
// merged result.
func TestPasswordNeverWritten(t *testing.T) {
	const pw = "Pw-9f3a1c77e2"
	srv := composetest.Server(t, compose.ServerOptions{Args: []string{"--requirepass", pw}})
	url := "redis://:" + pw + "@" + srv.Addr() + "/0"
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	var written strings.Builder
	lb := func(args ...string) {
		t.Helper()
		code, out, errs := lockbench(t, args...)
		written.WriteString(out + errs)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	common := []string{"-d", "300ms", "--warmup", "0", "--out", runs, "-c", "2"}
	lb(append([]string{"run", "--redis", url, "--format", "json", "--report", filepath.Join(dir, "report.html")}, common...)...)
	lb(append([]string{"run", "--redis", url, "--count", "2"}, common...)...)
	gen := filepath.Join(dir, "gen")
	for _, id := range []string{"0", "1"} {
		lb("run", "--redis", url, "--run-id", "secret-run", "--generators", "2", "--generator-id", id, "-d", "300ms", "--warmup", "0", "--out", gen, "-q")
	}
	gens, _ := filepath.Glob(filepath.Join(gen, "*.json"))
	t.Setenv("LOCKBENCH_REDIS", url)
	lb(append([]string{"run"}, common...)...)
	lb(append([]string{"sweep", "--concurrency", "1,2", "--format", "json"}, common[:len(common)-2]...)...)
	files, _ := filepath.Glob(filepath.Join(runs, "*.json"))
	if len(files) < 4 {
		t.Fatalf("%d result files, want at least 4", len(files))
	}
	lb(append([]string{"results", "merge", "--out", gen, "-o", filepath.Join(dir, "merged.json")}, gens...)...)
	lb("results", "ls", "--out", runs)
	lb("results", "show", "--out", runs, files[0])
	lb("results", "compare", "--out", runs, "--format", "csv", files[0], files[1])
	lb("results", "report", "--out", runs, "-o", filepath.Join(dir, "all.html"), files[0], files[1])
	if strings.Contains(written.String(), pw) {
		t.Fatal("stdout or stderr shows the password")
	}
	if !strings.Contains(written.String(), "xxxxx") {
		t.Fatal("the redacted URL is not shown at all: the test would not see a leak")
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), pw) {
			t.Errorf("%s holds the password", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
