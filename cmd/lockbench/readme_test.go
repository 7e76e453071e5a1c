package main

import (
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestReadmeNamesEveryFigure keeps the README's list of figures whole: a
// figure added to the catalogue must be documented.
func TestReadmeNamesEveryFigure(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, f := range results.Catalogue() {
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
