package plan

import (
	"errors"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// TestEveryBackendDeclaresItsURLFlag walks the backend registry: each
// backend's URL flag is a run flag as the backend declares it (a URL,
// redacted; scoped to its kinds; repeated when it takes one URL per node),
// plan's URL check accepts the backend's own sample and refuses a value of
// no backend's form naming that flag.
func TestEveryBackendDeclaresItsURLFlag(t *testing.T) {
	for _, b := range compose.Backends() {
		info := b.Info()
		t.Run(info.Name, func(t *testing.T) {
			f, ok := lookupFlag(info.URLFlag)
			switch {
			case !ok:
				t.Fatalf("--%s is not a run flag", info.URLFlag)
			case !f.URL || !f.Scope.ByKind || f.Category != catTarget:
				t.Errorf("--%s: URL %v, by kind %v, category %q; want a target URL flag scoped by kind", f.Name, f.URL, f.Scope.ByKind, f.Category)
			case f.Multi != info.URLPerNode || f.Usage != info.URLUsage || f.Usage == "" || f.Doc != info.URLDoc:
				t.Errorf("--%s is not as its backend declares it (multi %v, usage %q)", f.Name, f.Multi, f.Usage)
			}
			for _, tc := range []struct {
				value  string
				wantOK bool
			}{{info.SampleURL, true}, {"ftp://", false}} {
				p := &parser{v: Values{info.URLFlag: {tc.value}}}
				p.urls()
				var ie *InputError
				switch {
				case tc.wantOK && p.err != nil:
					t.Errorf("--%s %s refused: %v", info.URLFlag, tc.value, p.err)
				case !tc.wantOK && (!errors.As(p.err, &ie) || ie.Flag != info.URLFlag):
					t.Errorf("--%s %s: %v, want a refusal naming --%s", info.URLFlag, tc.value, p.err, info.URLFlag)
				}
			}
		})
	}
}

// registryFiles are the files where a backend is one line among the
// others': naming it there is what adding it is.
var registryFiles = []string{"bench/plan/backends.go", "compose/backends.go", "lockimpl/locks.go"}

// pendingShared are shared files that still name backends, each with why;
// the test fails when one stops naming any, so the list only shrinks.
var pendingShared = map[string]string{
	"bench/renewal/cases.go":     "renewal-check's columns: a catalogue a backend may join, never must",
	"bench/scenario/recipes.go":  "scenario recipes: a catalogue a backend may join, never must",
	"bench/scenario/scenario.go": "the list of scenario recipes: a catalogue a backend may join, never must",
	"bench/advise/plan.go":       "ttlFor bounds zk's TTL by its session bounds (compose.ZkSessionBounds), not a descriptor field yet",
	"bench/advise/input.go":      "advise's default candidates add postgres when its binaries are installed (pgInstalled), not from a backend's Installed",
	"bench/cli/advise_cmd.go":    "passes compose.PgInstalled to advise's default candidates",
}

// TestNoSharedFileNamesABackend: apart from the default backend (Redis,
// which the defaults name: topology single, lock single), a backend is
// named, by a constant of its own or its names as a string, only in its
// own files (named after it, its kinds or its locks) and in the registry
// files. A backend that adds a line to a shared file fails here.
func TestNoSharedFileNamesABackend(t *testing.T) {
	root := filepath.Join("..", "..")
	files := sourceFiles(t, root)
	consts := stringConsts(files)
	namedIn := map[string]bool{}
	for _, b := range compose.Backends() {
		name := b.Info().Name
		if name == lockimpl.BackendRedis {
			continue
		}
		t.Run(name, func(t *testing.T) {
			names, stems := backendNames(b)
			idents := map[string]bool{}
			for ident, value := range consts {
				if names[value] {
					idents[ident] = true
				}
			}
			for path, f := range files {
				if slices.Contains(registryFiles, path) || ownFile(path, stems) || !namesAny(f, names, idents, stems) {
					continue
				}
				if _, ok := pendingShared[path]; ok {
					namedIn[path] = true
					continue
				}
				t.Errorf("%s names backend %s (its constants or names %v): a shared file must ask a registry", path, name, sortedKeys(names))
			}
		})
	}
	for path := range pendingShared {
		if !namedIn[path] {
			t.Errorf("%s names no backend any more: take it out of pendingShared", path)
		}
	}
}

// sourceFiles parses every non-test Go file under root, by slash path
// relative to it; test-support packages (composetest, longtest) and
// testdata count as tests.
func sourceFiles(t *testing.T, root string) map[string]*ast.File {
	t.Helper()
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(base, ".") || base == "testdata" || strings.HasSuffix(base, "test")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(base, ".go") || strings.HasSuffix(base, "_test.go") {
			return nil
		}
		f, err := goparser.ParseFile(fset, path, nil, goparser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatalf("walking the tree: %v", err)
	}
	return out
}

// stringConsts are the tree's package-level string constants, by name.
func stringConsts(files map[string]*ast.File) map[string]string {
	out := map[string]string{}
	eachConst(files, func(vs *ast.ValueSpec, i int, value string) { out[vs.Names[i].Name] = value })
	return out
}

// eachConst calls fn with each package-level constant of the tree whose
// value is a string literal: its spec, its index in the spec, its value.
func eachConst(files map[string]*ast.File, fn func(vs *ast.ValueSpec, i int, value string)) {
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							value, _ := strconv.Unquote(lit.Value)
							fn(vs, i, value)
						}
					}
				}
			}
		}
	}
}

// backendNames are the names b goes by (its own, its URL flag's, its kinds'
// and its locks'), and the stems of its own files' names (those, and each
// lock name's first word: pg of pg-lease).
func backendNames(b compose.Backend) (names map[string]bool, stems []string) {
	info := b.Info()
	names = map[string]bool{info.Name: true, info.URLFlag: true}
	for _, sh := range compose.Shapes() {
		if sh.Info().Backend == info.Name {
			names[string(sh.Info().Kind)] = true
		}
	}
	for _, lock := range lockimpl.LocksOn(info.Name) {
		names[lock] = true
		first, _, _ := strings.Cut(lock, "-")
		stems = append(stems, first)
	}
	for n := range names {
		stems = append(stems, n)
	}
	return names, stems
}

// ownFile reports whether path is a file of the backend whose file stems
// are given: a part of its name (split at "_") starts with one.
func ownFile(path string, stems []string) bool {
	base := strings.TrimSuffix(filepath.Base(path), ".go")
	for _, part := range strings.Split(base, "_") {
		for _, stem := range stems {
			if strings.HasPrefix(part, stem) {
				return true
			}
		}
	}
	return false
}

// namesAny reports whether f uses one of idents or has a string literal
// that is one of names.
func namesAny(f *ast.File, names, idents map[string]bool, stems []string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || idents[n.Name] || namedAfter(n.Name, stems)
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				s, _ := strconv.Unquote(n.Value)
				found = found || names[s]
			}
		}
		return !found
	})
	return found
}

// sortedKeys lists m's keys in order, for a message.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// camelWords splits an identifier into its words, lower-cased: etcdErrorKind
// is etcd, error, kind; ZkErrorKind is zk, error, kind.
func camelWords(ident string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(ident); i++ {
		if i == len(ident) || unicode.IsUpper(rune(ident[i])) && !unicode.IsUpper(rune(ident[i-1])) {
			out = append(out, strings.ToLower(ident[start:i]))
			start = i
		}
	}
	return out
}

// namedAfter reports whether ident is a name of several words one of which
// is a stem (etcdErrorKind, pgInstalled); a one-word name (pg for a page,
// a package zk) says nothing of what it is about.
func namedAfter(ident string, stems []string) bool {
	words := camelWords(ident)
	return len(words) > 1 && slices.ContainsFunc(words, func(w string) bool { return slices.Contains(stems, w) })
}
