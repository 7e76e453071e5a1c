package plan

import (
	"go/ast"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

// faultRegistryFile is the file where a fault kind is one line among the
// others': naming it there is what adding it is.
const faultRegistryFile = "compose/faults.go"

// TestNoSharedFileNamesAFault: a fault kind's constant (a FaultKind) is
// named only in the kind's own files (whose name has its name as a part:
// fault_clock_jump.go for clock-jump, fault_terminate_pg.go for terminate)
// and in the registry file. Shared code asks the registry (compose.Fault);
// a kind, a recipe or a plan that picks a fault writes it as --fault reads
// it. A fault kind that adds a line to a shared file fails here.
func TestNoSharedFileNamesAFault(t *testing.T) {
	files := sourceFiles(t, filepath.Join("..", ".."))
	consts := faultKindConsts(files)
	for _, k := range compose.Faults() {
		name := string(k.Info().Kind)
		t.Run(name, func(t *testing.T) {
			var idents []string
			for ident, value := range consts {
				if value == name {
					idents = append(idents, ident)
				}
			}
			if len(idents) == 0 {
				t.Fatalf("no FaultKind constant has the value %q", name)
			}
			own := false
			for path, f := range files {
				named := usesAny(f, idents)
				switch {
				case !named:
				case faultOwnFile(path, name):
					own = true
				case path == faultRegistryFile:
				default:
					t.Errorf("%s names fault kind %s (%s): a shared file must ask the fault registry", path, name, strings.Join(idents, ", "))
				}
			}
			if !own {
				t.Errorf("fault kind %s has no file of its own that names it (compose/fault_%s.go)", name, strings.ReplaceAll(name, "-", "_"))
			}
		})
	}
}

// faultKindConsts are the tree's constants declared as compose.FaultKind,
// by name, with their values.
func faultKindConsts(files map[string]*ast.File) map[string]string {
	out := map[string]string{}
	eachConst(files, func(vs *ast.ValueSpec, i int, value string) {
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "FaultKind" {
			out[vs.Names[i].Name] = value
		}
	})
	return out
}

// faultOwnFile reports whether path is a file of fault kind name: its base
// name has the kind's name (dashes as underscores) as a run of its parts.
func faultOwnFile(path, name string) bool {
	base := strings.TrimSuffix(filepath.Base(path), ".go")
	return strings.Contains("_"+base+"_", "_"+strings.ReplaceAll(name, "-", "_")+"_")
}

// usesAny reports whether f uses one of idents (compose.FaultKill or, in
// compose, FaultKill).
func usesAny(f *ast.File, idents []string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(idents, id.Name) {
			found = true
		}
		return !found
	})
	return found
}
