package job

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"unicode/utf8"

	"github.com/lockbench/lockbench/results"
)

// Markers frame a result a generator prints to its log (run --format
// marked), so `results collect` finds it among other lines.
const (
	BeginMarker = "=== lockbench result begin ==="
	EndMarker   = "=== lockbench result end ==="
)

// markedLine bounds the lines of a marked result: log drivers split longer
// lines into partial messages (Docker's json-file at 16 KiB) that not every
// reader joins again, and a result with its histograms is longer than that.
const markedLine = 4096

// WriteMarked prints a result between the markers, its JSON cut into lines
// of at most markedLine bytes (at rune boundaries; Collect joins them).
func WriteMarked(w io.Writer, r *results.Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("result %s: %w", r.ID, err)
	}
	var out bytes.Buffer
	out.WriteString(BeginMarker + "\n")
	for len(b) > 0 {
		n := chunkEnd(b, markedLine)
		out.Write(b[:n])
		out.WriteByte('\n')
		b = b[n:]
	}
	out.WriteString(EndMarker + "\n")
	_, err = w.Write(out.Bytes())
	return err
}

// chunkEnd is where the next line of b ends: at most max bytes, on a rune
// boundary, and never so that the following line starts with '[' (which
// Collect could take for a kubectl --prefix).
func chunkEnd(b []byte, max int) int {
	if len(b) <= max {
		return len(b)
	}
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	for n < len(b) && b[n] == '[' {
		n++
	}
	return n
}

// prefixed matches a line kubectl logs --prefix wrote: "[pod/NAME/container] ".
var prefixed = regexp.MustCompile(`^\[[^\]]*\] `)

// Collect reads every result printed between markers in logs (one
// generator's or many generators' concatenated, with or without kubectl's
// --prefix), ignoring every other line.
func Collect(logs io.Reader) ([]*results.Result, error) {
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	var out []*results.Result
	var body *bytes.Buffer
	line := 0
	for sc.Scan() {
		line++
		text := prefixed.ReplaceAllString(sc.Text(), "")
		switch {
		case text == BeginMarker:
			body = &bytes.Buffer{}
		case text == EndMarker && body != nil:
			var r results.Result
			if err := json.Unmarshal(body.Bytes(), &r); err != nil {
				return out, fmt.Errorf("log line %d: the result before it is not JSON: %w", line, err)
			}
			if r.Schema != results.Schema || r.ID == "" {
				return out, fmt.Errorf("log line %d: not a %s result", line, results.Schema)
			}
			out = append(out, &r)
			body = nil
		case body != nil:
			body.WriteString(text)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read logs: %w", err)
	}
	if body != nil {
		return out, fmt.Errorf("the logs end inside a result (line %d): was a generator cut off?", line)
	}
	return out, nil
}
