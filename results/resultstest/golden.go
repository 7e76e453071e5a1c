// Package resultstest holds test helpers shared by the packages that render
// results: golden files, so that a renderer change shows up as a reviewable
// diff of what users see.
package resultstest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is set by `go test -update` in any package that uses Golden.
var update = flag.Bool("update", false, "rewrite golden files")

// Updating reports whether the test run was given -update, for a package's
// own generated files (the README's flag tables) beside its golden files:
// one flag, since a package cannot define -update twice.
func Updating() bool { return *update }

// Golden compares got with testdata/name, or rewrites it under -update. A
// mismatch fails with the first differing line.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatalf("update golden %s: %v", path, err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("update golden %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (rerun the test with -update to create it): %v", path, err)
	}
	if bytes.Equal(got, want) {
		return
	}
	line, g, w := firstDiff(string(got), string(want))
	t.Fatalf("%s differs from golden at line %d:\n got: %q\nwant: %q\n(rerun with -update if the change is intended)", path, line, g, w)
}

// firstDiff returns the 1-based number of the first line where got and want
// differ, and both versions of it.
func firstDiff(got, want string) (line int, g, w string) {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		g, w = "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return i + 1, g, w
		}
	}
	return 0, "", ""
}
