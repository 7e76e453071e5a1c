package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// commandPaths lists every command of the app with its path of names.
func commandPaths(cmds []*cli.Command, prefix []string) map[string]*cli.Command {
	out := map[string]*cli.Command{}
	for _, c := range cmds {
		path := append(append([]string(nil), prefix...), c.Name)
		out[strings.Join(path, " ")] = c
		for k, v := range commandPaths(c.Subcommands, path) {
			out[k] = v
		}
	}
	return out
}

// TestEveryCommandRefusesAFlagGivenTwice gives each single-valued flag of
// every command twice, by its name and by its alias, and wants exit 2 and one
// line naming it. An unknown flag follows, so that a command that let the
// repeat through stops at the parser instead of running.
func TestEveryCommandRefusesAFlagGivenTwice(t *testing.T) {
	cmds := commandPaths(newApp(io.Discard, io.Discard).Commands, nil)
	checked := map[string]int{}
	for path, c := range cmds {
		for _, f := range c.Flags {
			if repeatable(f) {
				continue
			}
			names := f.Names()
			name := names[0]
			forms := [][2]string{{dashed(name), dashed(name)}}
			if len(names) > 1 {
				forms = append(forms, [2]string{dashed(names[1]), dashed(name)})
			}
			for _, form := range forms {
				args := strings.Fields(path)
				if takesValue(f) {
					args = append(args, form[0], "1", form[1], "2")
				} else {
					args = append(args, form[0], form[1])
				}
				args = append(args, "--zz-not-a-flag")
				code, out, errs := lockbench(t, args...)
				if code != exitBadInput || !strings.Contains(errs, dashed(name)+" given twice") || strings.Count(strings.TrimSpace(errs), "\n") > 0 || out != "" {
					t.Errorf("lockbench %s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %s given twice",
						strings.Join(args, " "), code, out, errs, dashed(name))
				}
			}
			checked[path]++
		}
	}
	for _, path := range []string{"run", "sweep", "capacity", "tune-ttl", "lock-cost", "redlock-cost", "results ls", "results show",
		"results compare", "results merge", "results export", "results collect", "results report", "scenario gc-pause", "k8s job", "image build"} {
		if checked[path] == 0 {
			t.Errorf("no single-valued flag of %s was checked", path)
		}
	}
}

// TestK8sJobRunFlagsRefuseAFlagGivenTwice: the run flags a job passes to
// its pods are checked as run checks them, repeats included.
func TestK8sJobRunFlagsRefuseAFlagGivenTwice(t *testing.T) {
	code, out, errs := lockbench(t, "k8s", "job", "--generators", "2", "--image", "x", "--", "--keys", "1", "--keys", "2")
	if code != exitBadInput || !strings.Contains(errs, "--keys given twice") || out != "" {
		t.Errorf("k8s job -- --keys 1 --keys 2: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestRepeatableFlagsStayRepeatable: flags that collect values are not
// refused when repeated.
func TestRepeatableFlagsStayRepeatable(t *testing.T) {
	code, _, errs := lockbench(t, "results", "ls", "--out", filepath.Join(t.TempDir(), "none"), "--tag", "a=1", "--tag", "b=2")
	if code != exitOK {
		t.Errorf("results ls --tag twice: exit %d, %s", code, errs)
	}
}

// TestTheCommandLineOverridesTheEnvironment: a flag in the environment and
// on the command line is not given twice; the command line wins.
func TestTheCommandLineOverridesTheEnvironment(t *testing.T) {
	t.Setenv("LOCKBENCH_CONCURRENCY", "8")
	code, _, errs := lockbench(t, "run", "-c", "0")
	if code != exitBadInput || !strings.Contains(errs, "--concurrency") || strings.Contains(errs, "twice") || !strings.Contains(errs, `"0"`) {
		t.Errorf("LOCKBENCH_CONCURRENCY=8 run -c 0: exit %d, %q; want -c 0 refused as a value", code, errs)
	}
}

// TestErrorsReadAsOneLine: the parser's and the commands' errors come out in
// lockbench's words, one line, exit 2.
func TestErrorsReadAsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		says, never string
	}{
		{[]string{"run", "--bogus"}, "unknown flag --bogus for lockbench run; see lockbench run --help", " -bogus"},
		{[]string{"redlock-cost", "--topology", "single"}, "--topology: redlock-cost runs single and redlock:N itself; choose N with --masters", "not defined"},
		{[]string{"lock-cost", "--topology", "single"}, "--lock NAME@TOPOLOGY", "not defined"},
		{[]string{"scenario", "gc-pause", "-c", "4"}, "-c: scenario gc-pause decides it itself", "not defined"},
		{[]string{"scenario", "nope"}, "scenario nope: no such command; see lockbench scenario list", "lockbench: lockbench"},
		{[]string{"results", "nope"}, "results nope: no such command; see lockbench results --help", ""},
		{[]string{"nope"}, `unknown command "nope"`, ""},
		{[]string{"run", "-d", "2s", "-d", "3s"}, `--duration given twice to lockbench run ("2s", then "3s")`, "invalid value"},
		{[]string{"run", "--renew-every", "ttl/0"}, `--renew-every "ttl/0": N must be`, "--renew-every: --renew-every"},
		{[]string{"run", "--count", "x"}, `--count "x": want a whole number`, "invalid value"},
		{[]string{"run", "--count"}, "--count needs a value", "argument"},
		{[]string{"run", "--topology", "single", "--topology", "single"}, "--topology: single given twice; give each topology once, and --count N to repeat runs", ""},
		{[]string{"run", "-q", "--out", "runs-never", "--redis", "redis://127.0.0.1:1", "--topology", "redlock:3"}, "needs 3 --redis URLs, one per master, got 1", ""},
		{[]string{"results", "show"}, "show needs a run id, group id, label or file", "(s)"},
		{[]string{"results", "compare", "a"}, "compare needs at least 2 run ids, group ids, labels or files", "(s)"},
		{[]string{"tune-ttl", "--ttls", "1s,1s"}, `--ttls: "1s" listed twice`, "--ttl:"},
		{[]string{"tune-ttl", "--renews", "0,ttl/0"}, `--renews: "ttl/0": N must be`, "--renew-every"},
		{[]string{"tune-ttl", "--topology", "redlock:3", "--redis", "redis://127.0.0.1:1"}, "--redis: redlock:3 needs 3 --redis URLs", "sweep cell"},
		{[]string{"capacity", "--topology", "single", "--topology", "single"}, "single given twice", ""},
		{[]string{"lock-cost", "--lock", "single", "--lock", "single@single"}, "single@single given twice", ""},
		// Mistyped names get the nearest; lists are cut to what fits.
		{[]string{"run", "--topology", "redlok:5"}, `unknown kind "redlok"; did you mean redlock:5?`, "cluster"},
		{[]string{"run", "--topology", "cluster:2"}, "from 3 to 9; want cluster:M[,R]", "etcd"},
		{[]string{"run", "--lock", "redsyn"}, "did you mean redsync?", ""},
		{[]string{"run", "--lock", "zookeeper"}, "want one of single, fenced", ""},
		{[]string{"run", "--workload", "long-wrk"}, "did you mean long-work?", ""},
		{[]string{"run", "--hold", "gauss:1ms"}, `unknown kind "gauss"; want one of const`, ""},
		{[]string{"run", "--fault", "at=1s explode node=0"}, `unknown fault "explode"; want one of kill`, "TARGET"},
		{[]string{"run", "--fault", "at=1s kil node=0"}, "did you mean kill?", ""},
		{[]string{"run", "--retry", "sometimes"}, "--retry", ""},
		{[]string{"run", "--topology", "redlock:3", "--lock", "single"}, "single cannot run on redlock:3", ""},
		{[]string{"scenario", "gc-pause", "--lock", "redsyn"}, "did you mean redsync?", ""},
		{[]string{"scenario", "failovr"}, "scenario failovr: no such command; did you mean failover? see lockbench scenario list", ""},
		{[]string{"results", "shw"}, "did you mean show?", ""},
		{[]string{"runn"}, `unknown command "runn"; did you mean run?`, ""},
		// A command without what it needs is bad input that names it.
		{[]string{"scenario"}, "scenario needs a name: gc-pause, failover, ", "list,"},
		{[]string{"results"}, "results needs a command: ls, show", ""},
		{[]string{"k8s"}, "k8s needs a command: job", ""},
		{[]string{"swarm"}, "swarm needs a command: job", ""},
		{[]string{"image"}, "image needs a command: build", ""},
	} {
		code, out, errs := lockbench(t, tc.args...)
		if code != exitBadInput || !strings.Contains(errs, tc.says) || (tc.never != "" && strings.Contains(errs, tc.never)) ||
			strings.Count(strings.TrimSpace(errs), "\n") > 0 || out != "" {
			t.Errorf("lockbench %s: exit %d, %q; want exit 2 and one line saying %q", strings.Join(tc.args, " "), code, errs, tc.says)
		}
		if w, _ := widest(errs); w > helpWidth {
			t.Errorf("lockbench %s: a line of %d columns: %s", strings.Join(tc.args, " "), w, errs)
		}
	}
	if _, err := os.Stat("runs-never"); err == nil {
		t.Error("a refused run made its results directory")
	}
}

// TestResultsShowNamesABrokenFileAsBroken: the store's lookup reports the
// file it found and why it cannot read it, as results ls does.
func TestResultsShowNamesABrokenFileAsBroken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "20261204-100000-badbad.json"), []byte(`{"schema": "lockbench/v1", "id": "2026`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := lockbench(t, "results", "show", "--out", dir, "badbad")
	if code != exitBadInput || !strings.Contains(errs, "20261204-100000-badbad.json: not a lockbench result (invalid or truncated JSON") || strings.Contains(errs, "no such file") {
		t.Errorf("results show of a broken file: exit %d, %q", code, errs)
	}
	_, _, lsErrs := lockbench(t, "results", "ls", "--out", dir)
	if !strings.Contains(lsErrs, "20261204-100000-badbad.json: not a lockbench result") {
		t.Errorf("results ls does not name the broken file: %q", lsErrs)
	}
}
