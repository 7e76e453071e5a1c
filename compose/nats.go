package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// NatsServerModule is the module lockbench builds its NATS server from:
// Debian's nats-server (2.9) predates per-message TTLs, which the nats-kv
// lock's leases are, so the server comes from the Go module proxy.
const NatsServerModule = "github.com/nats-io/nats-server/v2"

// NatsServerVersion is the version `make nats` builds.
const NatsServerVersion = "v2.15.3"

// natsMinVersion is the first server with per-message TTLs (AllowMsgTTL,
// SubjectDeleteMarkerTTL): 2.11.
var natsMinVersion = [3]int{2, 11, 0}

// ErrNoNatsServer is returned when no nats-server of 2.11 or later is found.
var ErrNoNatsServer = errors.New("nats-server 2.11 or later not found on PATH or in " + natsCacheHint +
	"; build it with `make nats` (GOBIN=" + natsCacheHint + " go install " + NatsServerModule + "@" + NatsServerVersion +
	") or pass --nats nats://host:port")

const natsCacheHint = "$XDG_CACHE_HOME/lockbench/bin (~/.cache/lockbench/bin)"

// NatsSizes returns the server counts nats:N accepts: one server, or a
// JetStream cluster of three (a KV bucket's stream keeps three replicas).
func NatsSizes() []int { return []int{1, 3} }

// NatsCacheDir is where `make nats` installs the server lockbench starts:
// lockbench/bin under the user's cache directory.
func NatsCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("nats-server's cache directory: %w", err)
	}
	return filepath.Join(dir, "lockbench", "bin"), nil
}

// NatsServerBinary finds a nats-server of 2.11 or later: on PATH first,
// then in NatsCacheDir. It returns the path and the version it reports.
func NatsServerBinary() (path, version string, err error) {
	var candidates []string
	if p, err := exec.LookPath("nats-server"); err == nil {
		candidates = append(candidates, p)
	}
	if dir, err := NatsCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "nats-server"))
	}
	var tooOld []string
	for _, p := range candidates {
		v, err := natsVersionOf(p)
		if err != nil {
			continue
		}
		if natsVersionAtLeast(v, natsMinVersion) {
			return p, v, nil
		}
		tooOld = append(tooOld, p+" is "+v)
	}
	if len(tooOld) > 0 {
		return "", "", fmt.Errorf("%w (%s)", ErrNoNatsServer, strings.Join(tooOld, ", "))
	}
	return "", "", ErrNoNatsServer
}

// natsVersionOf runs `nats-server --version` ("nats-server: v2.15.3").
func natsVersionOf(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", err
	}
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok {
		return "", fmt.Errorf("%s --version: %q", bin, strings.TrimSpace(string(out)))
	}
	return v, nil
}

// natsVersionAtLeast compares "v2.15.3" (a pre-release suffix ignored) with
// min; an unreadable version is not at least anything.
func natsVersionAtLeast(v string, min [3]int) bool {
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "-")
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		if n != min[i] {
			return n > min[i]
		}
	}
	return true
}

// NatsOptions configures a local NATS deployment.
type NatsOptions struct {
	// Servers is 1, or 3 for a JetStream cluster.
	Servers int
	// ReadyTimeout bounds the wait for JetStream to serve (a cluster elects
	// its meta leader first); 0 means 30 s.
	ReadyTimeout time.Duration
	// PeerProxy puts a proxy on each direction of each route between two
	// servers of a cluster (the isolate fault), as ZkOptions.PeerProxy
	// does between ZooKeeper members.
	PeerProxy bool
}

// NatsCluster is one NATS server with JetStream, or a cluster of three, on
// free loopback ports, each with its own store directory.
type NatsCluster struct {
	version   string
	timeout   time.Duration
	peerProxy bool
	servers   []*NatsServer
	// links are the proxies on the routes (NatsOptions.PeerProxy), nil
	// without them.
	links *linkProxies
}

// NatsServer is one server of a local NATS deployment.
type NatsServer struct {
	// Name is the server's name (n1, n2, …), which JetStream reports as a
	// stream's or the meta group's leader.
	Name string

	port, monitorPort int
	localProc
}

// Addr is host:port of the server's client port.
func (s *NatsServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the client URL of the server.
func (s *NatsServer) URL() string { return "nats://" + s.Addr() }

// MonitorURL is the base URL of the server's HTTP monitoring.
func (s *NatsServer) MonitorURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.monitorPort) }

// Restart starts the server again after Kill, from its store: it rejoins
// the cluster and catches its streams up.
func (s *NatsServer) Restart(ctx context.Context) error { return s.start(ctx, 30*time.Second) }

// StartNatsCluster starts opts.Servers servers with JetStream on free
// loopback ports and waits until JetStream serves (a cluster's meta group
// has a leader every server knows). On error nothing is left running or
// on disk.
func StartNatsCluster(ctx context.Context, opts NatsOptions) (*NatsCluster, error) {
	if opts.Servers != 1 && opts.Servers != 3 {
		return nil, badRequest("nats:%d: want %s servers", opts.Servers, joinInts(NatsSizes()))
	}
	bin, version, err := NatsServerBinary()
	if err != nil {
		return nil, err
	}
	c := &NatsCluster{version: version, timeout: opts.ReadyTimeout, peerProxy: opts.PeerProxy}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	// A port found free can be taken before the server binds it: retry a few.
	for try := 0; ; try++ {
		if err = c.start(ctx, bin, opts.Servers); err == nil {
			return c, nil
		}
		_ = c.Stop()
		if try == 2 || ctx.Err() != nil {
			return nil, err
		}
		c.servers, c.links = nil, nil
	}
}

// start writes each server's configuration and starts them in parallel.
func (c *NatsCluster) start(ctx context.Context, bin string, n int) error {
	// Per server: a client port, a monitoring port and a route port.
	ports, err := freePorts(3 * n)
	if err != nil {
		return err
	}
	routePorts := ports[2*n:]
	routesOf := func(int) ([]string, error) { return natsRoutes(routePorts, nil), nil }
	if n > 1 && c.peerProxy {
		c.links = newLinkProxies()
		routesOf = func(i int) ([]string, error) { return c.proxiedRoutes(i, routePorts) }
	}
	for i := range n {
		var routes []string
		if n > 1 {
			if routes, err = routesOf(i); err != nil {
				return err
			}
		}
		s, err := newNatsServer(bin, i+1, ports[i], ports[n+i], ports[2*n+i], routes, c.links != nil)
		if err != nil {
			return err
		}
		c.servers = append(c.servers, s)
	}
	if err := c.procs().startAll(ctx, c.timeout); err != nil {
		return fmt.Errorf("start nats:%d: %w", n, err)
	}
	if _, err = c.WaitMetaLeader(ctx, c.timeout); err != nil || n == 1 {
		return err
	}
	return c.waitMetaPeers(ctx)
}

// waitMetaPeers waits until the meta leader counts every other server a
// current peer. A leader is elected by a majority: until the last server
// is current, an R3 stream cannot be placed ("no suitable peers for
// placement, peer offline"), and the lock's bucket is created right after
// Up. Through route proxies the last route came up after the election
// often enough to fail one run of TestZkNatsScenarios.
func (c *NatsCluster) waitMetaPeers(ctx context.Context) error {
	_, err := waitFor(ctx, c.timeout, func() (struct{}, error) {
		leader, err := c.MetaLeader(ctx)
		if err != nil {
			return struct{}{}, err
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		j, err := leader.jsz(pctx)
		if err != nil {
			return struct{}{}, err
		}
		current := 0
		if j.Meta != nil {
			for _, r := range j.Meta.Replicas {
				if r.Current && !r.Offline {
					current++
				}
			}
		}
		if current < len(c.servers)-1 {
			return struct{}{}, fmt.Errorf("meta leader %s counts %d of %d other servers current", leader.Name, current, len(c.servers)-1)
		}
		return struct{}{}, nil
	})
	return err
}

// natsRoutes are the route URLs of the route addresses (host:port), or of
// ports on loopback when addrs is nil.
func natsRoutes(ports []int, addrs []string) []string {
	if addrs == nil {
		for _, p := range ports {
			addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(p))
		}
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = fmt.Sprintf("%q", "nats-route://"+a)
	}
	return out
}

// proxiedRoutes are server i's routes to every other server, each through
// a proxy of its own on the link from i to it.
func (c *NatsCluster) proxiedRoutes(i int, routePorts []int) ([]string, error) {
	var addrs []string
	for j, p := range routePorts {
		if j == i {
			continue
		}
		a, err := c.links.add(i, j, "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, a)
	}
	return natsRoutes(nil, addrs), nil
}

func newNatsServer(bin string, id, port, monitorPort, routePort int, routes []string, proxied bool) (*NatsServer, error) {
	dir, err := makeTempDir(natsDirWhat)
	if err != nil {
		return nil, fmt.Errorf("temp dir for nats-server: %w", err)
	}
	s := &NatsServer{Name: "n" + strconv.Itoa(id), port: port, monitorPort: monitorPort}
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(natsConfig(s.Name, dir, port, monitorPort, routePort, routes, proxied)), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("write nats.conf: %w", err)
	}
	s.localProc = localProc{what: "nats-server", addr: s.Addr(), dir: dir, bin: bin, args: []string{"-c", conf}}
	s.ready = s.healthy
	return s, nil
}

// natsConfig is a server's nats.conf: JetStream on, its store in dir, and
// for a cluster the routes to every server (its own included, which the
// server skips). With proxied routes it advertises a route address
// nothing listens on: a server learning of another by gossip (an implicit
// route, tried once) must not reach it around the proxies.
func natsConfig(name, dir string, port, monitorPort, routePort int, routes []string, proxied bool) string {
	lines := []string{
		"server_name: " + strconv.Quote(name),
		"listen: " + strconv.Quote("127.0.0.1:"+strconv.Itoa(port)),
		"http: " + strconv.Quote("127.0.0.1:"+strconv.Itoa(monitorPort)),
		"jetstream {",
		"  store_dir: " + strconv.Quote(filepath.Join(dir, "js")),
		"  max_memory_store: 268435456",
		"  max_file_store: 1073741824",
		"}",
	}
	if len(routes) > 0 {
		lines = append(lines,
			"cluster {",
			`  name: "lockbench"`,
			"  listen: "+strconv.Quote("127.0.0.1:"+strconv.Itoa(routePort)),
			"  routes: ["+strings.Join(routes, ", ")+"]")
		if proxied {
			lines = append(lines, "  advertise: "+strconv.Quote(unpointed))
		}
		lines = append(lines, "}")
	}
	return strings.Join(lines, "\n") + "\n"
}

// healthy asks the server's /healthz, which says ok once its JetStream
// serves (in a cluster: the server is current with the meta group).
func (s *NatsServer) healthy(ctx context.Context) error {
	_, err := s.monitor(ctx, "/healthz", 4096)
	return err
}

// monitor GETs path on the server's monitoring port and returns at most
// limit bytes of its answer; a status other than 200 is an error quoting
// the answer.
func (s *NatsServer) monitor(ctx context.Context, path string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.MonitorURL()+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// natsJsz is the part of /jsz lockbench reads: the meta group's leader and
// each stream's leader.
type natsJsz struct {
	Meta *struct {
		Leader   string `json:"leader"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
		} `json:"replicas"`
	} `json:"meta_cluster"`
	Accounts []struct {
		Streams []struct {
			Name    string `json:"name"`
			Cluster *struct {
				Leader string `json:"leader"`
			} `json:"cluster"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

// jsz reads the server's /jsz with stream details.
func (s *NatsServer) jsz(ctx context.Context) (natsJsz, error) {
	var out natsJsz
	body, err := s.monitor(ctx, "/jsz?accounts=true&streams=true", 16<<20)
	if err == nil {
		err = json.Unmarshal(body, &out)
	}
	if err != nil {
		return out, fmt.Errorf("/jsz of %s: %w", s.Name, err)
	}
	return out, nil
}

// Servers lists the deployment's servers, n1 first.
func (c *NatsCluster) Servers() []*NatsServer { return append([]*NatsServer(nil), c.servers...) }

// URLs lists the servers' client URLs.
func (c *NatsCluster) URLs() []string {
	out := make([]string, len(c.servers))
	for i, s := range c.servers {
		out[i] = s.URL()
	}
	return out
}

// Version is the servers' version ("v2.15.3").
func (c *NatsCluster) Version() string { return c.version }

// server returns the server named name, or nil.
func (c *NatsCluster) server(name string) *NatsServer {
	for _, s := range c.servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// MetaLeader returns the server that leads JetStream's meta group (the one
// server of a deployment of one), as the first running server that
// answers says.
func (c *NatsCluster) MetaLeader(ctx context.Context) (*NatsServer, error) {
	if len(c.servers) == 1 {
		return c.servers[0], c.servers[0].healthy(ctx)
	}
	return c.leaderBy(ctx, "meta group", func(j natsJsz) string {
		if j.Meta == nil {
			return ""
		}
		return j.Meta.Leader
	})
}

// StreamLeader returns the server that leads stream (a KV bucket's stream
// is KV_<bucket>): it orders every write to the bucket. On a single server
// that server leads every stream.
func (c *NatsCluster) StreamLeader(ctx context.Context, stream string) (*NatsServer, error) {
	if len(c.servers) == 1 {
		return c.servers[0], c.servers[0].healthy(ctx)
	}
	return c.leaderBy(ctx, "stream "+stream, func(j natsJsz) string {
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				if st.Name == stream && st.Cluster != nil {
					return st.Cluster.Leader
				}
			}
		}
		return ""
	})
}

// leaderBy asks each server's /jsz in turn for a leader's name, which
// leader reads, and returns the first named server found.
func (c *NatsCluster) leaderBy(ctx context.Context, what string, leader func(natsJsz) string) (*NatsServer, error) {
	var errs []error
	for _, s := range c.servers {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		j, err := s.jsz(pctx)
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if l := c.server(leader(j)); l != nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("no server leads the %s: %w", what, errors.Join(errs...))
}

// WaitMetaLeader waits up to timeout for JetStream's meta group to have a
// leader.
func (c *NatsCluster) WaitMetaLeader(ctx context.Context, timeout time.Duration) (*NatsServer, error) {
	return waitFor(ctx, timeout, func() (*NatsServer, error) { return c.MetaLeader(ctx) })
}

// WaitStreamLeader waits up to timeout for stream to have a leader, other
// than not when given: after not was killed, its replicas elect another.
func (c *NatsCluster) WaitStreamLeader(ctx context.Context, stream string, not *NatsServer, timeout time.Duration) (*NatsServer, error) {
	return waitFor(ctx, timeout, func() (*NatsServer, error) {
		l, err := c.StreamLeader(ctx, stream)
		if err == nil && l == not {
			return nil, fmt.Errorf("%s still leads stream %s", l.Name, stream)
		}
		return l, err
	})
}

// Processes lists the running servers' process ids.
func (c *NatsCluster) Processes() []int { return c.procs().pids() }

// Stop ends every server, removes their directories and stops the
// proxies on their routes.
func (c *NatsCluster) Stop() error {
	err := c.procs().stopAll()
	if c.links != nil {
		c.links.close()
	}
	return err
}

// peerCuts reports whether the servers' routes run through proxies.
func (c *NatsCluster) peerCuts() bool { return c.links != nil }

// isolate cuts every route to and from n's server, both ways, until the
// undo; its clients still reach it.
func (c *NatsCluster) isolate(_ context.Context, t *Topology, n *Node) (func() error, error) {
	if c.links == nil {
		return nil, errors.New("the cluster was started without proxies on its routes (NatsOptions.PeerProxy)")
	}
	return c.links.isolate(slices.Index(t.DataNodes(), n))
}

// cutApart cuts every route between two servers that apart says are on
// two sides (isolate minority), until the undo.
func (c *NatsCluster) cutApart(apart func(i, j int) bool) (func() error, error) {
	if c.links == nil {
		return nil, errors.New("the cluster was started without proxies on its routes (NatsOptions.PeerProxy)")
	}
	return c.links.cut(apart)
}

func (c *NatsCluster) procs() procGroup {
	g := make(procGroup, len(c.servers))
	for i, s := range c.servers {
		g[i] = &s.localProc
	}
	return g
}

// natsDirWhat names NATS servers' directories (makeTempDir).
const natsDirWhat = "nats"

// NatsLeftovers lists what the local NATS servers started by process pid
// left behind: directories, and servers still running on them.
func NatsLeftovers(pid int) []string { return dirLeftovers(natsDirWhat, pid) }

// NatsURLHelp says what --nats takes.
const NatsURLHelp = "nats://[user:password@]host:port or tls://… (port 4222 when left out)"

// NatsURL is a parsed --nats URL.
type NatsURL struct {
	// Scheme is nats or tls.
	Scheme string
	// Host is host:port.
	Host string
	// User and Password authenticate the client; empty for none.
	User, Password string
}

// Endpoint is scheme://host:port, without credentials: what results and
// messages show.
func (u NatsURL) Endpoint() string { return u.Scheme + "://" + u.Host }

// ParseNatsURL parses a --nats URL. Its errors never repeat the password.
func ParseNatsURL(raw string) (NatsURL, error) {
	bad := func(why string) (NatsURL, error) {
		return NatsURL{}, badRequest("--nats %q: %s; want %s", RedactURL(raw), why, NatsURLHelp)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(redactErr(err, raw))
	}
	if u.Scheme != "nats" && u.Scheme != "tls" {
		return bad(fmt.Sprintf("scheme %q", u.Scheme))
	}
	if u.Hostname() == "" {
		return bad("no host")
	}
	if h := u.Hostname(); strings.Contains(h, ":") && net.ParseIP(h) == nil {
		return bad(fmt.Sprintf("host %q is neither a name nor an address", h))
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return bad("a NATS server URL has no path, query or fragment")
	}
	port := u.Port()
	if port == "" {
		port = "4222"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return bad(fmt.Sprintf("port %s is not from 1 to 65535", port))
	}
	out := NatsURL{Scheme: u.Scheme, Host: net.JoinHostPort(u.Hostname(), port)}
	if u.User != nil {
		out.User = u.User.Username()
		out.Password, _ = u.User.Password()
		if out.User == "" {
			return bad("a password needs a user name")
		}
	}
	return out, nil
}
