package history

import (
	"errors"
	"fmt"
	"slices"
)

// Merge joins the histories of one run's generators: every time moves to
// the earliest origin (by the origins' wall-clock times), the events keep
// their generator, and the merged header says how many generators it holds.
// Histories of different runs, schemas or locks, or two of one generator,
// are refused.
func Merge(hs []*History) (*History, error) {
	if len(hs) == 0 {
		return nil, errors.New("no history to merge")
	}
	if len(hs) == 1 {
		return hs[0], nil
	}
	headers := make([]Header, len(hs))
	for i, h := range hs {
		headers[i] = h.Header
	}
	header, shifts, err := MergeHeaders(headers)
	if err != nil {
		return nil, err
	}
	out := &History{Header: header, Trailer: &Trailer{}}
	for i, h := range hs {
		for _, e := range h.Events {
			e.shift(shifts[i])
			out.Events = append(out.Events, e)
		}
		out.Faults = append(out.Faults, shiftFaults(h.Faults, shifts[i])...)
		out.Trailer = mergeTrailer(out.Trailer, h.Trailer, shifts[i], i == 0)
	}
	slices.SortStableFunc(out.Events, func(a, b Event) int {
		switch {
		case a.Call < b.Call:
			return -1
		case a.Call > b.Call:
			return 1
		}
		return 0
	})
	return out, nil
}

// MergeHeaders checks that headers are those of one run's generators and
// returns the merged header and how far each history's times move: to the
// earliest origin. Histories of different runs, locks or TTLs, or two of
// one generator, are refused.
func MergeHeaders(hs []Header) (Header, []int64, error) {
	first := hs[0]
	origin := first.Origin
	seen := map[int]bool{}
	for _, h := range hs {
		switch {
		case h.RunID != first.RunID:
			return Header{}, nil, fmt.Errorf("histories of different runs (%s, %s): merge the histories of one run id", first.RunID, h.RunID)
		case h.Lock != first.Lock || h.TTLNS != first.TTLNS:
			return Header{}, nil, fmt.Errorf("run %s: histories with different locks or TTLs", first.RunID)
		case seen[h.Generator]:
			return Header{}, nil, fmt.Errorf("run %s: two histories of generator %d", first.RunID, h.Generator)
		}
		seen[h.Generator] = true
		if h.Origin.Before(origin) {
			origin = h.Origin
		}
	}
	out := first
	out.Origin = origin
	shifts := make([]int64, len(hs))
	if len(hs) > 1 {
		// The merged events are in call order, not each worker's: a
		// merged history does not say how many workers wrote it.
		out.Generators, out.Workers = len(hs), 0
		for i, h := range hs {
			shifts[i] = int64(h.Origin.Sub(origin))
		}
	}
	return out, shifts, nil
}

// shift moves e's times by d.
func (e *Event) shift(d int64) {
	if d == 0 {
		return
	}
	e.Call += d
	e.Return += d
	if e.Valid != 0 {
		e.Valid += d
	}
	if e.Op == OpEnter {
		e.Granted += d
	}
}

// shiftFaults returns fs with their times moved by d.
func shiftFaults(fs []Fault, d int64) []Fault {
	out := make([]Fault, 0, len(fs))
	for _, f := range fs {
		f.StartNS += d
		if f.EndNS != 0 {
			f.EndNS += d
		}
		out = append(out, f)
	}
	return out
}

// mergeTrailer adds one generator's trailer t (its times moved by d) to
// the merged one: nil once any generator's history was cut short.
func mergeTrailer(out, t *Trailer, d int64, first bool) *Trailer {
	if t == nil || out == nil {
		return nil
	}
	out.Events += t.Events
	out.StalledNS += t.StalledNS
	out.Partial = out.Partial || t.Partial
	out.WindowEndNS = max(out.WindowEndNS, t.WindowEndNS+d)
	if ws := t.WindowStartNS + d; first || ws < out.WindowStartNS {
		out.WindowStartNS = ws
	}
	return out
}

// WriteFile writes h as a history file (JSON lines, gzip'd if path ends in
// .gz).
func WriteFile(path string, h *History) error {
	hd := h.Header
	// The header's workers are kept as given: the events are written in
	// the order given, which is each worker's own only if h's is.
	w, err := create(path, hd, 1)
	if err != nil {
		return err
	}
	b := w.Buffer(0)
	for _, e := range h.Events {
		b.put(e)
	}
	t := Trailer{Partial: true}
	if h.Trailer != nil {
		t = *h.Trailer
	}
	return w.Close(h.Faults, t)
}

// ReadFiles reads and merges the histories at paths.
func ReadFiles(paths []string) (*History, error) {
	var hs []*History
	for _, p := range paths {
		h, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return Merge(hs)
}
