package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the replicated topology's sentinels monitor the
// primary under (SENTINEL GET-MASTER-ADDR-BY-NAME lockbench).
const MasterName = "lockbench"

// Sentinel settings of the replicated topology: fast enough that a failover
// fits in a short benchmark, slow enough that a loaded 2-core machine does not
// fail over by accident.
const (
	sentinelCount     = 3
	sentinelQuorum    = 2
	downAfter         = 1000 * time.Millisecond
	failoverTimeout   = 3000 * time.Millisecond
	readyTimeout      = 30 * time.Second
	replicationSynced = 10 * time.Second
)

// upReplicated starts a primary, a replica and three sentinels, and waits
// until the sentinels know the replica and each other: a failover before that
// would find no replica to promote, or no majority to elect a leader.
func (t *Topology) upReplicated(ctx context.Context) error {
	t.Spec.Masters = 1
	// No diskless-sync delay: the replica's first sync (and the resync after a
	// failover) should not wait 5 s for more replicas that never come.
	replArgs := []string{"--repl-diskless-sync-delay", "0"}
	// With peer proxies (the isolate fault) they listen first: each node
	// announces its own as its address from the start.
	argsOf := func(int) []string { return replArgs }
	if t.opts.PeerProxy {
		peers, err := startReplicatedPeers(2)
		if err != nil {
			return err
		}
		t.addCleanup(func() error { peers.close(); return nil })
		t.backendState = peers
		argsOf = func(i int) []string { return append(slices.Clone(replArgs), peers.announceArgs(i)...) }
	}
	primary, err := t.startReplicatedNode(ctx, 0, RolePrimary, argsOf(0))
	if err != nil {
		return fmt.Errorf("start primary of replicated: %w", err)
	}
	host, port, _ := net.SplitHostPort(t.peerAddr(primary))
	replica, err := t.startReplicatedNode(ctx, 1, RoleReplica, append(argsOf(1), "--replicaof", host, port))
	if err != nil {
		return fmt.Errorf("start replica of replicated: %w", err)
	}
	t.logf("replicated: primary %s, replica %s; waiting for the replica to sync", primary.Addr, replica.Addr)
	// Sentinels learn the replicas from the primary's INFO, which they read on
	// connect and then only every 10 s: start them once the replica is listed.
	if err := waitReplicaOnline(ctx, primary.Addr, replica.Addr, t.peerAddr(replica)); err != nil {
		return err
	}

	conf := []string{
		fmt.Sprintf("sentinel monitor %s %s %s %d", MasterName, host, port, sentinelQuorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, downAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, failoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", MasterName),
	}
	for i := range sentinelCount {
		srv, err := StartServer(ctx, ServerOptions{Sentinel: conf})
		if err != nil {
			return fmt.Errorf("start sentinel %d of replicated: %w", i, err)
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("sentinel-%d", i), Role: RoleSentinel, Addr: srv.Addr(),
			Server: srv, opts: &redis.Options{Addr: srv.Addr()}})
		t.sentinels = append(t.sentinels, redis.NewSentinelClient(adminOptions(srv.Addr())))
	}
	return t.waitSentinels(ctx, t.peerAddr(replica))
}

// startReplicatedNode starts data node i of replicated, adds it to the
// topology, and leads its peer proxy, if any, to it.
func (t *Topology) startReplicatedNode(ctx context.Context, i int, role string, args []string) (*Node, error) {
	n, err := t.startDataNode(ctx, i, fmt.Sprintf("node-%d", i), role, args)
	if err != nil {
		return nil, err
	}
	t.Nodes = append(t.Nodes, n)
	if p := t.replPeers(); p != nil {
		return n, p.point(i, n.Addr)
	}
	return n, nil
}

// adminOptions are for the topology's own short control commands: no retries,
// short timeouts, nothing that would hang a fault or Close.
func adminOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second,
		WriteTimeout: 2 * time.Second, ContextTimeoutEnabled: true, DisableIdentity: true, PoolSize: 2}
}

func (t *Topology) logf(format string, args ...any) {
	if t.opts.Log != nil {
		fmt.Fprintf(t.opts.Log, format+"\n", args...)
	}
}

// waitReplicaOnline waits until the replica's link is up and the primary lists
// it as online, at the address it announces (its own, or its peer proxy's).
func waitReplicaOnline(ctx context.Context, primary, replica, announced string) error {
	p, r := redis.NewClient(adminOptions(primary)), redis.NewClient(adminOptions(replica))
	defer p.Close()
	defer r.Close()
	_, port, _ := strings.Cut(announced, ":")
	deadline := time.Now().Add(replicationSynced)
	for {
		rinfo, rerr := r.Info(ctx, "replication").Result()
		pinfo, perr := p.Info(ctx, "replication").Result()
		if rerr == nil && perr == nil && infoField(rinfo, "master_link_status") == "up" &&
			strings.Contains(pinfo, "port="+port+",state=online") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica %s did not sync with primary %s within %s (link %q, %v, %v)",
				replica, primary, replicationSynced, infoField(rinfo, "master_link_status"), rerr, perr)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("wait for replica %s to sync: %w", replica, err)
		}
	}
}

// infoField returns the value of field in an INFO reply.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sentinelView is what one sentinel knows.
type sentinelView struct {
	seesReplica bool // lists the replica, healthy, with its link to the primary up
	peers       int  // other sentinels it knows and thinks up
}

// waitSentinels polls every sentinel until all see the replica and each
// other, reporting progress whenever it changes.
func (t *Topology) waitSentinels(ctx context.Context, replica string) error {
	timeout := t.opts.ReadyTimeout
	if timeout <= 0 {
		timeout = readyTimeout
	}
	start := time.Now()
	last := ""
	for {
		seeReplica, seePeers := 0, 0
		for _, c := range t.sentinels {
			v := readSentinel(ctx, c, replica)
			if v.seesReplica {
				seeReplica++
			}
			if v.peers == len(t.sentinels)-1 {
				seePeers++
			}
		}
		n := len(t.sentinels)
		status := fmt.Sprintf("%d/%d see the replica, %d/%d see the other sentinels", seeReplica, n, seePeers, n)
		if seeReplica == n && seePeers == n {
			t.logf("sentinels agree: %s (after %s)", status, time.Since(start).Round(time.Millisecond))
			return nil
		}
		if status != last {
			t.logf("waiting for sentinels: %s…", status)
			last = status
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("replicated topology not ready after %s: %s; sentinel-0 log: %s",
				timeout, status, t.sentinelLogTail())
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("wait for sentinels (%s): %w", status, err)
		}
	}
}

func readSentinel(ctx context.Context, c *redis.SentinelClient, replica string) sentinelView {
	var v sentinelView
	replicas, err := c.Replicas(ctx, MasterName).Result()
	if err == nil {
		for _, r := range replicas {
			if addr := r["ip"] + ":" + r["port"]; addr == replica && healthy(r["flags"]) && r["master-link-status"] == "ok" {
				v.seesReplica = true
			}
		}
	}
	peers, err := c.Sentinels(ctx, MasterName).Result()
	if err == nil {
		for _, p := range peers {
			if healthy(p["flags"]) {
				v.peers++
			}
		}
	}
	return v
}

// healthy reports whether a sentinel's flags for an instance say it is up.
func healthy(flags string) bool {
	for _, f := range strings.Split(flags, ",") {
		switch f {
		case "s_down", "o_down", "disconnected":
			return false
		}
	}
	return true
}

func (t *Topology) sentinelLogTail() string {
	for _, n := range t.Nodes {
		if n.Role == RoleSentinel && n.ctr != nil {
			return strings.ReplaceAll(n.ctr.logTail(), "\n", " | ")
		}
		if n.Role == RoleSentinel && n.Server != nil {
			b, _ := os.ReadFile(filepath.Join(n.Server.Dir(), "redis.log"))
			return strings.ReplaceAll(tail(b), "\n", " | ")
		}
	}
	return "(none)"
}

// CurrentPrimary asks the sentinels which data node is the primary now. Right
// after a failover only the leader knows; the others learn it from its hello
// messages a second or two later. So the answer with the highest config epoch
// wins, as it does among the sentinels themselves. A topology without
// sentinels answers its only data node for single and an error for redlock,
// whose masters are peers.
func (t *Topology) CurrentPrimary(ctx context.Context) (*Node, error) {
	data := t.DataNodes()
	if len(t.sentinels) == 0 {
		if len(data) == 1 {
			return data[0], nil
		}
		return nil, fmt.Errorf("topology %s has no primary", t.Spec)
	}
	best, bestEpoch := "", int64(-1)
	var errs []error
	addrs := t.SentinelAddrs()
	for i, c := range t.sentinels {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		m, err := c.Master(qctx, MasterName).Result()
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("sentinel %s: %w", addrs[i], err))
			continue
		}
		epoch, err := strconv.ParseInt(m["config-epoch"], 10, 64)
		if err != nil || m["ip"] == "" || m["port"] == "" {
			errs = append(errs, fmt.Errorf("sentinel %s: SENTINEL MASTER answered ip %q port %q config-epoch %q",
				addrs[i], m["ip"], m["port"], m["config-epoch"]))
			continue
		}
		if epoch > bestEpoch {
			best, bestEpoch = m["ip"]+":"+m["port"], epoch
		}
	}
	if best == "" {
		return nil, fmt.Errorf("no sentinel named the primary: %w", errors.Join(errs...))
	}
	if n := t.dataNodeAt(best); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("sentinels name %s as primary, which is none of the topology's data nodes", best)
}

// CurrentReplica is the replicated topology's data node that is not the
// current primary.
func (t *Topology) CurrentReplica(ctx context.Context) (*Node, error) {
	if len(t.sentinels) == 0 {
		return nil, fmt.Errorf("topology %s has no replica", t.Spec)
	}
	p, err := t.CurrentPrimary(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range t.DataNodes() {
		if n != p {
			return n, nil
		}
	}
	return nil, errors.New("replicated topology has no data node besides the primary")
}

// Primary is the current primary as the sentinels say (see CurrentPrimary),
// or nil when there is none or no sentinel answers within 2 s.
func (t *Topology) Primary() *Node {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := t.CurrentPrimary(ctx)
	if err != nil {
		return nil
	}
	return n
}

// Replica is the replicated topology's current replica, or nil (see
// CurrentReplica).
func (t *Topology) Replica() *Node {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := t.CurrentReplica(ctx)
	if err != nil {
		return nil
	}
	return n
}
