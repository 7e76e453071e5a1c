package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/bench/verdict"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

// TestReadmeNamesEveryFigure keeps the README's list of figures whole: a
// figure added to the catalogue must be documented.
func TestReadmeNamesEveryFigure(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	// Derived figures (shares, rare-event rates) print at their own
	// precision in every table: the README states each.
	for _, f := range append(results.Catalogue(), results.DerivedFigures()...) {
		name := f.Name
		if f.Op != "" {
			// Per-operation figures are documented as OP.field, and each op by name.
			if !strings.Contains(readme, "`"+f.Op+"`") {
				t.Errorf("README does not name the operation %s", f.Op)
			}
			continue
		}
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("README does not name the figure %s", name)
		}
	}
}

// updateReadme is go test -update, the flag resultstest defines for golden
// files: one -update rewrites the README's flag tables and the goldens.
func updateReadme() bool { return resultstest.Updating() }

// TestReadmeFlagTables holds every command's flag table in the README equal
// to its --help: each block between <!-- flags:COMMAND --> and
// <!-- /flags:COMMAND --> is generated from the command's flags (run flags
// from plan's flag table, with their scope). After changing a flag, run
// go test ./bench/cli -run TestReadmeFlagTables -update.
func TestReadmeFlagTables(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	blocks := flagBlocks(newApp(io.Discard, io.Discard).Commands, "")
	for _, name := range sortedKeys(blocks) {
		open, closing := "<!-- flags:"+name+" -->\n", "<!-- /flags:"+name+" -->"
		i, j := strings.Index(readme, open), strings.Index(readme, closing)
		if i < 0 || j < i {
			t.Errorf("README has no flag table for %s (%q … %q)", name, open, closing)
			continue
		}
		got := readme[i+len(open) : j]
		if got == blocks[name] {
			continue
		}
		if updateReadme() {
			readme = readme[:i+len(open)] + blocks[name] + readme[j:]
			continue
		}
		t.Errorf("README's flag table for %s differs from its help; run go test ./bench/cli -run TestReadmeFlagTables -update\n--- README\n%s--- help\n%s", name, got, blocks[name])
	}
	if updateReadme() {
		if err := os.WriteFile("../../README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadmeRules holds the README's statement of the rulebook equal to the
// rulebook: the block between <!-- rules:verdict --> and
// <!-- /rules:verdict --> is verdict.Markdown. After changing a rule, run
// go test ./bench/cli -run TestReadmeRules -update.
func TestReadmeRules(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	open, closing := "<!-- rules:verdict -->\n", "<!-- /rules:verdict -->"
	i, j := strings.Index(readme, open), strings.Index(readme, closing)
	if i < 0 || j < i {
		t.Fatalf("README has no rulebook block (%q … %q)", open, closing)
	}
	want := verdict.Markdown()
	if got := readme[i+len(open) : j]; got == want {
		return
	} else if !updateReadme() {
		t.Fatalf("README's rulebook differs from bench/verdict; run go test ./bench/cli -run TestReadmeRules -update\n--- README\n%s--- rulebook\n%s", got, want)
	}
	readme = readme[:i+len(open)] + want + readme[j:]
	if err := os.WriteFile("../../README.md", []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHelpListsOnlyAcceptedFlags: a command's help names no run flag it
// refuses, and shows its own defaults.
func TestHelpListsOnlyAcceptedFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		absent   []string
		contains []string
	}{
		{[]string{"tune-ttl", "--help"}, []string{"--ttl value", "--renew-every"}, []string{"(default: 0.05)", "(default: exp:1ms,50ms)", "(default: long-work)"}},
		{[]string{"lock-cost", "--help"}, []string{"--fault value", "--topology value"}, nil},
		{[]string{"redlock-cost", "--help"}, []string{"--topology value", "--lock value", "--fault value"}, nil},
		{[]string{"capacity", "--help"}, []string{"(default: the --rate value) (default: 1)"}, []string{"(default: 3s)"}},
	} {
		var out strings.Builder
		run(context.Background(), append([]string{"lockbench"}, tc.args...), &out, io.Discard)
		// Help wraps at 120 columns, so a default may break across lines.
		help := strings.Join(strings.Fields(out.String()), " ")
		for _, s := range tc.absent {
			if strings.Contains(help, s) {
				t.Errorf("%v shows %q", tc.args, s)
			}
		}
		for _, s := range tc.contains {
			if !strings.Contains(help, s) {
				t.Errorf("%v does not show %q", tc.args, s)
			}
		}
	}
}

// TestRefusedRunFlagsSayWhy: a run flag a command sets itself is refused
// with its reason and exit 2, not as an unknown flag.
func TestRefusedRunFlagsSayWhy(t *testing.T) {
	for _, args := range [][]string{
		{"tune-ttl", "--ttl", "1s"},
		{"redlock-cost", "--topology", "single"},
		{"lock-cost", "--fault", "at=1s kill node=0"},
	} {
		var errOut strings.Builder
		code := run(context.Background(), append([]string{"lockbench"}, args...), io.Discard, &errOut)
		if code != exitBadInput || !strings.Contains(errOut.String(), args[1]+": "+args[0]) {
			t.Errorf("%v: exit %d, %q; want 2 and the reason", args, code, errOut.String())
		}
	}
}

// flagBlocks renders the README flag table of every command with flags, by
// its path ("run", "results ls", "scenario NAME").
func flagBlocks(cmds []*cli.Command, parent string) map[string]string {
	out := map[string]string{}
	for _, c := range cmds {
		name := strings.TrimSpace(parent + " " + c.Name)
		if parent == "scenario" && c.Name != "list" {
			name = "scenario NAME"
		}
		for k, v := range flagBlocks(c.Subcommands, name) {
			out[k] = v
		}
		if len(visibleFlags(c)) > 0 {
			out[name] = flagBlock(c)
		}
	}
	return out
}

func visibleFlags(c *cli.Command) []cli.DocGenerationFlag {
	var out []cli.DocGenerationFlag
	for _, f := range c.Flags {
		if df, ok := f.(cli.DocGenerationFlag); ok {
			if vf, ok := f.(cli.VisibleFlag); !ok || vf.IsVisible() {
				out = append(out, df)
			}
		}
	}
	return out
}

// flagBlock is one command's table: for run every flag; for a command that
// takes run flags, what differs from run's (refused, replaced, its own
// defaults and help) and its own flags.
func flagBlock(c *cli.Command) string {
	var b strings.Builder
	runDefaults := map[string]plan.Flag{}
	for _, f := range plan.RunFlags() {
		runDefaults[f.Name] = f
	}
	takes, refused := plan.CommandFlags(c.Name)
	// A command built on run flags has --concurrency among them.
	runFlagged := slices.ContainsFunc(visibleFlags(c), func(f cli.DocGenerationFlag) bool { return f.Names()[0] == "concurrency" })
	// A command that takes only some run flags (advise: the work) lists
	// each of its flags rather than run's table with exceptions.
	takesAll := !slices.ContainsFunc(takes, func(p plan.Flag) bool {
		return !slices.ContainsFunc(visibleFlags(c), func(f cli.DocGenerationFlag) bool { return f.Names()[0] == p.Name })
	})
	takesRun := runFlagged && c.Name != "run" && takesAll
	if takesRun {
		b.WriteString("Every flag of [`run`](#lockbench-run)")
		var notes []string
		for _, n := range sortedKeys(refused) {
			notes = append(notes, fmt.Sprintf("`--%s` (refused: %s %s)", n, c.Name, refused[n]))
		}
		for _, f := range plan.RunFlags() {
			if _, r := refused[f.Name]; !r && !slices.ContainsFunc(takes, func(p plan.Flag) bool { return p.Name == f.Name }) {
				notes = append(notes, fmt.Sprintf("`--%s` (its own, below)", f.Name))
			}
		}
		if len(notes) > 0 {
			b.WriteString(" but " + strings.Join(notes, ", "))
		}
		b.WriteString("; the table lists its own flags and the run flags it takes differently.\n\n")
	}
	b.WriteString("| flag | default | accepts |\n| --- | --- | --- |\n")
	for _, f := range visibleFlags(c) {
		name := f.Names()[0]
		if rf, isRun := runDefaults[name]; takesRun && isRun {
			i := slices.IndexFunc(takes, func(p plan.Flag) bool { return p.Name == name })
			if i >= 0 && takes[i].Default == rf.Default && takes[i].Usage == rf.Usage {
				continue
			}
		}
		var names []string
		for _, n := range f.Names() {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			names = append(names, "`"+dash+n+"`")
		}
		def := strings.Trim(f.GetDefaultText(), `"`)
		switch {
		case def == "false":
			def = "off"
		case def == "":
			def = "none"
		default:
			def = "`" + def + "`"
		}
		usage := f.GetUsage()
		if rf, isRun := runDefaults[name]; runFlagged && isRun && rf.Doc != "" {
			usage += ". " + rf.Doc
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(names, ", "), def, strings.ReplaceAll(usage, "|", "\\|"))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
