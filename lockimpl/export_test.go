package lockimpl

import "context"

// RawCalls counts the fan-outs that went the raw way, for tests that must
// know which path they exercised.
func (r *Redlock) RawCalls() int64 { return r.rawCalls.Load() }

// RawIdle is how many connections of its own the single lock holds idle:
// above 0, its next command goes the raw way.
func (s *Single) RawIdle() int {
	if s.raw == nil {
		return 0
	}
	return len(s.raw.node.idle)
}

// PlantZkNode puts a node in key's queue as an attempt whose create
// answer was lost would leave it; remembered says whether the lock noted
// it as an orphan (as create does when it cannot look then).
func (z *Zk) PlantZkNode(ctx context.Context, key string, remembered bool) error {
	s, parent, token := z.sessions[0], z.keyPath(key), NewToken()
	if _, err := z.create(ctx, s, parent, token); err != nil {
		return err
	}
	if remembered {
		z.orphans.add(zkOrphan{session: s, parent: parent, token: token})
	}
	return nil
}

// RawWaited is how many calls of the single lock waited for a connection
// of its own rather than go through its client.
func (s *Single) RawWaited() int64 {
	if s.raw == nil {
		return 0
	}
	return s.raw.waited.Load()
}
