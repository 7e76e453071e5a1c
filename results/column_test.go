package results

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// moduleFiles are the module's non-test Go files, parsed, by path.
func moduleFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// calledName is the function a call names, package qualifier dropped.
func calledName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}

// TestEveryTableColumnIsAFigureOrALabel walks every renderer's columns in
// the source: a FigureColumn must name a figure of the catalogue or of
// DerivedFigures, and a LabelColumn one of LabelHeaders, both written as
// literals so that review sees them. A new ad-hoc column of numbers fails
// here until its figure is defined once, with its precision.
func TestEveryTableColumnIsAFigureOrALabel(t *testing.T) {
	labels := LabelHeaders()
	var figures, labelCols int
	used := map[string]bool{}
	for path, f := range moduleFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			name := calledName(call)
			if name != "FigureColumn" && name != "LabelColumn" {
				return true
			}
			if path == filepath.Join("results", "column.go") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: %s with a computed argument: write the figure or label out, or use ColumnOf/ParameterColumn", path, name)
				return true
			}
			arg, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			switch name {
			case "FigureColumn":
				figures++
				if _, ok := FigureNamed(arg); !ok {
					t.Errorf("%s: FigureColumn(%q): no such figure in the catalogue or DerivedFigures", path, arg)
				}
			case "LabelColumn":
				labelCols++
				used[arg] = true
				if !slices.Contains(labels, arg) {
					t.Errorf("%s: LabelColumn(%q) is not declared in LabelHeaders; a column of numbers names a figure instead", path, arg)
				}
			}
			return true
		})
	}
	t.Logf("walked %d figure and %d label columns", figures, labelCols)
	for _, l := range labels {
		if !used[l] {
			t.Errorf("LabelHeaders declares %q, which no table uses: remove it", l)
		}
	}
	// The walk must have seen the renderers, or it proves nothing.
	if figures < 30 || labelCols < 20 {
		t.Errorf("walked %d figure and %d label columns: the walk missed the renderers", figures, labelCols)
	}
}

// TestNoPrecisionChosenAdHoc refuses a %.Ng verb outside tests: a figure's
// significant digits are its catalogue entry's (Figure.Significant).
func TestNoPrecisionChosenAdHoc(t *testing.T) {
	verb := regexp.MustCompile(`%\.[0-9]+g`)
	for path, f := range moduleFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && verb.MatchString(lit.Value) {
				t.Errorf("%s: %s picks a precision of its own; print the figure through the catalogue (FigureText)", path, lit.Value)
			}
			return true
		})
	}
}

// TestDerivedFiguresAreWhole checks the derived figures as the catalogue's
// are checked: unique names that do not shadow a catalogue figure, a unit,
// and a Value that says it is not read from a result rather than a 0.
func TestDerivedFiguresAreWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range DerivedFigures() {
		if seen[f.Name] {
			t.Errorf("%s defined twice", f.Name)
		}
		seen[f.Name] = true
		if _, err := LookupFigure(f.Name); err == nil {
			t.Errorf("%s shadows a catalogue figure", f.Name)
		}
		if f.Unit == "" || f.Label == "" || f.Group != GroupDerived {
			t.Errorf("%s: unit %q label %q group %q", f.Name, f.Unit, f.Label, f.Group)
		}
		if _, err := f.Value(&Result{}); err == nil {
			t.Errorf("%s: Value read a derived figure from a result", f.Name)
		}
	}
}

// TestFigureFormatsAtItsPrecision plants values whose text each rule fixes.
func TestFigureFormatsAtItsPrecision(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    float64
		want string
	}{
		{"availability", 0.125, "12%"},
		{"throughput_kept", 1.0532, "105.3%"},
		{"availability.longest_gap_s", 7.4, "7.4s"},
		{"longest_gap_s", 0.456, "0.46s"},
		{"error_share", 0.0123, "1.2%"},
		{"expiry_rate_upper_95", 0.0005123, "0.00051"},
		{"expiry_rate_upper_95", 0, "0"},
		{"double_grants_per_failover", 99.7, "100"}, // not 1e+02
		{"double_grants_per_failover", 1.46, "1.5"},
		{"per_10k_acquisitions", 1234.4, "1234"}, // not 1.23e+03
		{"per_10k_acquisitions", 0.8321, "0.832"},
		{"renew_per_s", 38.25, "38.2"},
		{"unavailable_s", 3, "3.00s"},
		{"contention.rate", 0.00012, "0.0001"},
		{"fairness.jain", 0.98765, "0.988"},
		{"servers.commands_per_acquire", 3.016, "3.02"},
		{"throughput.acquired_per_s", 21812.6, "21813"},
		{"acquire.p99", 1450, "1.45ms"},
	} {
		if got := FigureText(tc.name, tc.v); got != tc.want {
			t.Errorf("%s of %v: %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
}

// TestShownAgreesWithText: a ratio divides shown values, so Shown must be
// the number Format prints, for every kind of precision.
func TestShownAgreesWithText(t *testing.T) {
	for _, tc := range []struct {
		name     string
		v, shown float64
	}{
		{"availability", 0.125, 0.12},
		{"throughput_kept", 1.0532, 1.053},
		{"per_10k_acquisitions", 1234.4, 1234},
		{"expiry_rate_upper_95", 0.0005123, 0.00051},
	} {
		f, ok := FigureNamed(tc.name)
		if !ok {
			t.Fatalf("%s: no such figure", tc.name)
		}
		if got := f.Shown(tc.v); math.Abs(got-tc.shown) > 1e-12 {
			t.Errorf("%s: Shown(%v) = %v, want %v", tc.name, tc.v, got, tc.shown)
		}
	}
}

// TestRatioCell is the one ratio rule, each way a cell can read.
func TestRatioCell(t *testing.T) {
	r := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		name string
		c    Cell
		want string
	}{
		{"missing", Cell{}, NotApplicable},
		{"same as printed", Cell{Present: true, Same: true, Ratio: r(1.001)}, "same"},
		{"within noise", Cell{Present: true, WithinNoise: true, Ratio: r(1.04)}, "~"},
		{"zero baseline", Cell{Present: true}, NotApplicable},
		{"below 10", Cell{Present: true, Ratio: r(0.4321)}, "0.43x"},
		{"from 10", Cell{Present: true, Ratio: r(11.54)}, "11.5x"},
		{"from 100", Cell{Present: true, Ratio: r(115.4)}, "115x"},
	} {
		if got := RatioCell(tc.c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMissingValueRule: a figure per acquisition over none is not
// measured; a figure the run lacks altogether is not applicable.
func TestMissingValueRule(t *testing.T) {
	if got := NotMeasuredText(ErrNoAcquisitions); got != NotMeasured {
		t.Errorf("no acquisitions: %q, want %q", got, NotMeasured)
	}
	if got := NotMeasuredText(errors.New("the result has no server figures")); got != NotApplicable {
		t.Errorf("no such figure: %q, want %q", got, NotApplicable)
	}
	col := FigureColumn("servers.commands_per_acquire", "")
	if got := col.Opt(nil); got != NotMeasured {
		t.Errorf("nil cell: %q, want %q", got, NotMeasured)
	}
	if col.Header() != "cmds/acq" {
		t.Errorf("default header %q, want the figure's short header", col.Header())
	}
	if _, ok := FigureColumn("no.such.figure", "x").Figure(); ok {
		t.Error("a column of an unknown figure claims a figure")
	}
}
