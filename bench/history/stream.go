package history

import (
	"errors"
	"fmt"
)

// Added is when e's worker added it to the history, as far as its times
// tell: a release at its call (its return is a step of its own, later),
// anything else at its return. Each worker adds its events in this order,
// and the writer keeps a worker's events in the order they were added, so
// a reader can tell from it how far every worker has got.
func (e *Event) Added() int64 {
	if e.Op == OpRelease {
		return e.Call
	}
	return e.Return
}

// Ord is an event's place in the order ReadFiles gives a run's events:
// a file's own order, or for several generators' files, by call time, then
// file, then place in the file. Readers that reorder events break ties by
// it, so they agree with a reader of the whole merged history.
type Ord struct {
	Call, Pos int64
}

// Compare orders two places.
func (o Ord) Compare(p Ord) int {
	switch {
	case o.Call != p.Call:
		if o.Call < p.Call {
			return -1
		}
		return 1
	case o.Pos < p.Pos:
		return -1
	case o.Pos > p.Pos:
		return 1
	}
	return 0
}

// Stream reads the history files of one run's generators together, one
// event at a time, with their times moved to one origin as ReadFiles does:
// each next event comes from the file whose reader is furthest behind, so
// that no file runs ahead of the others by more than its buffers hold.
type Stream struct {
	files  []*Scanner
	shifts []int64
	// fronts is how far each file's reader has got (Added of its last event).
	fronts []int64
	done   []bool
	header Header
	n      []int64
}

// OpenStream opens the history files at paths (those of one run).
func OpenStream(paths []string) (*Stream, error) {
	if len(paths) == 0 {
		return nil, errors.New("no history to read")
	}
	s := &Stream{}
	headers := make([]Header, 0, len(paths))
	for _, p := range paths {
		f, err := OpenScanner(p)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.files = append(s.files, f)
		headers = append(headers, f.Header())
	}
	var err error
	if s.header, s.shifts, err = MergeHeaders(headers); err != nil {
		_ = s.Close()
		return nil, err
	}
	s.fronts = make([]int64, len(paths))
	s.done = make([]bool, len(paths))
	s.n = make([]int64, len(paths))
	return s, nil
}

// Header is the merged header.
func (s *Stream) Header() Header { return s.header }

// Workers is how many workers each generator's history was written by,
// nil when a history does not say (one written before it was recorded).
func (s *Stream) Workers() map[int]int {
	out := map[int]int{}
	for _, f := range s.files {
		if f.Header().Workers <= 0 {
			return nil
		}
		out[f.Header().Generator] = f.Header().Workers
	}
	return out
}

// Close closes every file.
func (s *Stream) Close() error {
	var err error
	for _, f := range s.files {
		err = errors.Join(err, f.Close())
	}
	return err
}

// Next reads the next event into e, with its place in ReadFiles' order;
// false when every file is done.
func (s *Stream) Next(e *Event) (Ord, bool, error) {
	for {
		i := -1
		for j := range s.files {
			if !s.done[j] && (i < 0 || s.fronts[j] < s.fronts[i]) {
				i = j
			}
		}
		if i < 0 {
			return Ord{}, false, nil
		}
		ok, err := s.files[i].Next(e)
		if err != nil {
			return Ord{}, false, fmt.Errorf("history %d of %d: %w", i+1, len(s.files), err)
		}
		if !ok {
			s.done[i] = true
			continue
		}
		e.shift(s.shifts[i])
		s.fronts[i] = e.Added()
		ord := Ord{Pos: s.n[i]}
		if len(s.files) > 1 {
			ord = Ord{Call: e.Call, Pos: int64(i)<<40 | s.n[i]}
		}
		s.n[i]++
		return ord, true, nil
	}
}

// Faults are every file's faults, moved to the one origin (all of them
// once Next is done).
func (s *Stream) Faults() []Fault {
	var out []Fault
	for i, f := range s.files {
		out = append(out, shiftFaults(f.Faults(), s.shifts[i])...)
	}
	return out
}

// Trailer is the merged trailer, nil when any file was cut short.
func (s *Stream) Trailer() *Trailer {
	if len(s.files) == 1 {
		return s.files[0].Trailer()
	}
	out := &Trailer{}
	for i, f := range s.files {
		out = mergeTrailer(out, f.Trailer(), s.shifts[i], i == 0)
	}
	return out
}
