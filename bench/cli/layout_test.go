package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestReadmeLayout holds the README's Layout table to the tree: every folder
// it lists exists, and every Go package and every top-level folder is
// listed, so the map cannot go stale as packages come and go.
func TestReadmeLayout(t *testing.T) {
	const root = "../.."
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range layoutDrift(t, string(b), root) {
		t.Error(msg)
	}
}

// TestReadmeLayoutSeesDrift: on a planted tree, a folder listed but absent
// and a package present but unlisted are both reported, and nothing else.
func TestReadmeLayoutSeesDrift(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a/a.go", "a/b/b.go", "a/testdata/x.go", "c/c_test.go", ".git/x.go"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readme := "# x\n\n### Layout\n\n| folder | holds |\n| --- | --- |\n| `a` | a |\n| `c` | c |\n| `gone` | g |\n\n## Next\n"
	got := strings.Join(layoutDrift(t, readme, root), "\n")
	want := "README's Layout lists gone, which is not a folder of the tree\na/b is not in README's Layout table"
	if got != want {
		t.Errorf("drift:\n%s\nwant\n%s", got, want)
	}
}

// layoutDrift lists where the Layout table and the tree under root differ.
func layoutDrift(t *testing.T, readme, root string) []string {
	t.Helper()
	var out []string
	listed := layoutFolders(t, readme)
	var dirs []string
	for dir := range listed {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if fi, err := os.Stat(filepath.Join(root, dir)); err != nil || !fi.IsDir() {
			out = append(out, "README's Layout lists "+dir+", which is not a folder of the tree")
		}
	}
	tree := treeFolders(t, root)
	sort.Strings(tree)
	for _, dir := range tree {
		if !listed[dir] {
			out = append(out, dir+" is not in README's Layout table")
		}
	}
	return out
}

// layoutFolders reads the first column of the Layout section's table.
func layoutFolders(t *testing.T, readme string) map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n### Layout\n")
	if !ok {
		t.Fatal("README has no ### Layout section")
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	out := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		out[m[1]] = true
	}
	if len(out) == 0 {
		t.Fatal("README's Layout section has no table rows")
	}
	return out
}

// treeFolders are the folders the Layout must name: each holding a Go
// package (test data aside), and each top-level folder (hidden ones aside,
// but .ci, which holds CI's script).
func treeFolders(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(name, ".") && rel != ".ci" || name == "testdata" || name == "runs" || name == "bin") {
				return filepath.SkipDir
			}
			if rel != "." && !strings.Contains(rel, "/") {
				seen[rel] = true
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
				seen[dir] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for dir := range seen {
		out = append(out, dir)
	}
	return out
}
