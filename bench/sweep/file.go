package sweep

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/bench/plan"
)

// FileHelp shows the shape of a sweep file.
const FileHelp = `base: {FLAG: VALUE, …}, axes: {FLAG: [VALUE, …], …}, count: N, assert: [EXPR, …]`

// LoadFile reads a sweep plan from a YAML file. Unknown keys and unknown
// flags are errors that name the file and line, so a committed plan cannot
// silently drift from what lockbench understands.
func LoadFile(path string) (Grid, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Grid{}, fmt.Errorf("sweep file: %w", err)
	}
	return ParseFile(path, b)
}

// ParseFile parses a sweep plan; name is used in errors.
func ParseFile(name string, b []byte) (Grid, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return Grid{}, fmt.Errorf("%s: %v; want %s", name, err, FileHelp)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return Grid{}, fmt.Errorf("%s:%d: the file must be a mapping; want %s", name, max(1, doc.Line), FileHelp)
	}
	g := Grid{Base: plan.Values{}, Count: 1}
	root := doc.Content[0]
	if err := noDuplicateKeys(name, root); err != nil {
		return Grid{}, err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err error
		switch k.Value {
		case "base":
			err = parseBase(name, v, g.Base)
		case "axes":
			g.Axes, err = parseAxes(name, v)
		case "count":
			g.Count, err = parseCount(name, v)
		case "assert":
			g.Asserts, err = scalars(name, v)
		default:
			err = fmt.Errorf("%s:%d: unknown key %q; want base, axes, count or assert", name, k.Line, k.Value)
		}
		if err != nil {
			return Grid{}, err
		}
	}
	for _, a := range g.Axes {
		if g.Base.Has(a.Flag) {
			return Grid{}, fmt.Errorf("%s: %q is both in base and in axes; give it in one of them", name, a.Flag)
		}
	}
	return g, nil
}

// noDuplicateKeys refuses a mapping that names a key twice: YAML decoders
// keep one of the two silently.
func noDuplicateKeys(name string, n *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if line, ok := seen[k.Value]; ok {
			return fmt.Errorf("%s:%d: %q is given twice (first on line %d); give it once", name, k.Line, k.Value, line)
		}
		seen[k.Value] = k.Line
	}
	return nil
}

func parseBase(name string, n *yaml.Node, into plan.Values) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: base must map flag names to values", name, n.Line)
	}
	if err := noDuplicateKeys(name, n); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !plan.IsRunFlag(k.Value) {
			return fmt.Errorf("%s:%d: unknown run flag %q in base", name, k.Line, k.Value)
		}
		vals, err := scalars(name, v)
		if err != nil {
			return err
		}
		into[k.Value] = vals
	}
	return nil
}

func parseAxes(name string, n *yaml.Node) ([]Axis, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: axes must map flag names to lists of values", name, n.Line)
	}
	if err := noDuplicateKeys(name, n); err != nil {
		return nil, err
	}
	var axes []Axis
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !plan.IsRunFlag(k.Value) {
			return nil, fmt.Errorf("%s:%d: unknown run flag %q in axes", name, k.Line, k.Value)
		}
		vals, err := scalars(name, v)
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("%s:%d: axis %q has no values", name, v.Line, k.Value)
		}
		axes = append(axes, Axis{Flag: k.Value, Values: vals})
	}
	return axes, nil
}

func parseCount(name string, n *yaml.Node) (int, error) {
	c, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || c < 1 || c > plan.MaxRepeats {
		return 0, fmt.Errorf("%s:%d: count %q: %s", name, n.Line, n.Value, plan.RepeatsHelp())
	}
	return c, nil
}

// scalars reads a scalar or a sequence of scalars.
func scalars(name string, n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s:%d: want a plain value, not a nested list or mapping", name, c.Line)
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s:%d: want a value or a list of values", name, n.Line)
}
