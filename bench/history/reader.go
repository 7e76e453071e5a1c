package history

import (
	"errors"
	"fmt"
	"io"
	"os"
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

// Read reads a whole history from r, gzip'd or not.
func Read(r io.Reader) (*History, error) {
	s, err := NewScanner(r)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	h := &History{Header: s.Header()}
	for {
		var e Event
		ok, err := s.Next(&e)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		h.Events = append(h.Events, e)
	}
	h.Faults, h.Trailer = s.Faults(), s.Trailer()
	return h, nil
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
