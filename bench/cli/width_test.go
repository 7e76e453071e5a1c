package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// widest is the widest line of s in columns (runes), and that line.
func widest(s string) (int, string) {
	w, at := 0, ""
	for _, l := range strings.Split(s, "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			w, at = n, l
		}
	}
	return w, at
}

// TestEveryHelpFitsTerminal renders the top-level help and every command's
// --help and holds each line within helpWidth columns.
func TestEveryHelpFitsTerminal(t *testing.T) {
	paths := append([]string{""}, sortedKeys(commandPaths(newApp(io.Discard, io.Discard).Commands, nil))...)
	for _, path := range paths {
		var out strings.Builder
		args := append(append([]string{"lockbench"}, strings.Fields(path)...), "--help")
		if code := run(context.Background(), args, &out, io.Discard); code != exitOK {
			t.Errorf("%s: exit %d", strings.Join(args, " "), code)
		}
		if out.Len() == 0 {
			t.Errorf("%s printed no help", strings.Join(args, " "))
		}
		if w, line := widest(out.String()); w > helpWidth {
			t.Errorf("%s: a line of %d columns:\n%s", strings.Join(args, " "), w, line)
		}
	}
}

// TestWrapHelp: a long description continues under its own column; a
// word longer than a line stays whole; short lines pass untouched.
func TestWrapHelp(t *testing.T) {
	in := "   --name value  " + strings.Repeat("word ", 10) + "\n   short\n" + strings.Repeat("x", 30) + "\n"
	got := wrapHelp(in, 36)
	lines := strings.Split(got, "\n")
	if lines[0] != "   --name value  word word word word" || lines[len(lines)-3] != "   short" || lines[len(lines)-2] != strings.Repeat("x", 30) {
		t.Errorf("wrapHelp:\n%s", got)
	}
	for _, l := range lines[1 : len(lines)-3] {
		if !strings.HasPrefix(l, strings.Repeat(" ", 17)+"word") || len(l) > 36 {
			t.Errorf("a continuation not under the text column or too wide: %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(in), " ") {
		t.Errorf("wrapHelp lost or changed words:\n%s", got)
	}
	long := "   --x  " + strings.Repeat("y", 40) + " z"
	if got := wrapHelp(long, 30); got != "   --x  "+strings.Repeat("y", 40)+"\n        z" {
		t.Errorf("a word wider than the line: %q", got)
	}
}
