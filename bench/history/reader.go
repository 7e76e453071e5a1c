package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// History is a whole history in memory: what `check` reads.
type History struct {
	Header Header
	Events []Event
	Faults []Fault
	// Trailer is nil when the file was cut short (the run crashed).
	Trailer *Trailer
}

// rawLine is any line of the file: the header, an event, a fault or the trailer.
type rawLine struct {
	Schema *string `json:"schema"`
	End    bool    `json:"end"`
	Fault  *string `json:"fault"`

	G       int    `json:"g"`
	W       int    `json:"w"`
	Key     *int   `json:"key"`
	Op      string `json:"op"`
	Out     string `json:"out"`
	Win     bool   `json:"win"`
	Call    int64  `json:"call"`
	Ret     int64  `json:"ret"`
	Token   string `json:"token"`
	Fence   int64  `json:"fence"`
	Valid   int64  `json:"valid"`
	Granted int64  `json:"granted"`
	Seq     uint64 `json:"seq"`
	Err     string `json:"err"`
}

// ReadFile reads a history file (gzip'd or plain JSON lines).
func ReadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Read reads a history from r, gzip'd or not.
func Read(r io.Reader) (*History, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("not a history: %w", err)
		}
		defer gz.Close()
		br = bufio.NewReaderSize(gz, 1<<20)
	}
	h := &History{}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := h.add(n, line); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if h.Header.Schema == "" {
		return nil, errors.New("not a history: no header line")
	}
	return h, nil
}

func (h *History) add(n int, line []byte) error {
	var l rawLine
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("line %d: %w", n, err)
	}
	switch {
	case l.Schema != nil:
		if n != 1 {
			return fmt.Errorf("line %d: a header after the first line", n)
		}
		if !strings.HasPrefix(*l.Schema, "lockbench-history/") {
			return fmt.Errorf("line 1: schema %q: want %s", *l.Schema, Schema)
		}
		if *l.Schema != Schema {
			return fmt.Errorf("line 1: schema %q: this lockbench reads %s", *l.Schema, Schema)
		}
		return json.Unmarshal(line, &h.Header)
	case n == 1:
		return errors.New("not a history: the first line has no schema")
	case l.End:
		var t Trailer
		if err := json.Unmarshal(line, &t); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		h.Trailer = &t
		return nil
	case l.Fault != nil:
		var f Fault
		if err := json.Unmarshal(line, &f); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		h.Faults = append(h.Faults, f)
		return nil
	}
	e, err := l.event()
	if err != nil {
		return fmt.Errorf("line %d: %w", n, err)
	}
	h.Events = append(h.Events, e)
	return nil
}

func (l *rawLine) event() (Event, error) {
	op, err := parseOp(l.Op)
	if err != nil {
		return Event{}, err
	}
	out, err := parseOutcome(l.Out)
	if err != nil {
		return Event{}, err
	}
	if l.Key == nil {
		return Event{}, errors.New("an event without a key")
	}
	return Event{Generator: l.G, Worker: l.W, Key: *l.Key, Op: op, Out: out, Window: l.Win, Call: l.Call, Return: l.Ret,
		Token: l.Token, Fence: l.Fence, Valid: l.Valid, Granted: l.Granted, Seq: l.Seq, Err: l.Err}, nil
}
