package job

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
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
// --prefix), ignoring every other line, and the histories between their
// markers.
func Collect(logs io.Reader) ([]*results.Result, error) {
	c, err := CollectWith(logs, nil)
	return c.Results, err
}

// CollectWith is Collect that also hands each history between history
// markers to sink (nil: histories are skipped). A history cut off (by the
// end of the logs, by another marker, by a line that is not base64), whose
// bytes are not a whole gzip stream, or whose run has no result in the
// logs, is dropped, and so is that run's result (unless another copy of
// its history came whole): the error names each such run, and what came
// whole is returned with it. A result that is not one ends the reading,
// as in Collect.
func CollectWith(logs io.Reader, sink HistorySink) (Collected, error) {
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	c := &collector{l: &lines{sc: sc}, sink: sink, cut: map[string]bool{}}
	var body *bytes.Buffer
	for {
		text, ok := c.l.next()
		if !ok {
			break
		}
		if m := historyMarker.FindStringSubmatch(text); m != nil {
			if m[1] == "begin" {
				// A result cut off by a history is dropped, as one
				// cut off by another result.
				body = nil
				c.history(m[2])
			}
			continue
		}
		switch {
		case text == BeginMarker:
			body = &bytes.Buffer{}
		case text == EndMarker && body != nil:
			var r results.Result
			if err := json.Unmarshal(body.Bytes(), &r); err != nil {
				return c.stop(fmt.Errorf("log line %d: the result before it is not JSON: %w", c.l.n, err))
			}
			if r.Schema != results.Schema || r.ID == "" {
				return c.stop(fmt.Errorf("log line %d: not a %s result", c.l.n, results.Schema))
			}
			c.out.Results = append(c.out.Results, &r)
			body = nil
		case body != nil:
			body.WriteString(text)
		}
	}
	if err := sc.Err(); err != nil {
		return c.stop(fmt.Errorf("read logs: %w", err))
	}
	if body != nil {
		return c.stop(fmt.Errorf("the logs end inside a result (line %d): was a generator cut off?", c.l.n))
	}
	return c.stop(nil)
}

// stop ends the reading: what came whole, and every error met, err (the
// one that stopped it, if any) first.
func (c *collector) stop(err error) (Collected, error) {
	out := c.end()
	return out, errors.Join(append([]error{err}, c.errs...)...)
}

// lines reads a log line by line, kubectl's --prefix removed, with one
// line of push-back.
type lines struct {
	sc   *bufio.Scanner
	n    int
	back *string
}

func (l *lines) next() (string, bool) {
	if t := l.back; t != nil {
		l.back = nil
		return *t, true
	}
	if !l.sc.Scan() {
		return "", false
	}
	l.n++
	return prefixed.ReplaceAllString(l.sc.Text(), ""), true
}

// unread gives text back to the next call of next.
func (l *lines) unread(text string) { l.back = &text }

// isMarker says whether text is a result's or a history's marker.
func isMarker(text string) bool {
	return text == BeginMarker || text == EndMarker || historyMarker.MatchString(text)
}

// collector is CollectWith's state across the logs.
type collector struct {
	l    *lines
	sink HistorySink
	out  Collected
	errs []error
	// whole are the histories that came whole, waiting for the end of
	// the logs to be kept or dropped; cut the runs one came cut.
	whole []wholeHistory
	cut   map[string]bool
}

type wholeHistory struct {
	id string
	w  HistoryWriter
}

// history reads run id's history, its begin marker just read, up to its
// end marker: into the sink, checked, or skipped without a sink.
func (c *collector) history(id string) {
	h := &historyLines{l: c.l, id: id}
	if c.sink == nil || !ValidRunID(id) {
		if c.sink != nil {
			c.errs = append(c.errs, fmt.Errorf("log line %d: a history of %q: not a run id", c.l.n, id))
		}
		h.skip = true
		h.drain()
		return
	}
	w, err := c.sink(id)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("run %s: its history: %w", id, err))
		c.cut[id] = true
		h.skip = true
		h.drain()
		return
	}
	// Reading the gzip stream to its end checks it whole (its CRC and
	// length): a line lost inside the markers is caught here.
	gz, err := gzip.NewReader(io.TeeReader(h, w))
	if err == nil {
		_, err = io.Copy(io.Discard, gz)
	}
	h.skip = true
	h.drain()
	switch {
	case !errors.Is(h.err, io.EOF):
		err = h.err
	case errors.Is(err, io.EOF):
		err = errors.New("is empty")
	case err != nil:
		err = fmt.Errorf("is not a whole gzip stream (%v)", err)
	}
	if err != nil {
		w.Drop()
		c.errs = append(c.errs, fmt.Errorf("run %s: its history %w; collect its pod's log again", id, err))
		c.cut[id] = true
		return
	}
	c.whole = append(c.whole, wholeHistory{id: id, w: w})
}

// end settles the histories once the logs are read, or the reading
// stopped: one with its run's result is kept, one without dropped
// (naming the run); a run whose history came only cut loses its result.
func (c *collector) end() Collected {
	out := Collected{Histories: map[string]bool{}}
	has := map[string]bool{}
	for _, r := range c.out.Results {
		has[r.ID] = true
	}
	for _, h := range c.whole {
		if !has[h.id] {
			h.w.Drop()
			c.errs = append(c.errs, fmt.Errorf("run %s: its history is in the logs, its result is not: was its pod cut off?", h.id))
			continue
		}
		if err := h.w.Keep(); err != nil {
			c.errs = append(c.errs, fmt.Errorf("run %s: its history: %w", h.id, err))
			c.cut[h.id] = true
			continue
		}
		out.Histories[h.id] = true
	}
	c.whole = nil
	for _, r := range c.out.Results {
		if c.cut[r.ID] && !out.Histories[r.ID] {
			continue
		}
		out.Results = append(out.Results, r)
	}
	return out
}

// historyLines reads the bytes of a history from its base64 lines, up to
// its end marker (then io.EOF); a marker of something else, the end of
// the logs or a line that is not base64 stops it with why.
type historyLines struct {
	l     *lines
	id    string
	carry []byte
	buf   []byte
	// err is io.EOF once the end marker was read, else why it stopped.
	err error
	// skip reads on without decoding (a history no one takes, or what is
	// left of one after an error).
	skip bool
}

func (h *historyLines) Read(p []byte) (int, error) {
	for len(h.buf) == 0 {
		if h.err != nil {
			return 0, h.err
		}
		h.fill()
	}
	n := copy(p, h.buf)
	h.buf = h.buf[n:]
	return n, nil
}

// drain reads on to where the history stops.
func (h *historyLines) drain() {
	for h.err == nil {
		h.fill()
	}
	h.buf = nil
}

func (h *historyLines) fill() {
	text, ok := h.l.next()
	switch {
	case !ok:
		h.setErr(fmt.Errorf("is cut off by the end of the logs (line %d)", h.l.n))
	case text == HistoryEndMarker(h.id):
		if len(h.carry) > 0 && !h.skip {
			h.setErr(fmt.Errorf("ends inside a group of four base64 characters (line %d)", h.l.n))
			return
		}
		h.setErr(io.EOF)
	case isMarker(text):
		// Another pod's, or what this pod printed next: read again.
		h.l.unread(text)
		h.setErr(fmt.Errorf("stops at log line %d, where another marker begins", h.l.n))
	case h.skip:
	default:
		h.carry = append(h.carry, text...)
		k := len(h.carry) / 4 * 4
		dec := make([]byte, base64.StdEncoding.DecodedLen(k))
		n, err := base64.StdEncoding.Decode(dec, h.carry[:k])
		if err != nil {
			h.setErr(fmt.Errorf("has log line %d, which is not base64", h.l.n))
			return
		}
		h.buf, h.carry = dec[:n], append(h.carry[:0], h.carry[k:]...)
	}
}

// setErr keeps the first reason the history stopped.
func (h *historyLines) setErr(err error) {
	if h.err == nil {
		h.err = err
	}
}
