package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Successive failovers on one replicated topology: after a run killed the
// primary, RestoreReplica brings the dead node back as the new primary's
// replica, and VerifyClean refuses to hand the topology to the next run
// unless it is as a fresh one would be. A failover then costs a restore
// (about a second) instead of a bring-up and a teardown.

// Bounds of the restore: the sentinels promote within a few seconds of a
// kill (down-after 1 s, then an election); a replica with nothing to sync
// links within a second; the sentinels read a replica's INFO each second
// while its link is down.
const (
	promotedWithin = 15 * time.Second
	restoredWithin = 15 * time.Second
	// nextFailoverAfter is how long after a failover began the sentinels
	// that voted in it refuse to start another on the same master: twice
	// the failover timeout (Redis Sentinel's rule).
	nextFailoverAfter = 2 * failoverTimeout
)

// Borrow lends the topology to one run: the clients the run makes from now
// on are closed by the returned release, so that many runs on one topology
// do not pile up connections (a server takes 10,000 by default).
func (t *Topology) Borrow() (release func()) {
	t.mu.Lock()
	mark := len(t.clients)
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		var mine []io.Closer
		if mark <= len(t.clients) {
			mine = append(mine, t.clients[mark:]...)
			t.clients = t.clients[:mark]
		}
		t.mu.Unlock()
		for _, c := range mine {
			_ = c.Close()
		}
	}
}

// RestoreReplica makes a replicated topology whole after a failover: it
// waits until the sentinels name a live primary, starts every data node
// that is down again and makes it that primary's replica (REPLICAOF at
// once, rather than waiting the sentinels' 10 s INFO period for them to do
// it), waits for it to sync and for every sentinel to see it, and for the
// sentinels' own pause between failovers of one master to pass since
// lastKill (zero: none). A topology with nothing down is left as it is.
func (t *Topology) RestoreReplica(ctx context.Context, lastKill time.Time) error {
	if len(t.sentinels) == 0 || len(t.DataNodes()) != 2 {
		return fmt.Errorf("restore a replica: topology %s is not replicated", t.Spec)
	}
	primary, err := t.livePrimary(ctx)
	if err != nil {
		return err
	}
	for _, n := range t.DataNodes() {
		if n == primary || n.Server == nil || n.Server.PID() != 0 {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, restoredWithin)
		err := n.Server.Start(sctx)
		cancel()
		if err != nil {
			return fmt.Errorf("restore %s (%s): start: %w", n.Name, n.Addr, err)
		}
		host, port, _ := strings.Cut(t.peerAddr(primary), ":")
		if err := adminDo(ctx, t.adminOptionsFor(n), "REPLICAOF", host, port); err != nil {
			return fmt.Errorf("restore %s (%s): REPLICAOF %s: %w", n.Name, n.Addr, primary.Addr, err)
		}
		t.logf("restore: %s (%s) started again as the replica of %s", n.Name, n.Addr, primary.Addr)
	}
	replica, err := t.CurrentReplica(ctx)
	if err != nil {
		return fmt.Errorf("restore a replica: %w", err)
	}
	if err := waitReplicaOnline(ctx, primary.Addr, replica.Addr, t.peerAddr(replica)); err != nil {
		return fmt.Errorf("restore a replica: %w", err)
	}
	if err := t.sentinelsReach(ctx, t.peerAddr(replica)); err != nil {
		return fmt.Errorf("restore a replica: %w", err)
	}
	if !lastKill.IsZero() {
		if err := sleepCtx(ctx, time.Until(lastKill.Add(nextFailoverAfter))); err != nil {
			return fmt.Errorf("restore a replica: %w", err)
		}
	}
	return nil
}

// sentinelsReach waits until every sentinel lists replica among the
// current primary's replicas and reaches it (neither down nor
// disconnected): what a leader needs to promote it at the next kill, since
// once the primary is down they read a replica's INFO every second. The
// link status they would learn only at their next INFO read, up to 10 s
// later; VerifyClean reads the link on the servers instead.
func (t *Topology) sentinelsReach(ctx context.Context, replica string) error {
	deadline := time.Now().Add(restoredWithin)
	for {
		reached := 0
		for _, c := range t.sentinels {
			replicas, err := c.Replicas(ctx, MasterName).Result()
			if err != nil {
				continue
			}
			for _, r := range replicas {
				if r["ip"]+":"+r["port"] == replica && healthy(r["flags"]) {
					reached++
				}
			}
		}
		if reached == len(t.sentinels) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d sentinels reach replica %s after %v (%s)", reached, len(t.sentinels), replica, restoredWithin, t.sentinelViews(ctx, replica))
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("wait for the sentinels to reach replica %s: %w", replica, err)
		}
	}
}

// sentinelViews says what each sentinel lists of replica (its flags, or
// not listed) and of the master (address, flags, failover state), for an
// error: a sentinel that lists the replica down differs from one that has
// not listed it, or one still in a failover.
func (t *Topology) sentinelViews(ctx context.Context, replica string) string {
	var views []string
	for i, c := range t.sentinels {
		replicas, err := c.Replicas(ctx, MasterName).Result()
		if err != nil {
			views = append(views, fmt.Sprintf("sentinel %d: %v", i, err))
			continue
		}
		view := "not listed"
		for _, r := range replicas {
			if r["ip"]+":"+r["port"] == replica {
				view = "flags " + r["flags"]
			}
		}
		if m, err := c.Master(ctx, MasterName).Result(); err == nil {
			view += fmt.Sprintf(" under master %s:%s, flags %s, failover state %s", m["ip"], m["port"], m["flags"], m["failover-state"])
		}
		views = append(views, fmt.Sprintf("sentinel %d: %s", i, view))
	}
	return strings.Join(views, "; ")
}

// livePrimary waits until the sentinels name a data node that is running.
func (t *Topology) livePrimary(ctx context.Context) (*Node, error) {
	deadline := time.Now().Add(promotedWithin)
	for {
		p, err := t.CurrentPrimary(ctx)
		if err == nil && (p.Server == nil || p.Server.PID() != 0) {
			return p, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("the sentinels still name %s (%s), which is down", p.Name, p.Addr)
			}
			return nil, fmt.Errorf("no primary promoted within %v: %w", promotedWithin, err)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("wait for a promoted primary: %w", err)
		}
	}
}

// ErrDirty is the error of VerifyClean on a topology that is not as a fresh
// one would be: the next run on it would not measure what it claims.
var ErrDirty = errors.New("topology not clean")

// VerifyClean checks that a replicated topology is as a fresh one would be
// for the next run: a primary and a replica that is linked to it (link up)
// and has applied all of it (equal replication offsets), and no key under
// prefix (the last run's) on either. The offsets are read for up to
// replicationSynced: a stream still in flight is not dirt.
func (t *Topology) VerifyClean(ctx context.Context, prefix string) error {
	dirty := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrDirty, fmt.Sprintf(format, args...))
	}
	if prefix == "" {
		return dirty("no key prefix to look under")
	}
	primary, err := t.CurrentPrimary(ctx)
	if err != nil {
		return dirty("%v", err)
	}
	replica, err := t.CurrentReplica(ctx)
	if err != nil {
		return dirty("%v", err)
	}
	p, r := redis.NewClient(t.adminOptionsFor(primary)), redis.NewClient(t.adminOptionsFor(replica))
	defer p.Close()
	defer r.Close()
	if err := inSync(ctx, p, r, primary.Addr, replica.Addr); err != nil {
		return dirty("%v", err)
	}
	for _, c := range []*redis.Client{p, r} {
		key, err := firstKey(ctx, c, prefix)
		switch {
		case err != nil:
			return dirty("scan %s for %s*: %v", c.Options().Addr, prefix, err)
		case key != "":
			return dirty("%s still has key(s) of the last run, e.g. %s", c.Options().Addr, key)
		}
	}
	return nil
}

// inSync waits until the replica's link to the primary is up and its
// offset equals the primary's.
func inSync(ctx context.Context, p, r *redis.Client, pAddr, rAddr string) error {
	deadline := time.Now().Add(replicationSynced)
	for {
		msg, waiting := syncState(ctx, p, r, pAddr)
		switch {
		case msg == "":
			return nil
		case !waiting:
			// Roles do not change by waiting (but for the sentinels'
			// correcting them, which would hide the dirt).
			return fmt.Errorf("replica %s: %s", rAddr, msg)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica %s not in sync with primary %s after %v: %s", rAddr, pAddr, replicationSynced, msg)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("wait for replica %s to sync: %w", rAddr, err)
		}
	}
}

// syncState is "" when the replica follows the primary with nothing to
// apply, else what is wrong; waiting when time may mend it (a link coming
// up, a stream still in flight).
func syncState(ctx context.Context, p, r *redis.Client, pAddr string) (msg string, waiting bool) {
	pinfo, err := p.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Sprintf("primary: %v", err), true
	}
	rinfo, err := r.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Sprintf("replica: %v", err), true
	}
	if role := infoField(pinfo, "role"); role != "master" {
		return fmt.Sprintf("the primary's role is %q", role), false
	}
	master := infoField(rinfo, "master_host") + ":" + infoField(rinfo, "master_port")
	if role := infoField(rinfo, "role"); role != "slave" || master != pAddr {
		return fmt.Sprintf("its role is %q (of %q), not a replica of %s", role, master, pAddr), false
	}
	if link := infoField(rinfo, "master_link_status"); link != "up" {
		return fmt.Sprintf("master_link_status %q", link), true
	}
	po, perr := strconv.ParseInt(infoField(pinfo, "master_repl_offset"), 10, 64)
	ro, rerr := strconv.ParseInt(infoField(rinfo, "slave_repl_offset"), 10, 64)
	if perr != nil || rerr != nil || po != ro {
		return fmt.Sprintf("offsets differ: primary %s, replica %s", infoField(pinfo, "master_repl_offset"), infoField(rinfo, "slave_repl_offset")), true
	}
	return "", false
}

// firstKey is a key under prefix on c, "" when there is none.
func firstKey(ctx context.Context, c *redis.Client, prefix string) (string, error) {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil || len(keys) > 0 {
			return strings.Join(keys[:min(len(keys), 1)], ""), err
		}
		if next == 0 {
			return "", nil
		}
		cursor = next
	}
}
