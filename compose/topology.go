package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Spec is a parsed --topology value.
type Spec struct {
	// Kind is the shape.
	Kind Kind
	// Masters is the number of independent masters (1 for single and
	// replicated; 0 for "redlock" without a count, which takes the count of
	// --redis URLs or 5). For cluster it is the number of shards (0 for
	// "cluster" without a count: discovered from --redis URLs).
	Masters int
	// Replicas is the number of replicas per cluster shard; 0 for the others.
	Replicas int
}

// Node roles. A data node's Role is the one it had when the topology came up;
// after a failover, ask Topology.Primary.
const (
	// RoleMaster is an independent master of single or redlock, or a
	// cluster shard's master as the topology came up (ask ShardMaster now).
	RoleMaster = "master"
	// RolePrimary is the replicated topology's primary.
	RolePrimary = "primary"
	// RoleReplica is the replicated topology's replica, or a cluster replica.
	RoleReplica = "replica"
	// RoleSentinel is a Redis Sentinel: it holds no data and must never be
	// used for the lock.
	RoleSentinel = "sentinel"
)

// Node is one server of a topology.
type Node struct {
	// Name is the node's role and index, e.g. "master-0", "node-1", "sentinel-2".
	Name string
	// Role is RoleMaster, RolePrimary, RoleReplica or RoleSentinel.
	Role string
	// Addr is the server's own host:port; it never carries a password.
	Addr string
	// ProxyAddr is the address of the in-process proxy in front of the node
	// (UpOptions.Proxy), which the topology's clients connect to; empty when
	// the node is reached directly.
	ProxyAddr string
	// Server is the local process, or nil for an external server or a
	// docker container.
	Server *Server
	opts   *redis.Options
	proxy  *nodeProxy
	clock  *clockState
	ctr    *dockerNode // the docker provider's container
	// payload is what the node's backend keeps of it (an etcd member, the
	// PostgreSQL server); nil for Redis.
	payload nodePayload
}

// Topology is a set of Redis servers brought up (or reached) for a run.
type Topology struct {
	// Spec is what was asked for, with the master count resolved.
	Spec Spec
	// Provider is "local", "docker" or "external".
	Provider string
	// Nodes are the servers: data nodes first, then sentinels.
	Nodes []*Node

	opts UpOptions
	toxi *toxiproxy.ApiServer
	// docker is the docker provider's engine client and network.
	docker *dockerRun
	// sentinels are the clients Primary asks, one per sentinel node.
	sentinels []*redis.SentinelClient
	// cluster knows each cluster node's id and shard (cluster topology only).
	cluster *clusterInfo
	// backendState is what the topology's backend keeps of the whole
	// topology (etcd's admin client), nil when it keeps nothing; each
	// backend reads its own through an accessor (etcdState).
	backendState any

	mu      sync.Mutex  // guards the fields below
	clients []io.Closer // the clients handed out
	dir     string      // work dir: the clock shim and clock files
	shim    string      // path of the built clock shim
	// cleanups are run by Close, last added first (the docker provider's
	// container removal).
	cleanups []func() error
}

// UpOptions configures Up.
type UpOptions struct {
	// Provider is ProviderLocal (the default when empty) or ProviderDocker;
	// see ParseProvider. URLs imply ProviderExternal, which may also be
	// named here; they cannot be combined with ProviderDocker.
	Provider string
	// Image is the container image of the docker provider; empty means
	// DefaultImage.
	Image string
	// URLs selects the external provider: one redis:// or rediss:// URL a master.
	URLs []string
	// Persistence of local servers and docker containers, also after a
	// restart fault.
	Persistence Persistence
	// ServerEnv is extra environment for local servers.
	ServerEnv []string
	// Proxy puts an in-process TCP proxy in front of every data node, so that
	// latency and partition faults can act between the clients and the node.
	Proxy bool
	// ClockShim starts local data nodes with the LD_PRELOAD clock shim, so that
	// clock-jump and clock-speed faults can move their wall clocks. It needs a
	// C compiler (see BuildClockShim).
	ClockShim bool
	// PeerProxy puts a proxy lockbench controls on the links between the
	// servers of a kind that has them (KindInfo.PeerProxy), so that a node
	// can be cut from its peers while its clients still reach it.
	PeerProxy bool
	// RestartDelay is how long a restart fault keeps the node down.
	RestartDelay time.Duration
	// Log, when set, receives progress lines while Up waits (the replicated
	// topology can take seconds until its sentinels agree).
	Log io.Writer
	// ReadyTimeout bounds the wait for the replicated topology's sentinels;
	// 0 means 30 s.
	ReadyTimeout time.Duration
}

// Up brings the topology up: local redis-server processes, docker
// containers (UpOptions.Provider), or the given URLs. On error everything it
// started is stopped again.
func Up(ctx context.Context, spec Spec, opts UpOptions) (*Topology, error) {
	provider, err := resolveProvider(opts)
	if err != nil {
		return nil, err
	}
	if provider == ProviderLocal {
		removeStaleDirs(opts.Log)
	}
	if err := spec.CheckProvider(provider); err != nil {
		return nil, err
	}
	t := &Topology{Spec: spec, Provider: ProviderLocal, opts: opts}
	err = spec.Shape().up(ctx, t, provider)
	if err == nil && opts.Proxy {
		err = t.startProxies()
	}
	if err != nil {
		_ = t.Close()
		return nil, err
	}
	return t, nil
}

// upMastersFrom brings up independent masters (single, redlock:N) from
// provider.
func (t *Topology) upMastersFrom(ctx context.Context, provider string) error {
	switch provider {
	case ProviderExternal:
		return t.upExternal()
	case ProviderDocker:
		return t.upDocker(ctx, t.upDockerMasters)
	}
	return t.upMasters(ctx)
}

func (t *Topology) upMasters(ctx context.Context) error {
	if t.Spec.Masters == 0 {
		t.Spec.Masters = 5
	}
	for i := range t.Spec.Masters {
		n, err := t.startDataNode(ctx, i, fmt.Sprintf("master-%d", i), RoleMaster, nil)
		if err != nil {
			return fmt.Errorf("start master %d of %s: %w", i, t.Spec, err)
		}
		t.Nodes = append(t.Nodes, n)
	}
	return nil
}

// startDataNode starts local data node i with the topology's persistence and,
// when asked for, the clock shim.
func (t *Topology) startDataNode(ctx context.Context, i int, name, role string, args []string) (*Node, error) {
	env := append([]string(nil), t.opts.ServerEnv...)
	var clock *clockState
	if t.opts.ClockShim {
		var err error
		if clock, env, err = t.clockFor(i, env); err != nil {
			return nil, err
		}
	}
	srv, err := StartServer(ctx, ServerOptions{Persistence: t.opts.Persistence, Env: env, Args: args})
	if err != nil {
		return nil, err
	}
	return &Node{Name: name, Role: role, Addr: srv.Addr(), Server: srv, opts: &redis.Options{Addr: srv.Addr()}, clock: clock}, nil
}

// workDir is the topology's own temporary directory, made on first use.
func (t *Topology) workDir() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == "" {
		dir, err := makeTempDir("topology")
		if err != nil {
			return "", fmt.Errorf("topology work dir: %w", err)
		}
		t.dir = dir
	}
	return t.dir, nil
}

func (t *Topology) upExternal() error {
	urls := t.opts.URLs
	if t.opts.ClockShim {
		return badRequest("the clock shim needs local servers; it cannot move the clock of a --redis URL")
	}
	if t.Spec.Masters == 0 {
		t.Spec.Masters = len(urls)
	}
	if len(urls) != t.Spec.Masters {
		return badRequest("needs %d --redis URLs, one per master, got %d", t.Spec.Masters, len(urls))
	}
	t.Provider = "external"
	for i, u := range urls {
		o, err := ParseRedisURL(u)
		if err != nil {
			return err
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("master-%d", i), Role: RoleMaster, Addr: o.Addr, opts: o})
	}
	return nil
}

// ParseRedisURL parses redis://[user:password@]host:port[/db] or rediss://…;
// its errors never repeat the password.
func ParseRedisURL(raw string) (*redis.Options, error) {
	bad := func(why string) error {
		return badRequest("--redis %q: %s; want redis://host:port[/db]", RedactURL(raw), why)
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, bad(redactErr(err, raw))
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, bad("no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, bad(fmt.Sprintf("port %s is not from 1 to 65535", p))
		}
	}
	if o.DB < 0 {
		return nil, bad(fmt.Sprintf("database %d: want 0 or more", o.DB))
	}
	return o, nil
}

func redactErr(err error, raw string) string {
	msg := err.Error()
	// url.Parse's errors quote the URL again: once in a line is enough.
	if _, after, ok := strings.Cut(msg, `parse "`+raw+`": `); ok {
		msg = after
	}
	if p := urlPassword(raw); p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// urlPassword finds the password of scheme://user:password@host even in a URL
// that does not parse, so that no error message can carry it.
func urlPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest = raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

// RedactURL hides the password of a Redis URL.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if at := strings.LastIndex(raw, "@"); at >= 0 {
			return "redacted@" + raw[at+1:]
		}
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// connBufferSize sizes each connection's read and write buffers. Lock
// commands and their replies are tens of bytes, and go-redis's 32 KiB
// defaults would cost 640 MB for the pool of ten thousand workers (a larger
// reply, INFO say, is still read whole, in several reads).
const connBufferSize = 4 << 10

// ClientOptions are the options every lockbench client uses.
type ClientOptions struct {
	// PoolSize is the connection pool size; set it to at least the concurrency.
	PoolSize int
}

// Client returns a new client for node i that Close will close. Data nodes
// come first in Nodes, so i is also the DataNodes index. Automatic retries
// are off: a retried SET NX after a timeout would find its own key and be
// miscounted as contended. A proxied node is reached through its proxy.
func (t *Topology) Client(i int, co ClientOptions) *redis.Client {
	o := *t.Nodes[i].opts
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true
	o.DialTimeout = time.Second
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	o.ReadBufferSize, o.WriteBufferSize = connBufferSize, connBufferSize
	if co.PoolSize > 0 {
		o.PoolSize = co.PoolSize
		o.MaxActiveConns = 0
	}
	return t.track(redis.NewClient(&o))
}

func (t *Topology) track(c *redis.Client) *redis.Client {
	t.trackCloser(c)
	return c
}

// trackCloser has Close close c with the clients, before any server stops.
func (t *Topology) trackCloser(c io.Closer) {
	t.mu.Lock()
	t.clients = append(t.clients, c)
	t.mu.Unlock()
}

// Clients returns one new client per data node, in DataNodes order (sentinels
// hold no data and get none).
func (t *Topology) Clients(co ClientOptions) []*redis.Client {
	data := t.DataNodes()
	out := make([]*redis.Client, len(data))
	for i := range data {
		out[i] = t.Client(i, co)
	}
	return out
}

// FailoverClient returns a go-redis sentinel failover client for the current
// primary, with the settings of Client, that Close will close. It follows a
// failover by itself; through a proxied topology it reaches the data nodes via
// their proxies while the sentinels stay direct. A topology without sentinels
// has no failover: for a single data node FailoverClient is Client(0), and
// for more (redlock) it is nil.
func (t *Topology) FailoverClient(co ClientOptions) *redis.Client {
	if len(t.sentinels) == 0 {
		if len(t.DataNodes()) == 1 {
			return t.Client(0, co)
		}
		return nil
	}
	fo := &redis.FailoverOptions{
		MasterName:            MasterName,
		SentinelAddrs:         t.SentinelAddrs(),
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		DialTimeout:           time.Second,
		PoolSize:              co.PoolSize,
		ReadBufferSize:        connBufferSize,
		WriteBufferSize:       connBufferSize,
	}
	if t.opts.Proxy || t.replPeers() != nil {
		fo.Dialer = t.dialViaProxy
	}
	return t.track(redis.NewFailoverClient(fo))
}

// dialViaProxy dials the address a client of a data node dials (its proxy
// when it has one, the node otherwise) for a data node the sentinels name
// (by its address or its peer proxy's), and anything else (the sentinels)
// directly: faults on the client proxy reach failover clients, and a cut
// of the peer proxy does not.
func (t *Topology) dialViaProxy(ctx context.Context, network, addr string) (net.Conn, error) {
	if n := t.dataNodeAt(addr); n != nil {
		addr = n.ClientAddr()
	}
	d := net.Dialer{Timeout: time.Second, KeepAlive: 5 * time.Minute}
	return d.DialContext(ctx, network, addr)
}

// DataNodes are the nodes that hold data (masters, primary and replica), in
// order; fault targets node=N index into them. Sentinels are left out: the
// lock must never talk to them.
func (t *Topology) DataNodes() []*Node {
	out := make([]*Node, 0, len(t.Nodes))
	for _, n := range t.Nodes {
		if n.Role != RoleSentinel {
			out = append(out, n)
		}
	}
	return out
}

// Addrs lists the data nodes' host:port, in the order of Clients.
func (t *Topology) Addrs() []string {
	data := t.DataNodes()
	out := make([]string, len(data))
	for i, n := range data {
		out[i] = n.Addr
	}
	return out
}

// ClientAddrs lists the host:port the lock's clients dial, in the order of
// Addrs: each data node's proxy when the topology has proxies (so latency
// and partition faults act on the lock's path), the node itself otherwise.
func (t *Topology) ClientAddrs() []string {
	data := t.DataNodes()
	out := make([]string, len(data))
	for i, n := range data {
		out[i] = n.ClientAddr()
	}
	return out
}

// ClientAddr is the host:port a client of the lock dials for n: its proxy
// when it has one, the node itself otherwise.
func (n *Node) ClientAddr() string {
	if n.ProxyAddr != "" {
		return n.ProxyAddr
	}
	return n.Addr
}

// viaProxy is raw, a URL of node n, pointed at n's proxy when it has one;
// the scheme, credentials and path stay. The error names raw redacted.
func (n *Node) viaProxy(raw string) (string, error) {
	if n.ProxyAddr == "" {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("URL %s of %s: %w", RedactURL(raw), n.Name, err)
	}
	u.Host = n.ProxyAddr
	return u.String(), nil
}

// SentinelAddrs lists the sentinels' host:port (empty without sentinels).
func (t *Topology) SentinelAddrs() []string {
	var out []string
	for _, n := range t.Nodes {
		if n.Role == RoleSentinel {
			out = append(out, n.Addr)
		}
	}
	return out
}

// Close closes every client, stops the proxies and every process or
// container the topology started, and removes its work dir. Stop a fault
// Schedule first.
func (t *Topology) Close() error {
	var errs []error
	t.mu.Lock()
	clients := t.clients
	t.clients = nil
	dir := t.dir
	t.dir = ""
	cleanups := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	for _, c := range t.sentinels {
		_ = c.Close()
	}
	t.sentinels = nil
	for _, n := range t.Nodes {
		if n.proxy != nil {
			n.proxy.close()
		}
	}
	// Sentinels first, so none of them starts a failover while the data
	// nodes go down.
	for _, role := range []bool{true, false} {
		for _, n := range t.Nodes {
			if n.Server != nil && (n.Role == RoleSentinel) == role {
				if err := n.Server.Stop(); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for i := len(cleanups) - 1; i >= 0; i-- {
		if err := cleanups[i](); err != nil {
			errs = append(errs, err)
		}
	}
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove topology work dir: %w", err))
		}
	}
	return errors.Join(errs...)
}
