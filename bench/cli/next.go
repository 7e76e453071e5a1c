package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/results"
)

// defaultOut is the results directory commands read unless told otherwise.
const defaultOut = "./runs"

// writeNext ends a command's output with the one or two commands a user
// usually runs next, ready to paste: on one line where they fit helpWidth,
// else one a line.
func writeNext(w io.Writer, commands ...string) {
	if len(commands) == 0 {
		return
	}
	if line := "next: " + strings.Join(commands, "   or   "); len(line) <= helpWidth {
		fmt.Fprintln(w, line)
		return
	}
	fmt.Fprintf(w, "next: %s\n", commands[0])
	for _, c := range commands[1:] {
		fmt.Fprintf(w, "  or: %s\n", c)
	}
}

// outArg is the --out a results command needs to find what was stored in
// dir: none for the default directory.
func outArg(dir string) string {
	if filepath.Clean(dir) == filepath.Clean(defaultOut) {
		return ""
	}
	return " --out " + shellWord(dir)
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runRefs names what a run command stored, for the commands after it: each
// group of repeats by its group id, each single run by its id.
func runRefs(rs []*results.Result) []string {
	var refs []string
	for _, g := range results.GroupRuns(rs) {
		if key, ok := g.Runs[0].Config["group"].(string); ok && key != "" {
			refs = append(refs, key)
			continue
		}
		for _, r := range g.Runs {
			refs = append(refs, r.ID)
		}
	}
	return refs
}

// nextAfterRuns are the commands after a run: its tables again, or several
// side by side, and the HTML report unless --report wrote it already.
func nextAfterRuns(dir string, rs []*results.Result, reported bool) []string {
	refs := strings.Join(runRefs(rs), " ")
	out := outArg(dir)
	var next []string
	if len(runRefs(rs)) > 1 {
		next = append(next, "lockbench results compare"+out+" "+refs)
	} else {
		next = append(next, "lockbench results show"+out+" "+refs)
	}
	if !reported {
		next = append(next, "lockbench results report"+out+" -o report.html "+refs)
	}
	return next
}

// storedKey is where newApp keeps the invocation's storedRuns in the app's
// Metadata.
const storedKey = "lockbench.stored"

// storedRuns collects what a command stored through storeResult, so that
// run (the CLI's, after the command) ends its output with the commands that
// show it, whichever command stored it: after an error or an interruption
// too, since what was stored is there to look at.
type storedRuns struct {
	mu  sync.Mutex
	dir string
	rs  []*results.Result
}

// storedOf is the invocation's collector; nil (which records nothing) for an
// app made without one.
func storedOf(c *cli.Context) *storedRuns {
	s, _ := c.App.Metadata[storedKey].(*storedRuns)
	return s
}

// storeResult stores r in dir and records it for the next-step hint.
func storeResult(c *cli.Context, dir string, r *results.Result) (string, error) {
	path, err := results.Write(dir, r)
	if err == nil {
		storedOf(c).add(dir, r)
	}
	return path, err
}

func (s *storedRuns) add(dir string, r *results.Result) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dir = dir
	s.rs = append(s.rs, r)
}

// maxRefsInHint bounds the runs a hint names one by one: more would run past
// a terminal's width, and results ls lists them.
const maxRefsInHint = 3

// next are the commands after what was stored: its tables (side by side
// for a few runs) and report, or the list of runs for many.
func (s *storedRuns) next() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch n := len(runRefs(s.rs)); {
	case n == 0:
		return nil
	case n > maxRefsInHint:
		return []string{"lockbench results ls" + outArg(s.dir)}
	}
	return nextAfterRuns(s.dir, s.rs, false)
}
