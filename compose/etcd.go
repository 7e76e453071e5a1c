package compose

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/lockimpl"
)

// RoleMember is a member of an etcd cluster (etcd:N). Which member leads
// changes with elections; ask Topology.EtcdLeader.
const RoleMember = "member"

// TargetLeader is the etcd member that leads the cluster when the fault
// applies (kill leader).
const TargetLeader FaultTarget = "leader"

// ErrNoEtcd is returned when the etcd binary is not on PATH.
var ErrNoEtcd = errors.New("etcd not found on PATH; install it (Debian/Ubuntu: apt-get install etcd-server; macOS: brew install etcd) or pass --etcd URL")

// EtcdSizes returns the member counts etcd:N accepts: odd, so a majority
// survives the loss of (N-1)/2 members.
func EtcdSizes() []int { return []int{1, 3, 5} }

// memberProcess makes a Server start an etcd member: its command line,
// readiness probe and log file.
type memberProcess struct {
	name     string // member name, m0, m1, …
	peerPort int
	// advertisePort is the port the other members reach its peer port at
	// (its peer proxy's), 0 for peerPort itself.
	advertisePort int
	cluster       string // --initial-cluster
	token         string // --initial-cluster-token
	// timing is etcd's heartbeat and election timeout, which decide how
	// soon a leader is suspected and the server's minimum lease TTL.
	timing lockimpl.EtcdTiming
}

// command is the program a member runs.
func (m *memberProcess) command() string { return "etcd" }

// logName is the member's log file in its directory.
func (m *memberProcess) logName() string { return "etcd.log" }

// args is the member's command line. The initial-cluster flags only matter
// on the first start: a restarted member finds its WAL in the data dir and
// rejoins as the member it was.
func (m *memberProcess) args(port int, dir string) []string {
	client := "http://127.0.0.1:" + strconv.Itoa(port)
	peer := "http://127.0.0.1:" + strconv.Itoa(m.peerPort)
	advertise := peer
	if m.advertisePort != 0 {
		advertise = "http://127.0.0.1:" + strconv.Itoa(m.advertisePort)
	}
	return []string{
		"--name", m.name, "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", advertise,
		"--initial-cluster", m.cluster, "--initial-cluster-token", m.token, "--initial-cluster-state", "new",
		"--heartbeat-interval", strconv.Itoa(int(m.timing.Heartbeat.Milliseconds())),
		"--election-timeout", strconv.Itoa(int(m.timing.Election.Milliseconds())),
		// Every acquisition is a new revision: keep a minute of history, not all.
		"--auto-compaction-mode", "periodic", "--auto-compaction-retention", "1m",
		"--logger", "zap", "--log-level", "warn", "--log-outputs", filepath.Join(dir, "etcd.log"),
	}
}

// ready asks the member's /health, which says true only once the member
// sees a leader and can serve a read through it.
func (m *memberProcess) ready(addr string) error {
	return etcdHealth(context.Background(), &http.Client{Timeout: time.Second}, "http://"+addr)
}

func etcdHealth(ctx context.Context, hc *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("/health answered %d %q", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if h.Health != "true" {
		return fmt.Errorf("/health: not healthy %s", h.Reason)
	}
	return nil
}

// EtcdURL is a parsed --etcd URL.
type EtcdURL struct {
	// Scheme is http or https.
	Scheme string
	// Host is host:port.
	Host string
	// User and Password authenticate the client (etcd's auth); empty for none.
	User, Password string
}

// Endpoint is scheme://host:port, without credentials.
func (u EtcdURL) Endpoint() string { return u.Scheme + "://" + u.Host }

// ParseEtcdURL parses http://[user:password@]host[:port] or https://…; the
// port defaults to 2379. Its errors never repeat the password.
func ParseEtcdURL(raw string) (EtcdURL, error) {
	bad := func(why string) (EtcdURL, error) {
		return EtcdURL{}, badRequest("--etcd %q: %s; want http://[user:password@]host:port or https://…", RedactURL(raw), why)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(redactErr(err, raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad(fmt.Sprintf("scheme %q", u.Scheme))
	}
	if u.Hostname() == "" {
		return bad("no host")
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return bad("an etcd endpoint has no path, query or fragment")
	}
	port := u.Port()
	if port == "" {
		port = "2379"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return bad(fmt.Sprintf("port %s is not from 1 to 65535", port))
	}
	out := EtcdURL{Scheme: u.Scheme, Host: net.JoinHostPort(u.Hostname(), port)}
	if u.User != nil {
		out.User = u.User.Username()
		out.Password, _ = u.User.Password()
		if out.User == "" {
			return bad("a password needs a user name")
		}
	}
	return out, nil
}

// etcdMember is what a node of an etcd topology knows besides its address.
type etcdMember struct {
	url EtcdURL
	// id is the member id, learnt from Status; two faults resolving the
	// leader at once may both write it.
	id atomic.Uint64
}

// etcdState is the etcd side of the topology, nil on another backend's.
func (t *Topology) etcdState() *etcdCluster {
	st, _ := t.backendState.(*etcdCluster)
	return st
}

// etcdCluster is the etcd side of a Topology.
type etcdCluster struct {
	mu    sync.Mutex
	admin *clientv3.Client // direct to the members (no proxies), for Status
	// peers are the proxies on the members' peer links, nil unless
	// UpOptions.PeerProxy.
	peers *etcdPeers
}

// upEtcd starts N members at once (each waits for a quorum of the others
// before it serves), on free loopback ports, each with its own data dir.
func (t *Topology) upEtcd(ctx context.Context) error {
	if t.opts.ClockShim {
		return errors.New("the clock shim cannot move an etcd member's clock (Go reads the time without libc); clock faults need Redis topologies")
	}
	if t.opts.Persistence != PersistNone && t.opts.Persistence != "" {
		return fmt.Errorf("persistence %s is a Redis setting; etcd always keeps its write-ahead log, fsync'd", t.opts.Persistence)
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		return ErrNoEtcd
	}
	n := t.Spec.Masters
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	token := "lockbench-" + randomID()
	st := &etcdCluster{}
	advertise := ports[n:]
	if t.opts.PeerProxy {
		if st.peers, err = startEtcdPeers(ports[n:]); err != nil {
			return err
		}
		t.addCleanup(st.peers.close)
		advertise = st.peers.ports()
	}
	peers := make([]string, n)
	for i := range n {
		peers[i] = fmt.Sprintf("m%d=http://127.0.0.1:%d", i, advertise[i])
	}
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i], errs[i] = StartServer(ctx, ServerOptions{Port: ports[i], Binary: "etcd", Env: t.opts.ServerEnv,
				program: &memberProcess{name: fmt.Sprintf("m%d", i), peerPort: ports[n+i], advertisePort: advertise[i], cluster: strings.Join(peers, ","), token: token,
					timing: lockimpl.EtcdLocalTiming(n)}})
		}()
	}
	wg.Wait()
	t.backendState = st
	for i, srv := range servers {
		if srv == nil {
			continue
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("member-%d", i), Role: RoleMember, Addr: srv.Addr(), Server: srv,
			payload: &etcdMember{url: EtcdURL{Scheme: "http", Host: srv.Addr()}}})
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("start etcd members of %s: %w", t.Spec, err)
	}
	if err := t.etcdSettle(ctx); err != nil || st.peers == nil {
		return err
	}
	admin, err := t.etcdAdmin()
	if err != nil {
		return err
	}
	return st.learnPeerIDs(ctx, admin)
}

// freePorts finds n distinct free loopback ports, holding each open until
// all are found so that none is handed out twice.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	out := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free loopback port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// upEtcdExternal reaches the members at the --etcd URLs.
func (t *Topology) upEtcdExternal() error {
	if t.opts.ClockShim {
		return badRequest("the clock shim needs local servers; it cannot move the clock of an --etcd URL")
	}
	if t.Spec.Masters == 0 {
		t.Spec.Masters = len(t.opts.URLs)
	}
	if len(t.opts.URLs) != t.Spec.Masters {
		return badRequest("needs %d --etcd URLs, one per member, got %d", t.Spec.Masters, len(t.opts.URLs))
	}
	t.Provider = ProviderExternal
	t.backendState = &etcdCluster{}
	for i, raw := range t.opts.URLs {
		u, err := ParseEtcdURL(raw)
		if err != nil {
			return err
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("member-%d", i), Role: RoleMember, Addr: u.Host, payload: &etcdMember{url: u}})
	}
	return nil
}

// etcdSettle waits until one leader is known to every member and learns the
// member ids that EtcdLeader maps back to nodes.
func (t *Topology) etcdSettle(ctx context.Context) error {
	if _, err := t.waitLeader(ctx, t.readyTimeout(), 100*time.Millisecond); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("etcd %s: no agreed leader after %v: %w", t.Spec, t.readyTimeout(), err)
	}
	return nil
}

func (t *Topology) readyTimeout() time.Duration {
	if t.opts.ReadyTimeout > 0 {
		return t.opts.ReadyTimeout
	}
	return 30 * time.Second
}

// etcdConfig is the client configuration for the given nodes' endpoints:
// through their proxies when proxied and direct is false.
func (t *Topology) etcdConfig(nodes []*Node, direct bool) clientv3.Config {
	var eps []string
	var cred EtcdURL
	for _, n := range nodes {
		addr := n.Addr
		if !direct {
			addr = n.ClientAddr()
		}
		eps = append(eps, n.etcdMemberOf().url.Scheme+"://"+addr)
		if n.etcdMemberOf().url.User != "" {
			cred = n.etcdMemberOf().url
		}
	}
	cfg := clientv3.Config{
		Endpoints:   eps,
		DialTimeout: 2 * time.Second,
		Username:    cred.User,
		Password:    cred.Password,
		// Quiet: the client would log every refused dial while a member is down.
		Logger: zap.NewNop(),
		// No AutoSyncInterval: discovering the members' advertised URLs would
		// bypass the proxies the faults act on.
	}
	if len(nodes) > 0 && nodes[0].etcdMemberOf().url.Scheme == "https" {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return cfg
}

// EtcdClient returns a new client over every member (through the proxies
// when the topology has them), which Close will close. The client balances
// requests over the members and moves to another when one fails.
func (t *Topology) EtcdClient() (*clientv3.Client, error) {
	if t.etcdState() == nil {
		return nil, fmt.Errorf("topology %s is not etcd", t.Spec)
	}
	c, err := clientv3.New(t.etcdConfig(t.DataNodes(), false))
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", t.Spec, err)
	}
	t.addCleanup(c.Close)
	return c, nil
}

// EtcdMemberClient returns a new client for member i alone, direct (not
// through its proxy), which Close will close.
func (t *Topology) EtcdMemberClient(i int) (*clientv3.Client, error) {
	if t.etcdState() == nil {
		return nil, fmt.Errorf("topology %s is not etcd", t.Spec)
	}
	c, err := clientv3.New(t.etcdConfig(t.DataNodes()[i:i+1], true))
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", t.DataNodes()[i].Name, err)
	}
	t.addCleanup(c.Close)
	return c, nil
}

func (t *Topology) etcdAdmin() (*clientv3.Client, error) {
	st := t.etcdState()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.admin != nil {
		return st.admin, nil
	}
	c, err := clientv3.New(t.etcdConfig(t.DataNodes(), true))
	if err != nil {
		return nil, fmt.Errorf("etcd admin client for %s: %w", t.Spec, err)
	}
	st.admin = c
	t.addCleanup(c.Close)
	return c, nil
}

// EtcdLeader asks every reachable member for its status and returns the
// member they name as leader. Members that do not answer (down, paused) are
// skipped; the answers must agree.
func (t *Topology) EtcdLeader(ctx context.Context) (*Node, error) {
	if t.etcdState() == nil {
		return nil, fmt.Errorf("topology %s has no leader; only etcd:N does", t.Spec)
	}
	admin, err := t.etcdAdmin()
	if err != nil {
		return nil, err
	}
	data := t.DataNodes()
	type status struct{ id, leader uint64 }
	got := make([]*status, len(data))
	var wg sync.WaitGroup
	for i, n := range data {
		if n.Server != nil && n.Server.PID() == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			if resp, err := admin.Status(sctx, admin.Endpoints()[i]); err == nil {
				got[i] = &status{id: resp.Header.MemberId, leader: resp.Leader}
			}
		}()
	}
	wg.Wait()
	var leader uint64
	answered := 0
	for i, s := range got {
		if s == nil {
			continue
		}
		answered++
		data[i].etcdMemberOf().id.Store(s.id)
		switch {
		case s.leader == 0:
			return nil, fmt.Errorf("%s sees no leader", data[i].Name)
		case leader != 0 && s.leader != leader:
			return nil, errors.New("members disagree on the leader (an election is under way)")
		}
		leader = s.leader
	}
	if answered == 0 {
		return nil, errors.New("no member answered Status")
	}
	for i, n := range data {
		if n.etcdMemberOf().id.Load() == leader {
			if got[i] == nil {
				// The others have not noticed yet that it is gone.
				return nil, fmt.Errorf("leader %s does not answer", n.Name)
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("leader %x is not among the members that answered", leader)
}

// ReadEtcdStats reads a member's Prometheus /metrics: gRPC requests handled,
// by method, and the process's CPU seconds. A member whose metrics cannot be
// read gets an error the caller records instead of failing.
func (t *Topology) ReadEtcdStats(ctx context.Context, i int) (ServerStats, error) {
	n := t.DataNodes()[i]
	hc := &http.Client{Timeout: 2 * time.Second}
	if n.etcdMemberOf().url.Scheme == "https" {
		tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
		// Two readings a run: nothing to keep a connection open for.
		defer tr.CloseIdleConnections()
		hc.Transport = tr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.etcdMemberOf().url.Endpoint()+"/metrics", nil)
	if err != nil {
		return ServerStats{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return ServerStats{}, fmt.Errorf("/metrics on %s: %w", n.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ServerStats{}, fmt.Errorf("/metrics on %s: %s", n.Addr, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return ServerStats{}, fmt.Errorf("/metrics on %s: %w", n.Addr, err)
	}
	return ParseEtcdMetrics(string(body)), nil
}

// ParseEtcdMetrics extracts gRPC calls by method (grpc_server_handled_total,
// summed over codes) and CPU seconds (process_cpu_seconds_total) from a
// Prometheus text exposition.
func ParseEtcdMetrics(text string) ServerStats {
	s := ServerStats{Calls: map[string]int64{}}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		var labels, value string
		if rest != "" {
			labels, value, _ = strings.Cut(rest, "}")
		} else {
			name, value, _ = strings.Cut(line, " ")
		}
		value = strings.TrimSpace(value)
		if sp := strings.IndexByte(value, ' '); sp >= 0 {
			value = value[:sp] // a timestamp follows
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch strings.TrimSpace(name) {
		case "process_cpu_seconds_total":
			s.CPUSeconds = v
		case "grpc_server_handled_total":
			if method := promLabel(labels, "grpc_method"); method != "" {
				s.Calls[method] += int64(v)
			}
		}
	}
	return s
}

// promLabel finds name="value" in a Prometheus label list.
func promLabel(labels, name string) string {
	for part := range strings.SplitSeq(labels, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// settledLeader is the current leader, waiting up to two election timeouts
// while an election is under way, so that `kill leader` hits whichever
// member leads when the fault applies.
func (t *Topology) settledLeader(ctx context.Context) (*Node, error) {
	// A cluster's election timeout, the longest local members run at
	// (an external cluster's is unknown: its default is the same).
	return t.waitLeader(ctx, 2*lockimpl.EtcdLocalTiming(3).Election, 50*time.Millisecond)
}

// waitLeader asks for the leader every poll until the members agree on
// one, or timeout has passed (the last error then), or ctx ends.
func (t *Topology) waitLeader(ctx context.Context, timeout, poll time.Duration) (*Node, error) {
	deadline := time.Now().Add(timeout)
	for {
		n, err := t.EtcdLeader(ctx)
		if err == nil || time.Now().After(deadline) {
			return n, err
		}
		if err := sleepCtx(ctx, poll); err != nil {
			return nil, err
		}
	}
}
