package lockimpl

// RawCalls counts the fan-outs that went the raw way, for tests that must
// know which path they exercised.
func (r *Redlock) RawCalls() int64 { return r.rawCalls.Load() }

// ReleaseScript is the compare-and-delete script's source, for benchmarks
// that release by hand as the lock does.
func ReleaseScript() string { return releaseSrc }

// RawIdle is how many connections of its own the single lock holds idle:
// above 0, its next command goes the raw way.
func (s *Single) RawIdle() int {
	if s.raw == nil {
		return 0
	}
	return len(s.raw.node.idle)
}
