package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/lockbench/lockbench/results"
)

// plainTable is for listings meant to be read and grepped, not boxed: a
// name, then text wrapped to fit the terminal's width, its continuation
// lines indented under the text's first.
type plainTable struct {
	w    io.Writer
	rows [][]string
}

func newPlainTable(w io.Writer) *plainTable { return &plainTable{w: w} }

// row adds an entry: its name, then paragraphs of text, each wrapped.
func (t *plainTable) row(name string, text ...string) {
	t.rows = append(t.rows, append([]string{name}, text...))
}

// flush writes the entries, every line at most results.MaxTableWidth wide.
func (t *plainTable) flush() error {
	nameWidth := 0
	for _, r := range t.rows {
		nameWidth = max(nameWidth, utf8.RuneCountInString(r[0]))
	}
	indent := strings.Repeat(" ", nameWidth+2)
	width := results.MaxTableWidth - len(indent)
	for _, r := range t.rows {
		first := true
		for _, para := range r[1:] {
			if strings.TrimSpace(para) == "" {
				continue
			}
			for _, line := range wrap(para, width) {
				lead := indent
				if first {
					lead = r[0] + strings.Repeat(" ", nameWidth+2-utf8.RuneCountInString(r[0]))
					first = false
				}
				if _, err := fmt.Fprintln(t.w, strings.TrimRight(lead+line, " ")); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// wrap breaks s into lines of at most width runes at spaces, keeping a
// flag with its value ("--ttl 1s"); a word longer than width has a line of
// its own.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range flagWords(strings.Fields(s)) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// flagWords joins each --flag with the value after it, so that no line
// ends between them.
func flagWords(fields []string) []string {
	var out []string
	for i := 0; i < len(fields); i++ {
		w := fields[i]
		if strings.HasPrefix(w, "--") && i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-") {
			w += " " + fields[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}
