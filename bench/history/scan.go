package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Scanner reads a history one event at a time, in the file's order, so
// that a reader (lockbench check) holds only what it still needs rather
// than the whole file: an hour's history is tens of millions of events.
// The header is read when the scanner is made; faults and the trailer are
// kept as they pass.
type Scanner struct {
	br     *bufio.Reader
	closer io.Closer
	// ahead reads and decodes batches of events beside the caller, once
	// Next is first called: decompressing and decoding is half of what
	// reading a history costs, and a reader has other work to overlap.
	ahead   chan batch
	free    chan []Event
	stop    chan struct{}
	cur     batch
	pos     int
	started bool
	// toks is each worker's last token: a lease's token comes on each of
	// its events, one after another in its worker's buffer, and the string
	// is made once.
	toks *tokenCache
	// long gathers a line longer than br's buffer.
	long    []byte
	line    int
	header  Header
	faults  []Fault
	trailer *Trailer
}

// maxLine bounds one line, as the whole-file reader did.
const maxLine = 16 << 20

// OpenScanner opens the history file at path (gzip'd or plain JSON lines)
// and reads its header. Close it when done.
func OpenScanner(path string) (*Scanner, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := NewScanner(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.closer = closers{s.closer, f}
	return s, nil
}

// closers closes each in turn.
type closers []io.Closer

func (cs closers) Close() error {
	var err error
	for _, c := range cs {
		if c != nil {
			err = errors.Join(err, c.Close())
		}
	}
	return err
}

// NewScanner reads a history's header from r, gzip'd or not.
func NewScanner(r io.Reader) (*Scanner, error) {
	s := &Scanner{br: bufio.NewReaderSize(r, 1<<20), toks: &tokenCache{}}
	if magic, _ := s.br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(s.br)
		if err != nil {
			return nil, fmt.Errorf("not a history: %w", err)
		}
		inf := newInflater(gz)
		s.closer = closers{inf, gz}
		s.br = bufio.NewReaderSize(inf, 1<<20)
	}
	if err := s.readHeader(); err != nil {
		if s.closer != nil {
			_ = s.closer.Close()
		}
		return nil, err
	}
	return s, nil
}

// readHeader reads and checks the first line.
func (s *Scanner) readHeader() error {
	line, err := s.next()
	switch {
	case err != nil && err != io.EOF:
		return err
	case line == nil:
		return errors.New("not a history: no header line")
	}
	var l rawLine
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("line %d: %w", s.line, err)
	}
	if l.Schema == nil {
		return errors.New("not a history: the first line has no schema")
	}
	if !strings.HasPrefix(*l.Schema, "lockbench-history/") {
		return fmt.Errorf("line 1: schema %q: want %s", *l.Schema, Schema)
	}
	if *l.Schema != Schema {
		return fmt.Errorf("line 1: schema %q: this lockbench reads %s", *l.Schema, Schema)
	}
	if err := json.Unmarshal(line, &s.header); err != nil {
		return fmt.Errorf("line 1: %w", err)
	}
	return nil
}

// inflater decompresses a gzip'd history on a goroutine of its own, a
// chunk ahead of the parser: gunzip is about as much work as parsing the
// lines and as stepping them, so on two CPUs the three run side by side.
// It is an io.Reader over the decompressed bytes; what the decompressor
// returned last (io.EOF, or io.ErrUnexpectedEOF for a file cut short) is
// returned after the bytes before it, as reading gzip directly did.
type inflater struct {
	full chan inflated
	free chan []byte
	stop chan struct{}
	// cur is what is left of the chunk being read, last that chunk.
	cur, last []byte
	err       error
}

// inflated is one chunk of decompressed bytes, and the error that ended
// the decompression after them, if any.
type inflated struct {
	b   []byte
	err error
}

// inflateChunk is one chunk's size, inflateChunks how many there are.
const inflateChunk, inflateChunks = 256 << 10, 4

func newInflater(r io.Reader) *inflater {
	f := &inflater{full: make(chan inflated, inflateChunks), free: make(chan []byte, inflateChunks), stop: make(chan struct{})}
	for range inflateChunks {
		f.free <- make([]byte, inflateChunk)
	}
	go f.run(r)
	return f
}

// run fills free chunks from r until an error, the end or Close.
func (f *inflater) run(r io.Reader) {
	defer close(f.full)
	for {
		var b []byte
		select {
		case b = <-f.free:
		case <-f.stop:
			return
		}
		n, err := 0, error(nil)
		for n < len(b) && err == nil {
			var m int
			m, err = r.Read(b[n:])
			n += m
		}
		select {
		case f.full <- inflated{b[:n], err}:
		case <-f.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (f *inflater) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		if f.last != nil {
			f.free <- f.last[:cap(f.last)]
			f.last = nil
		}
		if f.err != nil {
			return 0, f.err
		}
		c, ok := <-f.full
		if !ok {
			return 0, io.EOF
		}
		f.cur, f.last, f.err = c.b, c.b, c.err
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// Close stops the decompression; the reader must not be read after it.
func (f *inflater) Close() error {
	close(f.stop)
	for range f.full {
	}
	return nil
}

// Header is the history's first line.
func (s *Scanner) Header() Header { return s.header }

// Faults are the fault lines read so far (all of them once Next is done).
func (s *Scanner) Faults() []Fault { return s.faults }

// Trailer is the last line, nil until read or when the file was cut short.
func (s *Scanner) Trailer() *Trailer { return s.trailer }

// Line is the number of the line read last.
func (s *Scanner) Line() int { return s.line }

// Close closes what OpenScanner opened, and stops reading ahead.
func (s *Scanner) Close() error {
	if s.started {
		close(s.stop)
		for range s.ahead {
		}
		s.started = false
	}
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

// batch is events read ahead, or the error or end that stopped reading.
type batch struct {
	evs []Event
	err error
}

// batchSize is how many events a batch read ahead holds; batches are the
// events in flight between the reader and the caller.
const batchSize = 1024

// Next reads the next event into e; false at the end of the file. A file
// cut short mid-line (a run that crashed) ends where it was cut, as the
// whole-file reader did. Faults and the trailer are known once it returned
// false.
func (s *Scanner) Next(e *Event) (bool, error) {
	if !s.started {
		s.started = true
		s.ahead, s.free, s.stop = make(chan batch, 4), make(chan []Event, 6), make(chan struct{})
		go s.readAhead()
	}
	for s.pos >= len(s.cur.evs) {
		if s.cur.evs != nil {
			s.free <- s.cur.evs[:0]
			s.cur.evs = nil
		}
		if s.cur.err != nil {
			return false, s.cur.err
		}
		b, ok := <-s.ahead
		if !ok {
			s.cur = batch{}
			return false, nil
		}
		s.cur, s.pos = b, 0
		if len(b.evs) == 0 && b.err != nil {
			return false, b.err
		}
	}
	*e = s.cur.evs[s.pos]
	s.pos++
	return true, nil
}

// readAhead reads batches until the end, an error or Close.
func (s *Scanner) readAhead() {
	defer close(s.ahead)
	for {
		var evs []Event
		select {
		case evs = <-s.free:
		default:
			evs = make([]Event, 0, batchSize)
		}
		var err error
		for len(evs) < batchSize {
			var e Event
			var ok bool
			if ok, err = s.read(&e); !ok || err != nil {
				break
			}
			evs = append(evs, e)
		}
		if len(evs) == 0 && err == nil {
			return
		}
		select {
		case s.ahead <- batch{evs, err}:
		case <-s.stop:
			return
		}
		if err != nil || len(evs) < batchSize {
			return
		}
	}
}

// read reads the next event into e; false at the end of the file.
func (s *Scanner) read(e *Event) (bool, error) {
	for {
		line, err := s.next()
		if err != nil && err != io.EOF {
			return false, err
		}
		if line == nil {
			return false, nil
		}
		if parseEvent(line, e, s.toks) {
			return true, nil
		}
		isEvent, err := s.slow(line, e)
		if err != nil {
			return false, fmt.Errorf("line %d: %w", s.line, err)
		}
		if isEvent {
			return true, nil
		}
	}
}

// slow decodes a line the fast parser did not take: a fault, the trailer,
// or an event written by other means than AppendEvent.
func (s *Scanner) slow(line []byte, e *Event) (bool, error) {
	var l rawLine
	if err := json.Unmarshal(line, &l); err != nil {
		return false, err
	}
	switch {
	case l.Schema != nil:
		return false, errors.New("a header after the first line")
	case l.End:
		var t Trailer
		if err := json.Unmarshal(line, &t); err != nil {
			return false, err
		}
		s.trailer = &t
		return false, nil
	case l.Fault != nil:
		var f Fault
		if err := json.Unmarshal(line, &f); err != nil {
			return false, err
		}
		s.faults = append(s.faults, f)
		return false, nil
	}
	ev, err := l.event()
	if err != nil {
		return false, err
	}
	*e = ev
	return true, nil
}

// next returns the next line that is not blank, trimmed, or nil at the
// end. The line is valid until the next call.
func (s *Scanner) next() ([]byte, error) {
	for {
		line, err := s.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.long = append(s.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if len(s.long) > maxLine {
					return nil, fmt.Errorf("line %d: %w", s.line+1, bufio.ErrTooLong)
				}
				line, err = s.br.ReadSlice('\n')
				s.long = append(s.long, line...)
			}
			line = s.long
		}
		if err != nil && len(line) == 0 {
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("line %d: %w", s.line+1, err)
		}
		s.line++
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, io.EOF
		}
	}
}

// parseEvent decodes a line exactly as AppendEvent writes it, without
// reflection: the checker reads millions of lines, and encoding/json took
// most of its time. Anything else (another field order, an escaped
// string, a fault or the trailer) returns false, for the slow path.
func parseEvent(line []byte, e *Event, toks *tokenCache) bool {
	p := eventParser{b: line}
	var ev Event
	var g, w, key int64
	var op, out []byte
	ok := p.lit(`{"g":`) && p.int(&g) && p.lit(`,"w":`) && p.int(&w) && p.lit(`,"key":`) && p.int(&key) &&
		p.lit(`,"op":`) && p.str(&op) && p.lit(`,"out":`) && p.str(&out) && p.lit(`,"win":`) && p.bool(&ev.Window) &&
		p.lit(`,"call":`) && p.int(&ev.Call) && p.lit(`,"ret":`) && p.int(&ev.Return)
	if !ok {
		return false
	}
	var tok, errKind []byte
	var seq int64
	ok = p.opt(`,"token":`, func() bool { return p.str(&tok) }) &&
		p.opt(`,"fence":`, func() bool { return p.int(&ev.Fence) }) &&
		p.opt(`,"valid":`, func() bool { return p.int(&ev.Valid) }) &&
		p.opt(`,"granted":`, func() bool { return p.int(&ev.Granted) }) &&
		p.opt(`,"seq":`, func() bool { return p.int(&seq) && seq >= 0 }) &&
		p.opt(`,"err":`, func() bool { return p.str(&errKind) }) &&
		p.lit("}") && p.i == len(p.b)
	if !ok || g != int64(int(g)) || w != int64(int(w)) || key != int64(int(key)) {
		return false
	}
	var err error
	if ev.Op, err = parseOpBytes(op); err != nil {
		return false
	}
	if ev.Out, err = parseOutcomeBytes(out); err != nil {
		return false
	}
	ev.Generator, ev.Worker, ev.Key, ev.Seq = int(g), int(w), int(key), uint64(seq)
	if len(tok) > 0 {
		ev.Token = toks.token(ev.Worker, tok)
	}
	if len(errKind) > 0 {
		ev.Err = string(errKind)
	}
	*e = ev
	return true
}

// tokenCache keeps each worker's last token.
type tokenCache struct{ last []string }

// token is b as a string, the worker's last one if it is the same.
func (c *tokenCache) token(w int, b []byte) string {
	if c == nil || w < 0 || w >= 1<<20 {
		return string(b)
	}
	if w >= len(c.last) {
		c.last = append(c.last, make([]string, w+1-len(c.last))...)
	}
	if c.last[w] != string(b) {
		c.last[w] = string(b)
	}
	return c.last[w]
}

// eventParser walks one line.
type eventParser struct {
	b []byte
	i int
}

// lit reads s. (A string comparison with a constant, once inlined, is a
// few word compares, where bytes.HasPrefix was a call.)
func (p *eventParser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// opt reads a field if the line has it here.
func (p *eventParser) opt(name string, value func() bool) bool {
	if len(p.b)-p.i < len(name) || string(p.b[p.i:p.i+len(name)]) != name {
		return true
	}
	p.i += len(name)
	return value()
}

// int reads a JSON integer that fits an int64, digit by digit: strconv's
// general parser was a tenth of the check. A leading zero (other than 0
// itself), "-0…" and anything past int64 are refused, for the slow path,
// as encoding/json would not read them as the writer's.
func (p *eventParser) int(v *int64) bool {
	j, neg := p.i, false
	if j < len(p.b) && p.b[j] == '-' {
		j, neg = j+1, true
	}
	start := j
	var n uint64
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		if j-start >= 18 {
			// 19 digits and more may overflow: strconv decides.
			return p.bigInt(v)
		}
		n = n*10 + uint64(p.b[j]-'0')
		j++
	}
	if j == start || (j-start > 1 && p.b[start] == '0') || (neg && n == 0) {
		return false
	}
	*v, p.i = int64(n), j
	if neg {
		*v = -int64(n)
	}
	return true
}

// bigInt reads an integer of 19 digits or more with strconv.
func (p *eventParser) bigInt(v *int64) bool {
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(string(p.b[p.i:j]), 10, 64)
	if err != nil || (j-p.i > 1 && p.b[p.i] == '0') || (p.b[p.i] == '-' && p.b[p.i+1] == '0') {
		return false
	}
	*v, p.i = n, j
	return true
}

func (p *eventParser) bool(v *bool) bool {
	switch {
	case p.lit("true"):
		*v = true
	case p.lit("false"):
		*v = false
	default:
		return false
	}
	return true
}

// str reads a string without escapes (those go to the slow path).
func (p *eventParser) str(v *[]byte) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	// One pass finds the closing quote and refuses what needs unescaping.
	for j := p.i + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			*v, p.i = p.b[p.i+1:j], j+1
			return true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return false
		}
	}
	return false
}

func parseOpBytes(b []byte) (Op, error) {
	// The commonest first: each event's op is looked up.
	switch string(b) {
	case "enter":
		return OpEnter, nil
	case "write":
		return OpWrite, nil
	case "exit":
		return OpExit, nil
	case "acquire":
		return OpAcquire, nil
	case "release":
		return OpRelease, nil
	}
	for i, n := range opNames {
		if n != "" && string(b) == n {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("unknown op %q", b)
}

func parseOutcomeBytes(b []byte) (Outcome, error) {
	if string(b) == "ok" {
		return OutOK, nil
	}
	for i, n := range outcomeNames {
		if n != "" && string(b) == n {
			return Outcome(i), nil
		}
	}
	return 0, fmt.Errorf("unknown outcome %q", b)
}
