package cli

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// helpWidth is the widest line lockbench prints: help, errors and hints fit
// a 120-column terminal.
const helpWidth = 120

// The help printer is the one hook urfave/cli gives for help's layout; it is
// set once, before any command runs, and never changed after.
func init() {
	cli.HelpPrinter = printWrappedHelp
}

// printWrappedHelp renders help with cli's templates, then wraps every line
// wider than helpWidth (see wrapHelp).
func printWrappedHelp(w io.Writer, templ string, data any) {
	var buf bytes.Buffer
	cli.HelpPrinterCustom(&buf, templ, data, nil)
	io.WriteString(w, wrapHelp(buf.String(), helpWidth))
}

// wrapHelp wraps lines wider than width at spaces. A continuation starts
// under the line's text column, where a description begins after its name
// (the first run of two spaces after the indent), so a flag's or command's
// usage reads as one block; a line without such a column continues under
// its own indent plus three.
func wrapHelp(text string, width int) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimRight(strings.TrimSuffix(line, "\n"), " ")
		if utf8.RuneCountInString(body) <= width {
			out.WriteString(line)
			continue
		}
		hang := textColumn(body)
		if hang > width/2 {
			hang = indentOf(body) + 6
		}
		out.WriteString(wrapLine(body, width, hang))
		if strings.HasSuffix(line, "\n") {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// wrapLine breaks one line at the last space that keeps it within width,
// continuing each piece hang columns in. A word wider than the room left
// stays whole on a line of its own.
func wrapLine(line string, width, hang int) string {
	pad := strings.Repeat(" ", hang)
	var out strings.Builder
	for utf8.RuneCountInString(line) > width {
		runes := []rune(line)
		cut := -1
		for i := width; i > hang; i-- {
			if runes[i] == ' ' {
				cut = i
				break
			}
		}
		for i := width + 1; cut < 0 && i < len(runes); i++ {
			if runes[i] == ' ' { // the word is wider than the line: it stays whole
				cut = i
			}
		}
		if cut < 0 {
			break
		}
		out.WriteString(strings.TrimRight(string(runes[:cut]), " ") + "\n")
		line = pad + strings.TrimLeft(string(runes[cut:]), " ")
	}
	out.WriteString(line)
	return out.String()
}

// indentOf is how many spaces line starts with.
func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// textColumn is where a help line's description starts: after the indent,
// the name, then two or more spaces. Without that, the indent plus three.
func textColumn(line string) int {
	runes := []rune(line)
	i := indentOf(line)
	for i < len(runes)-1 && !(runes[i] == ' ' && runes[i+1] == ' ') {
		i++
	}
	for i < len(runes) && runes[i] == ' ' {
		i++
	}
	if i >= len(runes) {
		return indentOf(line) + 3
	}
	return i
}
