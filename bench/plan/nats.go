package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// natsChecks refuses, for the nats-kv lock, a TTL NATS would truncate: it
// counts per-key TTLs in whole seconds.
func (p *parser) natsChecks(pl *Plan) {
	if p.err != nil || pl.Lock != lockimpl.LockNatsKV {
		return
	}
	if _, err := lockimpl.NatsTTLSeconds(pl.Workload.TTL); err != nil {
		p.fail("ttl", "%v on %s: NATS counts key TTLs in whole seconds from 1s and would truncate it; want 1s, 2s, …", pl.Workload.TTL, pl.Topology)
	}
}

// armNats connects to the servers and builds the nats-kv lock over the
// lock bucket, replicated on every server of a cluster, and cleans the
// run's keys up after it.
func armNats(ctx context.Context, pl Plan, env Env, id, prefix string, topo *compose.Topology) (armed, *results.Result, error) {
	js, closeConn, err := lockimpl.NatsJetStream(topo.NatsURLs())
	if err != nil {
		// The error names the URLs, passwords and all: name them redacted.
		var shown []string
		for _, u := range topo.NatsURLs() {
			shown = append(shown, compose.RedactURL(u))
		}
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return armed{}, nil, fmt.Errorf("%s: connect to %s: %w", topo.Spec, strings.Join(shown, ","), err)
	}
	n := len(topo.DataNodes())
	// The bucket's creation is tried again while the meta group settles
	// (lockimpl's createBucket); a minute covers a cluster just started on
	// a busy host.
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	locker, err := lockimpl.NewNatsKV(cctx, js, lockimpl.NatsKVOptions{Replicas: n, Nodes: n})
	if err != nil {
		closeConn()
		if ierr := interrupted(ctx, "while reaching the servers"); ierr != nil {
			return armed{}, nil, ierr
		}
		return armed{}, nil, err
	}
	a := armed{locker: locker, close: closeConn, remaining: natsRemaining(locker),
		meter: newCostMeter(topo.Addrs(), "/varz", topo.ReadNatsStats),
		cleanUp: func(ctx context.Context, m *bench.Measurement, _ map[string]string, env Env) {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if pl.RunID != "" {
				env.logf("cleanup: released %d lock(s) left by crashed holders", releaseAbandoned(cctx, locker, m))
				return
			}
			k, err := locker.DeletePrefix(cctx, prefix)
			logDeleted(env, prefix, int(k), err)
		}}
	r := newResult(id, pl, topo, locker, "nats-server v"+js.Conn().ConnectedServerVersion(), env)
	r.Config["pool-size"] = "one NATS connection"
	return a, r, nil
}

// natsRemaining reads a key's remaining TTL from its last message on the
// bucket's stream (renewal-check's probes); the message's timestamp is in
// nanoseconds, so the reading is as fine as the two clocks agree.
func natsRemaining(locker *lockimpl.NatsKV) remaining {
	return remaining{read: locker.Remaining, resolution: time.Millisecond}
}
