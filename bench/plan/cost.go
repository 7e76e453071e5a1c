package plan

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/results"
)

// costMeter reads every node's counters (INFO on Redis, /metrics on etcd)
// around the measured window.
type costMeter struct {
	addrs []string
	// source names where the counters come from, for the unavailable line.
	source           string
	readNode         func(ctx context.Context, i int) (compose.ServerStats, error)
	start, end       []compose.ServerStats
	startErr, endErr []error
}

func newCostMeter(addrs []string, source string, read func(ctx context.Context, i int) (compose.ServerStats, error)) *costMeter {
	n := len(addrs)
	return &costMeter{addrs: addrs, source: source, readNode: read, start: make([]compose.ServerStats, n), end: make([]compose.ServerStats, n),
		startErr: make([]error, n), endErr: make([]error, n)}
}

// infoMeter reads Redis INFO through the given clients, one per address.
func infoMeter(clients []*redis.Client, addrs []string) *costMeter {
	return newCostMeter(addrs, "INFO", func(ctx context.Context, i int) (compose.ServerStats, error) {
		return compose.ReadServerStats(ctx, clients[i])
	})
}

// read takes every node's reading at once rather than one after another:
// the window is running, and each node's reading should be of the same
// instant, or the commands a node ran while the ones before it were read
// would fall outside the window although their acquisitions fall inside.
func (m *costMeter) read(ctx context.Context, into []compose.ServerStats, errs []error) {
	var wg sync.WaitGroup
	for i := range m.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			into[i], errs[i] = m.readNode(rctx, i)
		}()
	}
	wg.Wait()
}

func (m *costMeter) before(ctx context.Context) { m.read(ctx, m.start, m.startErr) }
func (m *costMeter) after(ctx context.Context)  { m.read(ctx, m.end, m.endErr) }

// servers turns the two readings into per-acquisition cost. A node whose
// counters were refused (INFO on a managed Redis, say) is reported as
// unavailable, not fatal.
// A node that a fault of the run took down is left out of the sums and
// named: the figures are then the survivors'. down maps such a node's
// address to why it is missing.
func (m *costMeter) servers(acquired int64, down map[string]string) *results.Servers {
	s := &results.Servers{}
	var missing []string
	for i := range m.addrs {
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
		s.Unavailable = m.source + " not available on " + strings.Join(missing, "; ")
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
