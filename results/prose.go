package results

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// wrapProse breaks line at spaces so no piece is wider than width, where a
// word allows (a word longer than the width, an id or a URL, is kept whole
// rather than cut), continuation lines indented by two spaces; runs of spaces that separate fields (the headline's two)
// are where it prefers to break, and vanish at a break.
func wrapProse(line string, width int) string {
	if utf8.RuneCountInString(line) <= width {
		return line
	}
	var out strings.Builder
	cur, indent := "", ""
	for _, word := range splitKeepingGaps(line) {
		candidate := cur + word
		if cur != "" && utf8.RuneCountInString(strings.TrimRight(candidate, " ")) > width {
			out.WriteString(strings.TrimRight(cur, " "))
			out.WriteString("\n")
			indent = "  "
			cur = indent + strings.TrimLeft(word, " ")
			continue
		}
		cur = candidate
	}
	out.WriteString(strings.TrimRight(cur, " "))
	return out.String()
}

// splitKeepingGaps splits s before each space-separated word, each piece
// keeping the spaces that precede its word.
func splitKeepingGaps(s string) []string {
	var pieces []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] != ' ' && s[i-1] == ' ' {
			pieces = append(pieces, s[start:i])
			start = i
		}
	}
	return append(pieces, s[start:])
}

// ProseWriter wraps every line written through it that is not a table row
// (a row starts with + or |) with wrapProse, so a renderer's notes,
// headlines and verdicts fit MaxTableWidth as its tables do. Lines are
// held until their newline; Flush writes a last unterminated one.
type ProseWriter struct {
	w       io.Writer
	pending []byte
}

// NewProseWriter wraps w.
func NewProseWriter(w io.Writer) *ProseWriter { return &ProseWriter{w: w} }

// Write takes p, writing each complete line wrapped.
func (p *ProseWriter) Write(b []byte) (int, error) {
	p.pending = append(p.pending, b...)
	for {
		i := bytes.IndexByte(p.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.pending[:i])
		p.pending = p.pending[i+1:]
		if err := p.writeLine(line + "\n"); err != nil {
			return len(b), err
		}
	}
}

// Flush writes what is held of a line without its newline.
func (p *ProseWriter) Flush() error {
	if len(p.pending) == 0 {
		return nil
	}
	line := string(p.pending)
	p.pending = nil
	return p.writeLine(line)
}

func (p *ProseWriter) writeLine(line string) error {
	if !strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "|") {
		nl := strings.HasSuffix(line, "\n")
		line = wrapProse(strings.TrimSuffix(line, "\n"), MaxTableWidth)
		if nl {
			line += "\n"
		}
	}
	_, err := io.WriteString(p.w, line)
	return err
}

// Wrapping renders with render into a ProseWriter over w and flushes it:
// a renderer's whole output, its prose wrapped.
func Wrapping(w io.Writer, render func(io.Writer) error) error {
	p := NewProseWriter(w)
	err := render(p)
	if ferr := p.Flush(); err == nil {
		err = ferr
	}
	return err
}
