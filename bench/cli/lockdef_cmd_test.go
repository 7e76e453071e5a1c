package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockDefBadInput: a definition that does not parse, or a --lock-def
// where it cannot run, is one line naming the file or the problem, exit 2.
func TestLockDefBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("acquire: {command: [SET, \"{kee}\"], reply: {granted: OK, held: nil}}\nrelease: {command: [DEL, \"{key}\"], reply: {ok: 1, lost: 0}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good, err := filepath.Abs("../../lockimpl/defs/redis-py.yaml")
	if err != nil {
		t.Fatal(err)
	}
	quorum, err := filepath.Abs("../../lockimpl/defs/redlock.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lock-def", bad}, "--lock-def: lock definition " + bad + ": acquire.command[1]: unknown template {kee}"},
		{[]string{"--lock-def", filepath.Join(dir, "none.yaml")}, "none.yaml: no such file"},
		// Given as --lock def:FILE, the line names --lock.
		{[]string{"--lock", "def:" + bad}, "--lock: lock definition " + bad + ": acquire.command[1]: unknown template {kee}"},
		{[]string{"--lock", "def:" + good, "--topology", "redlock:3"}, "--lock: lock definition " + good + " runs on one master"},
		{[]string{"--lock-def", good, "--lock", "single"}, "give one"},
		{[]string{"--lock-def", good, "--topology", "redlock:3"}, "lock definition " + good + " runs on one master, not on redlock:3; add quorum: majority"},
		{[]string{"--lock-def", quorum}, "lock definition " + quorum + " asks for a quorum (quorum: majority), which runs on redlock:N, not on single"},
		{[]string{"--lock-def", good, "--topology", "etcd:1"}, "a lock definition cannot run on etcd:1; it runs on single (with quorum: majority, on redlock:N)"},
	} {
		code, _, errs := lockbench(t, append([]string{"run", "-d", "1s", "-q", "--out", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestLockDefRun: lockbench run --lock-def with each shipped definition on
// a local redis-server, on its own connections and with --pipeline auto,
// acquires, renews and releases with no incident.
func TestLockDefRun(t *testing.T) {
	for _, run := range []struct {
		f        string
		pipeline string
		topology string
		ttl      string
	}{{"single.yaml", "off", "single", "200ms"}, {"redis-py.yaml", "off", "single", "200ms"}, {"reentrant-hash.yaml", "off", "single", "200ms"},
		{"single.yaml", "auto", "single", "200ms"}, {"reentrant-hash.yaml", "auto", "single", "200ms"},
		// The quorum definition on three masters: a TTL long enough that the
		// default node timeout (TTL/100) and the drift leave a loaded host room.
		{"redlock.yaml", "off", "redlock:3", "5s"}} {
		f := run.f + " --pipeline " + run.pipeline + " --topology " + run.topology
		path, err := filepath.Abs(filepath.Join("../../lockimpl/defs", run.f))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := lockbench(t, "run", "--lock-def", path, "-c", "4", "-d", "1s", "--warmup", "0", "--pipeline", run.pipeline, "--topology", run.topology,
			"--hold", "20ms", "--ttl", run.ttl, "--renew-every", "5ms", "--format", "csv", "-q", "--out", t.TempDir())
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		figures := map[string]string{}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Split(line, ","); len(f) == 5 {
				figures[f[1]] = f[4]
			}
		}
		if figures["ops.renew.count"] == "" || figures["ops.renew.count"] == "0" || figures["ops.renew.errors"] != "0" {
			t.Errorf("%s: renewals %q, errors %q; want some and none failed", f, figures["ops.renew.count"], figures["ops.renew.errors"])
		}
		if figures["incidents"] != "0" || figures["errors"] != "0" {
			t.Errorf("%s: incidents %q, errors %q; want 0", f, figures["incidents"], figures["errors"])
		}
	}
}

// TestLockDefDriver: a definition file naming a driver (driver: CMD) runs
// that driver lock, the reference redis-py driver here, on a real
// redis-server; a driver file with scripts, or on a topology drivers do not
// run on, is one line naming the file, exit 2.
func TestLockDefDriver(t *testing.T) {
	cmd := strings.TrimPrefix(pythonDriver(t), "exec:")
	dir := t.TempDir()
	file := filepath.Join(dir, "py.yaml")
	if err := os.WriteFile(file, []byte("name: redis-py-by-driver\ndriver: "+cmd+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := runJSON(t, "--topology", "single", "--lock-def", file, "--ttl", "300ms", "--hold", "const:20ms")
	if got := field(t, doc, "lock.library"); got != "redis-py Lock" {
		t.Errorf("lock.library = %v; want the driver's redis-py Lock", got)
	}
	if num(t, doc, "throughput.acquired_per_s") == 0 {
		t.Error("nothing acquired through the driver a definition names")
	}
	mixed := filepath.Join(dir, "mixed.yaml")
	if err := os.WriteFile(mixed, []byte("driver: "+cmd+"\nrelease: {command: [DEL, \"{key}\"], reply: {ok: 1, lost: 0}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lock-def", mixed}, "lock definition " + mixed + ": driver: a definition naming a driver has no acquire, release, renew or quorum"},
		{[]string{"--lock-def", file, "--topology", "etcd:1"}, file + ": a driver lock cannot run on etcd:1; it runs on single, redlock:N"},
	} {
		code, _, errs := lockbench(t, append([]string{"run", "-d", "1s", "-q", "--out", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}
