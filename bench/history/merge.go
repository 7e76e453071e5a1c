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
	first := hs[0].Header
	origin := first.Origin
	seen := map[int]bool{}
	for _, h := range hs {
		switch {
		case h.Header.RunID != first.RunID:
			return nil, fmt.Errorf("histories of different runs (%s, %s): merge the histories of one run id", first.RunID, h.Header.RunID)
		case h.Header.Lock != first.Lock || h.Header.TTLNS != first.TTLNS:
			return nil, fmt.Errorf("run %s: histories with different locks or TTLs", first.RunID)
		case seen[h.Header.Generator]:
			return nil, fmt.Errorf("run %s: two histories of generator %d", first.RunID, h.Header.Generator)
		}
		seen[h.Header.Generator] = true
		if h.Header.Origin.Before(origin) {
			origin = h.Header.Origin
		}
	}
	out := &History{Header: first, Trailer: &Trailer{}}
	out.Header.Origin = origin
	out.Header.Generators = len(hs)
	for i, h := range hs {
		shift := int64(h.Header.Origin.Sub(origin))
		for _, e := range h.Events {
			e.Call += shift
			e.Return += shift
			if e.Valid != 0 {
				e.Valid += shift
			}
			if e.Op == OpEnter {
				e.Granted += shift
			}
			out.Events = append(out.Events, e)
		}
		for _, f := range h.Faults {
			f.StartNS += shift
			if f.EndNS != 0 {
				f.EndNS += shift
			}
			out.Faults = append(out.Faults, f)
		}
		if h.Trailer == nil {
			out.Trailer = nil
		} else if out.Trailer != nil {
			out.Trailer.Events += h.Trailer.Events
			out.Trailer.StalledNS += h.Trailer.StalledNS
			out.Trailer.Partial = out.Trailer.Partial || h.Trailer.Partial
			out.Trailer.WindowEndNS = max(out.Trailer.WindowEndNS, h.Trailer.WindowEndNS+shift)
			if ws := h.Trailer.WindowStartNS + shift; i == 0 || ws < out.Trailer.WindowStartNS {
				out.Trailer.WindowStartNS = ws
			}
		}
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

// WriteFile writes h as a history file (JSON lines, gzip'd if path ends in
// .gz).
func WriteFile(path string, h *History) error {
	hd := h.Header
	w, err := Create(path, hd, 1)
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
