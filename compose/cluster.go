package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Cluster bounds and settings. The node timeout is short so that a shard's
// failover fits in a benchmark of a few seconds (promotion comes about one
// node timeout plus 0.5-1 s after the master dies), and long enough that a
// loaded 2-core machine does not fail masters over by accident.
const (
	// MinClusterMasters is the smallest cluster:M (Redis Cluster needs a
	// majority of masters to agree on a failover).
	MinClusterMasters = 3
	// MaxClusterReplicas bounds R in cluster:M,R.
	MaxClusterReplicas = 3
	// ClusterNodeTimeout is the local cluster's cluster-node-timeout.
	ClusterNodeTimeout = 1500 * time.Millisecond
	// clusterSlots is the number of hash slots of every Redis Cluster.
	clusterSlots = 16384
	// clusterReload is how often a ClusterClient rereads the slot map
	// without being told to by a MOVED reply: after a master died, only this
	// makes the client see the promoted replica (a dead master sends no MOVED).
	clusterReload = 500 * time.Millisecond
	// clusterRedirects is how many MOVED/ASK redirects a command follows.
	clusterRedirects = 3
)

// clusterInfo is what the topology knows of its cluster's shape: a shard is
// named by the slots it served when the topology came up, whichever node
// serves them now.
type clusterInfo struct {
	// firstSlot is the first slot of each shard, in shard order.
	firstSlot []int
	// shardOf is each data node's shard.
	shardOf map[*Node]int
	// busPort is each local node's cluster bus port, as it announces it
	// (its bus proxy's with UpOptions.PeerProxy).
	busPort map[*Node]int
}

// clusterArgs are the local cluster nodes' options: replica validity off
// (a replica that lagged may still be promoted, as it would be in production
// with default settings after a short lag), full coverage off (a shard being
// failed over does not stop the others), no replica migration (shards keep
// their shape), and no diskless-sync delay (a replica syncs at once).
func clusterArgs(busPort int) []string {
	return []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-port", strconv.Itoa(busPort),
		"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
		"--cluster-replica-validity-factor", "0", "--cluster-require-full-coverage", "no",
		"--cluster-allow-replica-migration", "no", "--repl-diskless-sync-delay", "0"}
}

// upClusterLocal starts M masters and M×R replicas with cluster-enabled,
// and makes them one cluster itself: config epochs, ADDSLOTSRANGE on each
// master, MEET, REPLICATE, then waits until every node says cluster_state:ok
// and every replica is in sync. Masters come first in Nodes, then replicas
// shard by shard.
func (t *Topology) upClusterLocal(ctx context.Context) error {
	if t.Spec.Masters == 0 {
		t.Spec.Masters, t.Spec.Replicas = MinClusterMasters, 1
	}
	m, r := t.Spec.Masters, t.Spec.Replicas
	info := &clusterInfo{shardOf: map[*Node]int{}, busPort: map[*Node]int{}}
	t.cluster = info
	for s := range m {
		info.firstSlot = append(info.firstSlot, s*clusterSlots/m)
	}
	var bus *clusterBus
	if t.opts.PeerProxy {
		bus = newClusterBus()
		t.addCleanup(bus.close)
		t.backendState = bus
	}
	start := func(i, shard int, name, role string) error {
		var err error
		for try := 0; try < 3; try++ {
			var port int
			if port, err = freePort(); err != nil {
				return err
			}
			args := clusterArgs(port)
			if bus != nil {
				more, err := bus.add(i, port)
				if err != nil {
					return err
				}
				args = append(args, more...)
			}
			var n *Node
			if n, err = t.startDataNode(ctx, i, name, role, args); err == nil {
				t.Nodes = append(t.Nodes, n)
				info.shardOf[n], info.busPort[n] = shard, port
				if bus != nil {
					info.busPort[n] = bus.port(i)
				}
				return nil
			}
			if ctx.Err() != nil {
				break
			}
		}
		return fmt.Errorf("start %s of %s: %w", name, t.Spec, err)
	}
	for s := range m {
		if err := start(s, s, fmt.Sprintf("master-%d", s), RoleMaster); err != nil {
			return err
		}
	}
	for s := range m {
		for k := range r {
			name := fmt.Sprintf("replica-%d", s)
			if r > 1 {
				name = fmt.Sprintf("replica-%d-%d", s, k)
			}
			if err := start(m+s*r+k, s, name, RoleReplica); err != nil {
				return err
			}
		}
	}
	t.logf("cluster: %d masters, %d replica(s) each started; assigning slots", m, r)
	return t.formCluster(ctx)
}

// formCluster joins the fresh nodes into one cluster and waits until it is
// ready.
func (t *Topology) formCluster(ctx context.Context) error {
	ctrl := make([]*redis.Client, len(t.Nodes))
	for i, n := range t.Nodes {
		ctrl[i] = redis.NewClient(adminOptions(n.Addr))
	}
	defer func() {
		for _, c := range ctrl {
			_ = c.Close()
		}
	}()
	ids := make([]string, len(t.Nodes))
	m := t.Spec.Masters
	for i, c := range ctrl {
		// Distinct epochs up front, as redis-cli --cluster create sets them,
		// so no epoch collision has to be resolved later.
		if err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH on %s: %w", t.Nodes[i].Addr, err)
		}
		id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", t.Nodes[i].Addr, err)
		}
		ids[i] = id
	}
	for s := range m {
		lo, hi := t.cluster.firstSlot[s], clusterSlots-1
		if s+1 < m {
			hi = t.cluster.firstSlot[s+1] - 1
		}
		if err := ctrl[s].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, t.Nodes[s].Addr, err)
		}
	}
	for i := 1; i < len(t.Nodes); i++ {
		n := t.Nodes[i]
		if err := ctrl[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", n.Server.Port(), t.cluster.busPort[n]).Err(); err != nil {
			return fmt.Errorf("CLUSTER MEET %s: %w", t.Nodes[i].Addr, err)
		}
	}
	// A replica can only follow a master it knows.
	if err := t.waitCluster(ctx, "every node to know the others", func(ctx context.Context) (string, bool) {
		known := 0
		for _, c := range ctrl {
			if v, err := c.ClusterInfo(ctx).Result(); err == nil && infoField(v, "cluster_known_nodes") == strconv.Itoa(len(ctrl)) {
				known++
			}
		}
		return fmt.Sprintf("%d/%d nodes know all %d", known, len(ctrl), len(ctrl)), known == len(ctrl)
	}); err != nil {
		return err
	}
	for i := m; i < len(t.Nodes); i++ {
		master := t.cluster.shardOf[t.Nodes[i]]
		if err := ctrl[i].Do(ctx, "CLUSTER", "REPLICATE", ids[master]).Err(); err != nil {
			return fmt.Errorf("CLUSTER REPLICATE on %s (%s): %w", t.Nodes[i].Name, t.Nodes[i].Addr, err)
		}
	}
	return t.waitCluster(ctx, "cluster_state:ok and replicas in sync", func(ctx context.Context) (string, bool) {
		return clusterReadyStatus(ctx, ctrl, m, len(ctrl)-m)
	})
}

// clusterReadyStatus reports whether every node says cluster_state:ok with
// all slots served, every replica's link is up, and every node sees every
// replica attached, so that a client's first slot map is the final one.
func clusterReadyStatus(ctx context.Context, ctrl []*redis.Client, masters, replicas int) (string, bool) {
	ok, synced, seen := 0, 0, 0
	for i, c := range ctrl {
		if v, err := c.ClusterInfo(ctx).Result(); err == nil && infoField(v, "cluster_state") == "ok" &&
			infoField(v, "cluster_slots_ok") == strconv.Itoa(clusterSlots) {
			ok++
		}
		if i >= masters {
			if v, err := c.Info(ctx, "replication").Result(); err == nil && infoField(v, "master_link_status") == "up" {
				synced++
			}
		}
		if lines, err := readClusterNodes(ctx, c); err == nil {
			n := 0
			for _, l := range lines {
				if l.has("slave") && l.masterID != "-" {
					n++
				}
			}
			if n == replicas {
				seen++
			}
		}
	}
	all := len(ctrl)
	status := fmt.Sprintf("%d/%d nodes cluster_state:ok, %d/%d replicas in sync, %d/%d nodes see every replica",
		ok, all, synced, replicas, seen, all)
	return status, ok == all && synced == replicas && seen == all
}

// waitCluster polls check until it is done, logging its status when it
// changes, for at most the topology's ready timeout.
func (t *Topology) waitCluster(ctx context.Context, what string, check func(context.Context) (string, bool)) error {
	timeout := t.readyTimeout()
	start, last := time.Now(), ""
	for {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		status, done := check(qctx)
		cancel()
		if done {
			t.logf("cluster ready: %s (after %s)", status, time.Since(start).Round(time.Millisecond))
			return nil
		}
		if status != last {
			t.logf("waiting for %s: %s…", what, status)
			last = status
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("cluster %s not ready after %s waiting for %s: %s", t.Spec, timeout, what, status)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("wait for %s (%s): %w", what, status, err)
		}
	}
}

// upClusterExternal reaches a cluster someone else runs: the first --redis
// URL that answers CLUSTER NODES names the others. Every node is reached with
// that URL's user, password and TLS settings.
func (t *Topology) upClusterExternal(ctx context.Context) error {
	if t.opts.ClockShim {
		return badRequest("the clock shim needs local servers; it cannot move the clock of a --redis URL")
	}
	t.Provider = ProviderExternal
	var errs []error
	for _, u := range t.opts.URLs {
		o, err := ParseRedisURL(u)
		if err != nil {
			return err
		}
		if o.DB != 0 {
			return badRequest("--redis %s: a Redis Cluster has only database 0", RedactURL(u))
		}
		err = t.discover(ctx, o)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", o.Addr, err))
	}
	return fmt.Errorf("no --redis URL answered as a cluster node: %w", errors.Join(errs...))
}

// discover reads the cluster's nodes from the node at o: masters that serve
// slots, in slot order, then their replicas, shard by shard.
func (t *Topology) discover(ctx context.Context, o *redis.Options) error {
	ao := *o
	ao.MaxRetries, ao.DialTimeout, ao.ReadTimeout, ao.WriteTimeout = -1, time.Second, 2*time.Second, 2*time.Second
	ao.ContextTimeoutEnabled, ao.DisableIdentity, ao.PoolSize = true, true, 2
	c := redis.NewClient(&ao)
	defer c.Close()
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	lines, err := readClusterNodes(qctx, c)
	if err != nil {
		return err
	}
	var masters []clusterLine
	for _, l := range lines {
		if l.has("master") && !l.has("fail") && len(l.slots) > 0 {
			masters = append(masters, l)
		}
	}
	slices.SortFunc(masters, func(a, b clusterLine) int { return a.slots[0][0] - b.slots[0][0] })
	if len(masters) == 0 {
		return errors.New("CLUSTER NODES lists no master serving slots")
	}
	if t.Spec.Masters > 0 && len(masters) != t.Spec.Masters {
		return badRequest("topology %s, but the cluster has %d masters serving slots", t.Spec, len(masters))
	}
	info := &clusterInfo{shardOf: map[*Node]int{}}
	node := func(l clusterLine, name, role string, shard int) {
		no := *o
		no.Addr = l.addr
		n := &Node{Name: name, Role: role, Addr: l.addr, opts: &no}
		t.Nodes = append(t.Nodes, n)
		info.shardOf[n] = shard
	}
	for s, l := range masters {
		info.firstSlot = append(info.firstSlot, l.slots[0][0])
		node(l, fmt.Sprintf("master-%d", s), RoleMaster, s)
	}
	minReplicas := -1
	for s, ml := range masters {
		k := 0
		for _, l := range lines {
			if l.masterID == ml.id && !l.has("fail") {
				node(l, fmt.Sprintf("replica-%d-%d", s, k), RoleReplica, s)
				k++
			}
		}
		if minReplicas < 0 || k < minReplicas {
			minReplicas = k
		}
	}
	t.Spec.Masters, t.Spec.Replicas = len(masters), minReplicas
	t.cluster = info
	return nil
}

// clusterLine is one line of CLUSTER NODES.
type clusterLine struct {
	id, addr, masterID string
	flags              []string
	epoch              int64
	slots              [][2]int
}

func (l clusterLine) has(flag string) bool { return slices.Contains(l.flags, flag) }

// serves reports whether the node claims slot.
func (l clusterLine) serves(slot int) bool {
	for _, r := range l.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// readClusterNodes asks one node for its view of the cluster.
func readClusterNodes(ctx context.Context, c *redis.Client) ([]clusterLine, error) {
	raw, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER NODES on %s: %w", c.Options().Addr, err)
	}
	return parseClusterNodes(raw)
}

// parseClusterNodes parses a CLUSTER NODES reply: id ip:port@cport[,host]
// flags master ping pong epoch link slot...
func parseClusterNodes(raw string) ([]clusterLine, error) {
	var out []clusterLine
	for _, line := range strings.Split(strings.TrimSpace(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			if len(f) > 0 {
				return nil, fmt.Errorf("CLUSTER NODES line %q: want at least 8 fields", line)
			}
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		addr, _, _ = strings.Cut(addr, ",")
		epoch, err := strconv.ParseInt(f[6], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER NODES line %q: bad config epoch %q", line, f[6])
		}
		l := clusterLine{id: f[0], addr: addr, flags: strings.Split(f[2], ","), masterID: f[3], epoch: epoch}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue // a slot being migrated or imported
			}
			lo, hi, isRange := strings.Cut(s, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("CLUSTER NODES line %q: bad slot %q", line, s)
			}
			l.slots = append(l.slots, [2]int{a, b})
		}
		out = append(out, l)
	}
	return out, nil
}

// ClusterClient returns a go-redis ClusterClient over the cluster's nodes,
// that Close will close, or nil for a topology that is not a cluster. It
// follows MOVED and ASK (up to 3 redirects) and rereads the slot map every
// 0.5 s, so it finds a promoted replica; through a proxied topology it
// dials each node's proxy. It never sends a command twice: a network error
// after the command may have been written is handed back as a SentError,
// which go-redis does not retry (a retried SET NX would find its own key and
// be miscounted as contended); dial errors, which mean nothing was sent, are
// still retried on the node the slot map names.
func (t *Topology) ClusterClient(co ClientOptions) *redis.ClusterClient {
	if t.cluster == nil {
		return nil
	}
	base := t.Nodes[0].opts
	o := &redis.ClusterOptions{
		Addrs:                      t.Addrs(),
		Username:                   base.Username,
		Password:                   base.Password,
		TLSConfig:                  base.TLSConfig,
		MaxRetries:                 -1,
		MaxRedirects:               clusterRedirects,
		ContextTimeoutEnabled:      true,
		DisableIdentity:            true,
		DialTimeout:                time.Second,
		ReadBufferSize:             connBufferSize,
		WriteBufferSize:            connBufferSize,
		MaintNotificationsConfig:   &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		ClusterStateReloadInterval: clusterReload,
		NewClient: func(opt *redis.Options) *redis.Client {
			c := redis.NewClient(opt)
			c.AddHook(noReplayHook{})
			return c
		},
	}
	if co.PoolSize > 0 {
		o.PoolSize = co.PoolSize
	}
	if t.opts.Proxy {
		o.Dialer = t.dialViaProxy
	}
	c := redis.NewClusterClient(o)
	t.trackCloser(c)
	return c
}

// SentError is a network error on a command that may have reached the
// server before the connection failed (a reset, an EOF, a read timeout).
// It has a Cause but deliberately no Unwrap: go-redis's ClusterClient
// retries errors it recognises as network errors, and a command that may
// have run must not run again.
type SentError struct{ err error }

// Error is the cause's message.
func (e *SentError) Error() string { return e.err.Error() }

// Cause is the network error itself, for classifying it.
func (e *SentError) Cause() error { return e.err }

// noReplayHook wraps, on each cluster node's client, the errors after which
// a command may have been executed into a SentError.
type noReplayHook struct{}

func (noReplayHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (noReplayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return unreplayable(next(ctx, cmd))
	}
}

// ProcessPipelineHook does for each command of a pipeline what ProcessHook
// does for one: the cluster client follows an ASK redirect with a pipeline
// (ASKING and the command), and retries a pipeline's commands by their own
// errors.
func (noReplayHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if e := c.Err(); e != nil {
				if w := unreplayable(e); w != e {
					c.SetErr(w)
				}
			}
		}
		return unreplayable(err)
	}
}

// unreplayable wraps err into a SentError unless it is nil, a server reply
// (the server decided), a context error or closed client (go-redis does not
// retry those), or a dial or pool error (nothing was sent).
func unreplayable(err error) error {
	if err == nil || errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return err
	}
	return &SentError{err: err}
}

// liveNodes are the data nodes that may answer: external ones, and local
// ones whose process runs.
func (t *Topology) liveNodes() []*Node {
	var out []*Node
	for _, n := range t.DataNodes() {
		if n.Server == nil || n.Server.PID() != 0 {
			out = append(out, n)
		}
	}
	return out
}

// nodeByAddr finds a data node by host:port.
func (t *Topology) nodeByAddr(addr string) *Node {
	for _, n := range t.DataNodes() {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// clusterViews reads CLUSTER NODES from every live node (a paused node's
// answer is waited for 300 ms at most) and returns every line.
func (t *Topology) clusterViews(ctx context.Context) []clusterLine {
	var mu sync.Mutex
	var all []clusterLine
	var wg sync.WaitGroup
	for _, n := range t.liveNodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(t.adminOptionsFor(n))
			defer c.Close()
			qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			lines, err := readClusterNodes(qctx, c)
			if err == nil {
				mu.Lock()
				all = append(all, lines...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return all
}

// adminOptionsFor are adminOptions for n, direct to the node (never through
// its proxy), with the credentials of an external node.
func (t *Topology) adminOptionsFor(n *Node) *redis.Options {
	o := adminOptions(n.Addr)
	o.Username, o.Password, o.TLSConfig = n.opts.Username, n.opts.Password, n.opts.TLSConfig
	return o
}

// ShardMaster is the node that serves shard s's slots now: among the live
// nodes' views, the master claiming the shard's first slot with the highest
// config epoch (right after a failover some nodes still name the old one).
func (t *Topology) ShardMaster(ctx context.Context, s int) (*Node, error) {
	if err := t.checkShard(s); err != nil {
		return nil, err
	}
	return t.shardMasterIn(t.clusterViews(ctx), s)
}

func (t *Topology) checkShard(s int) error {
	if t.cluster == nil || s < 0 || s >= len(t.cluster.firstSlot) {
		return fmt.Errorf("topology %s has no shard %d", t.Spec, s)
	}
	return nil
}

// shardMasterIn is ShardMaster from views already read.
func (t *Topology) shardMasterIn(views []clusterLine, s int) (*Node, error) {
	slot := t.cluster.firstSlot[s]
	best, bestEpoch := "", int64(-1)
	for _, l := range views {
		if l.has("master") && !l.has("fail") && l.serves(slot) && l.epoch > bestEpoch {
			best, bestEpoch = l.addr, l.epoch
		}
	}
	if n := t.nodeByAddr(best); n != nil {
		return n, nil
	}
	if best == "" {
		return nil, fmt.Errorf("no live node names a master for shard %d (slot %d)", s, slot)
	}
	return nil, fmt.Errorf("shard %d is served by %s, which is none of the topology's nodes", s, best)
}

// ShardReplicas are the live replicas of shard s's current master, as the
// live nodes see them, from one reading of their views.
func (t *Topology) ShardReplicas(ctx context.Context, s int) (master *Node, replicas []*Node, err error) {
	if err := t.checkShard(s); err != nil {
		return nil, nil, err
	}
	views := t.clusterViews(ctx)
	if master, err = t.shardMasterIn(views, s); err != nil {
		return nil, nil, err
	}
	return master, t.replicasIn(views, master), nil
}

// replicasIn are master's live replicas as views name them, in node order.
func (t *Topology) replicasIn(views []clusterLine, master *Node) []*Node {
	id := ""
	for _, l := range views {
		if l.addr == master.Addr && l.has("myself") {
			id = l.id
		}
	}
	var replicas []*Node
	seen := map[*Node]bool{}
	for _, l := range views {
		n := t.nodeByAddr(l.addr)
		if id != "" && l.masterID == id && l.has("slave") && !l.has("fail") && n != nil && !seen[n] &&
			(n.Server == nil || n.Server.PID() != 0) {
			seen[n] = true
			replicas = append(replicas, n)
		}
	}
	slices.SortFunc(replicas, func(a, b *Node) int { return slices.Index(t.Nodes, a) - slices.Index(t.Nodes, b) })
	return replicas
}

// ShardReplica is the first live replica of shard s (see ShardReplicas).
func (t *Topology) ShardReplica(ctx context.Context, s int) (*Node, error) {
	_, rs, err := t.ShardReplicas(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("shard %d has no live replica", s)
	}
	return rs[0], nil
}

// MasterIndexes are the DataNodes indexes of the nodes that are masters
// now: for a cluster the current master of each shard (in shard order),
// for the others every node with RoleMaster or RolePrimary as started.
func (t *Topology) MasterIndexes(ctx context.Context) ([]int, error) {
	data := t.DataNodes()
	var out []int
	if t.cluster == nil {
		for i, n := range data {
			if n.Role == RoleMaster || n.Role == RolePrimary {
				out = append(out, i)
			}
		}
		return out, nil
	}
	for s := range t.cluster.firstSlot {
		m, err := t.ShardMaster(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, slices.Index(data, m))
	}
	return out, nil
}

// Shard is the cluster shard node n belonged to when the topology came up,
// or -1 outside a cluster.
func (t *Topology) Shard(n *Node) int {
	if t.cluster == nil {
		return -1
	}
	if s, ok := t.cluster.shardOf[n]; ok {
		return s
	}
	return -1
}

// Promotion is a replica that named itself master after a fault.
type Promotion struct {
	// Node is "name (host:port)" of the promoted replica.
	Node string
	// After is how long after the fault was applied it was first seen.
	After time.Duration
}

// promotionWatch returns, for a fault that can make a cluster shard fail
// over (FaultInfo.Promotes: one that stops a master, or promotes its target
// replica), the replicas to watch; nil when there are none.
func (t *Topology) promotionWatch(ctx context.Context, f FaultSpec, n *Node) []*Node {
	if t.cluster == nil {
		return nil
	}
	kind, _ := LookupFault(f.Kind)
	switch kind.Info().Promotes {
	case promotesTarget:
		return []*Node{n}
	case promotesNone:
		return nil
	}
	s := t.Shard(n)
	if s < 0 {
		return nil
	}
	// One reading of the views: the fault's target was resolved just
	// before, and every sweep delays the fault (a paused node costs each
	// one its timeout).
	views := t.clusterViews(ctx)
	if master, err := t.shardMasterIn(views, s); err != nil || master != n {
		return nil
	}
	return t.replicasIn(views, n)
}

// watchPromotion polls the replicas' own CLUSTER NODES views every 10 ms
// until one calls itself master, for at most limit or until ctx ends. The
// channel gets one value: the promotion, or nil.
func (t *Topology) watchPromotion(ctx context.Context, replicas []*Node, since time.Time, limit time.Duration) <-chan *Promotion {
	out := make(chan *Promotion, 1)
	if len(replicas) == 0 {
		out <- nil
		return out
	}
	go func() {
		clients := make([]*redis.Client, len(replicas))
		for i, n := range replicas {
			clients[i] = redis.NewClient(t.adminOptionsFor(n))
		}
		defer func() {
			for _, c := range clients {
				_ = c.Close()
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		for {
			for i, c := range clients {
				qctx, qcancel := context.WithTimeout(ctx, 300*time.Millisecond)
				lines, err := readClusterNodes(qctx, c)
				qcancel()
				if err != nil {
					continue
				}
				for _, l := range lines {
					if l.has("myself") && l.has("master") {
						out <- &Promotion{Node: replicas[i].Name + " (" + replicas[i].Addr + ")", After: time.Since(since)}
						return
					}
				}
			}
			if sleepCtx(ctx, 10*time.Millisecond) != nil {
				out <- nil
				return
			}
		}
	}()
	return out
}

// clusterCandidates are the nodes a master=S or shard=S fault may hit: every
// node of the shard, since a failover moves the roles; msg says why the
// fault does not fit.
func (t *Topology) clusterCandidates(f FaultSpec) (candidates []*Node, msg string) {
	if t.cluster == nil {
		return nil, fmt.Sprintf("%s=%d needs --topology cluster", f.Target, f.Shard)
	}
	if f.Shard < 0 || f.Shard >= len(t.cluster.firstSlot) {
		return nil, fmt.Sprintf("shard %d is out of range; shards are 0..%d", f.Shard, len(t.cluster.firstSlot)-1)
	}
	for _, n := range t.DataNodes() {
		if t.cluster.shardOf[n] == f.Shard {
			candidates = append(candidates, n)
		}
	}
	if f.Target == TargetShard && len(candidates) < 2 {
		return nil, fmt.Sprintf("shard %d has no replica (cluster:M,0)", f.Shard)
	}
	return candidates, ""
}
