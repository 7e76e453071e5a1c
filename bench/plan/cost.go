package plan

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// costMeter reads every node's INFO counters around the measured window.
type costMeter struct {
	clients          []*redis.Client
	addrs            []string
	start, end       []compose.ServerStats
	startErr, endErr []error
}

func newCostMeter(clients []*redis.Client, addrs []string) *costMeter {
	n := len(clients)
	return &costMeter{clients: clients, addrs: addrs, start: make([]compose.ServerStats, n), end: make([]compose.ServerStats, n),
		startErr: make([]error, n), endErr: make([]error, n)}
}

func (m *costMeter) read(ctx context.Context, into []compose.ServerStats, errs []error) {
	for i, c := range m.clients {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		into[i], errs[i] = compose.ReadServerStats(rctx, c)
		cancel()
	}
}

func (m *costMeter) before(ctx context.Context) { m.read(ctx, m.start, m.startErr) }
func (m *costMeter) after(ctx context.Context)  { m.read(ctx, m.end, m.endErr) }

// servers turns the two readings into per-acquisition cost. A node whose INFO
// was refused (a managed Redis, say) is reported as unavailable, not fatal.
// A node that a fault of the run took down is left out of the sums and
// named: the figures are then the survivors'. down maps such a node's
// address to why it is missing.
func (m *costMeter) servers(acquired int64, down map[string]string) *results.Servers {
	s := &results.Servers{}
	var missing []string
	for i := range m.clients {
		node := results.ServerNode{Addr: m.addrs[i]}
		if err := firstErr(m.startErr[i], m.endErr[i]); err != nil {
			node.Error = err.Error()
			if why, ok := down[m.addrs[i]]; ok && m.startErr[i] == nil {
				node.Error = why
				s.Unmeasured = append(s.Unmeasured, why)
			} else {
				missing = append(missing, m.addrs[i]+": "+err.Error())
			}
			s.Nodes = append(s.Nodes, node)
			continue
		}
		node.ByCommand = map[string]int64{}
		for name, calls := range m.end[i].Calls {
			if d := calls - m.start[i].Calls[name]; d > 0 {
				node.ByCommand[name] = d
				node.Commands += d
			}
		}
		node.CPUUS = (m.end[i].CPUSeconds - m.start[i].CPUSeconds) * 1e6
		s.Nodes = append(s.Nodes, node)
	}
	s.SetPerAcquire(acquired)
	if len(missing) > 0 {
		s.Unavailable = "INFO not available on " + strings.Join(missing, "; ")
	}
	return s
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
