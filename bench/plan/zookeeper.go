package plan

import (
	"context"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// zkChecks refuses, for the zk lock, a TTL the local ensemble would clamp
// (its session timeout bounds are 2 to 20 ticks) and a renewal: the
// session's own pings keep the lease, and nothing renews it. An external
// ensemble's bounds are its own: the run says when it clamped.
func (p *parser) zkChecks(pl *Plan) {
	if p.err != nil || pl.Lock != lockimpl.LockZk {
		return
	}
	lo, hi := compose.ZkSessionBounds(compose.DefaultZkTick)
	switch ttl := pl.Workload.TTL; {
	case pl.Workload.RenewEvery > 0:
		p.fail("renew-every", "%s has no TTL to renew: its lease is its session, which the client's pings keep alive; drop --renew-every", pl.Lock)
	case len(pl.URLs) == 0 && (ttl < lo || ttl > hi):
		p.fail("ttl", "%v on %s: the zk lock's lease is its session timeout, which local members (tick %v) clamp to %v..%v; want a ttl from %v to %v",
			ttl, pl.Topology, compose.DefaultZkTick, lo, hi, lo, hi)
	}
}

// armZk connects the zk lock's session to the ensemble's members, says
// when the ensemble granted another session timeout than --ttl, and
// cleans the run's key nodes up after it.
func armZk(ctx context.Context, pl Plan, env Env, id, prefix string, topo *compose.Topology) (armed, *results.Result, error) {
	info, err := compose.ZkSrvr(ctx, topo.Addrs()[0])
	version := zkVersionName(info.Version)
	if err != nil && topo.Provider != compose.ProviderExternal {
		if ierr := interrupted(ctx, "while reaching the servers"); ierr != nil {
			return armed{}, nil, ierr
		}
		return armed{}, nil, err
	}
	if err != nil {
		// An external ensemble may not allow srvr (4lw.commands.whitelist).
		version = "zookeeper (version not told: srvr refused)"
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	locker, err := lockimpl.NewZk(cctx, lockimpl.ZkOptions{Servers: topo.ClientAddrs(), SessionTimeout: pl.Workload.TTL})
	if err != nil {
		return armed{}, nil, err
	}
	if note := locker.ClampNote(); note != "" {
		env.logf("%s", note)
	}
	a := armed{locker: locker, close: locker.Close,
		meter: newCostMeter(topo.Addrs(), "mntr", topo.ReadZkStats),
		cleanUp: func(ctx context.Context, m *bench.Measurement, _ map[string]string, env Env) {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if pl.RunID != "" {
				env.logf("cleanup: released %d lock(s) left by crashed holders", releaseAbandoned(cctx, locker, m))
				return
			}
			n, err := locker.DeletePrefix(cctx, prefix)
			logDeleted(env, prefix, int(n), err)
		}}
	r := newResult(id, pl, topo, locker, version, env)
	r.Config["pool-size"] = "one ZooKeeper session"
	return a, r, nil
}

// zkVersionName is "zookeeper 3.8.0" from srvr's "3.8.0-<commit>, built
// on …".
func zkVersionName(v string) string {
	v, _, _ = strings.Cut(v, ",")
	v, _, _ = strings.Cut(v, "-")
	return "zookeeper " + strings.TrimSpace(v)
}
