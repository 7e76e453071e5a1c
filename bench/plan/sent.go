package plan

import (
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// sentMeter counts what the lock sends its servers over the measured
// window: round trips and commands, at the client, so the server cost can
// tell the lock's round trips from the calls its scripts make. nil (an etcd
// lock) counts nothing and leaves the result without the figures.
type sentMeter struct {
	counter    *lockimpl.SentCounter
	start, end lockimpl.SentCounts
}

// countSent hooks a counter into the clients the lock sends through: the
// cluster's ClusterClient, or each master's client. The counter also goes in
// the lock's options, for a lock that writes commands by hand (Redlock's raw
// fan-out, a pipelined lock's batches).
func countSent(topo *compose.Topology, clients []*redis.Client, nodes []redis.Cmdable) *sentMeter {
	m := &sentMeter{counter: lockimpl.NewSentCounter()}
	if isCluster(topo) {
		for _, n := range nodes {
			if cc, ok := n.(*redis.ClusterClient); ok {
				cc.AddHook(m.counter)
			}
		}
		return m
	}
	for _, c := range clients {
		c.AddHook(m.counter)
	}
	return m
}

func (m *sentMeter) before() {
	if m != nil {
		m.start = m.counter.Read()
	}
}

func (m *sentMeter) after() {
	if m != nil {
		m.end = m.counter.Read()
	}
}

// fill puts what was sent in the window into the client figures, per
// acquisition where there were acquisitions.
func (m *sentMeter) fill(c *results.Client, acquired int64) {
	if m == nil || c == nil {
		return
	}
	d := m.end.Since(m.start)
	c.Sent = &results.Sent{RoundTrips: d.RoundTrips, Commands: d.Commands, ByCommand: d.ByCommand}
	c.SetPerAcquire(acquired)
}
