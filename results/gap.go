package results

// MergeAcquisitionTimes keeps the earliest first and the latest last
// acquisition of one second, m's and p's (across recorder shards, or
// generators): exact, since the union's first is the earliest of theirs.
func (m *SeriesPoint) MergeAcquisitionTimes(p SeriesPoint) {
	if p.FirstAcquiredS > 0 && (m.FirstAcquiredS == 0 || p.FirstAcquiredS < m.FirstAcquiredS) {
		m.FirstAcquiredS = p.FirstAcquiredS
	}
	m.LastAcquiredS = max(m.LastAcquiredS, p.LastAcquiredS)
}

// LongestGap is the longest time in the window without an acquisition (the
// unavailability window a fault opened), and when it began, in seconds
// from the window's start; the window's start and end bound the first and
// last gaps. It is read from the series' first and last acquisition of each
// second: a gap of a second or more always spans a second's boundary, so it
// is exact; shorter gaps inside one second are not seen, and a result below
// 1 s means no gap reached a second. ok is false for a series without
// acquisition times (a result older than them).
func LongestGap(series []SeriesPoint, durationS float64) (gapS, atS float64, ok bool) {
	prev := 0.0
	for _, p := range series {
		if p.Acquired == 0 || p.FirstAcquiredS == 0 {
			continue
		}
		ok = true
		if g := p.FirstAcquiredS - prev; g > gapS {
			gapS, atS = g, prev
		}
		prev = max(prev, p.LastAcquiredS)
	}
	if !ok {
		for _, p := range series {
			if p.Acquired > 0 {
				return 0, 0, false // acquisitions without times: an older result
			}
		}
		return durationS, 0, len(series) > 0 // not one acquisition in the window
	}
	if g := durationS - prev; g > gapS {
		gapS, atS = g, prev
	}
	return gapS, atS, ok
}
