package plan

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// etcdChecks refuses, for the etcd lock, a TTL etcd would round or raise.
func (p *parser) etcdChecks(pl *Plan) {
	if p.err != nil || pl.Lock != lockimpl.LockEtcd {
		return
	}
	ttl := pl.Workload.TTL
	d, _ := lockimpl.Describe(pl.Lock)
	// Local members' floor follows their timing, shorter on a lone member.
	minTTL := d.MinTTLOn(pl.Topology.Masters)
	if _, err := lockimpl.EtcdTTLSeconds(ttl); err != nil {
		p.fail("ttl", "%v on %s: etcd leases count in whole seconds, and etcd would round it; want %v, %v, …", ttl, pl.Topology, minTTL, minTTL+time.Second)
		return
	}
	if nt := pl.LockOptions.Redlock.NodeTimeout; nt >= ttl {
		p.fail("node-timeout", "%v: on etcd it bounds each request, and must be less than the ttl %v (0 picks %v)", nt, ttl, lockimpl.DefaultEtcdTimeout)
		return
	}
	if len(pl.URLs) == 0 && ttl < minTTL {
		p.fail("ttl", "%v on %s: local etcd members grant at least %v (etcd raises a shorter lease to ⌈1.5 × election timeout⌉); want %v or more", ttl, pl.Topology, minTTL, minTTL)
	}
}

// armEtcd reaches an etcd topology's members and builds the etcd lock over
// one gRPC client, with server cost from each member's /metrics and a
// cleanup that deletes the run's prefix.
func armEtcd(ctx context.Context, pl Plan, env Env, id, prefix string, topo *compose.Topology) (armed, *results.Result, error) {
	client, err := topo.EtcdClient()
	if err != nil {
		return armed{}, nil, err
	}
	version, err := etcdReady(ctx, client, topo)
	if err != nil {
		if ierr := interrupted(ctx, "while reaching the servers"); ierr != nil {
			return armed{}, nil, ierr
		}
		return armed{}, nil, err
	}
	locker := lockimpl.NewEtcd(client, len(topo.DataNodes()), pl.LockOptions.Redlock.NodeTimeout)
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err = locker.CheckTTL(tctx, pl.Workload.TTL)
	cancel()
	if err != nil {
		return armed{}, nil, badInput("ttl", "%v", err)
	}
	a := armed{locker: locker, meter: newCostMeter(topo.Addrs(), "/metrics", topo.ReadEtcdStats), remaining: etcdRemaining(client),
		cleanUp: func(ctx context.Context, m *bench.Measurement, _ map[string]string, env Env) {
			cleanUpEtcd(ctx, pl, locker, m, prefix, env)
		}}
	r := newResult(id, pl, topo, locker, version, env)
	r.Config["pool-size"] = "one gRPC connection per member"
	return a, r, nil
}

// etcdReady checks every member answers Status before the run, and returns
// the server version the first one reports.
func etcdReady(ctx context.Context, c *clientv3.Client, topo *compose.Topology) (string, error) {
	var errs []error
	version := ""
	for i, ep := range c.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		st, err := c.Status(sctx, ep)
		cancel()
		if err != nil {
			n := topo.DataNodes()[i]
			errs = append(errs, fmt.Errorf("%s (%s) does not answer Status: %w", n.Name, n.Addr, err))
			continue
		}
		if version == "" {
			version = "etcd " + st.Version
		}
	}
	return version, errors.Join(errs...)
}

// cleanUpEtcd deletes the run's keys (every one is leased, so a missed one
// goes by itself within a TTL). A generator of a shared run releases only
// the leases its own crashed holders left.
func cleanUpEtcd(ctx context.Context, pl Plan, locker *lockimpl.Etcd, m *bench.Measurement, prefix string, env Env) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if pl.RunID == "" {
		n, err := locker.DeletePrefix(cctx, prefix)
		logDeleted(env, prefix, int(n), err)
		return
	}
	env.logf("cleanup: released %d lease(s) left by crashed holders", releaseAbandoned(cctx, locker, m))
}

// etcdRemaining reads the lease attached to the key: its TTL as the
// leader counts it (whole seconds).
func etcdRemaining(c *clientv3.Client) remaining {
	return remaining{resolution: time.Second, read: func(ctx context.Context, key string) (time.Duration, bool, error) {
		resp, err := c.Get(ctx, key)
		if err != nil {
			return 0, false, fmt.Errorf("get %s: %w", key, err)
		}
		if len(resp.Kvs) == 0 {
			return 0, false, nil
		}
		id := clientv3.LeaseID(resp.Kvs[0].Lease)
		if id == clientv3.NoLease {
			return time.Duration(1 << 62), true, nil
		}
		ttl, err := c.TimeToLive(ctx, id)
		if err != nil {
			return 0, false, fmt.Errorf("lease of %s: %w", key, err)
		}
		if ttl.TTL < 0 {
			return 0, false, nil
		}
		return time.Duration(ttl.TTL) * time.Second, true, nil
	}}
}
