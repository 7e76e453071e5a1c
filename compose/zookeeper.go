package compose

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ZooKeeper runs from Debian's packages (zookeeper, libzookeeper-java): a
// JVM and the jars. lockbench starts its own members from them, each with
// its own zoo.cfg and data directory, and never the system service.
const (
	// ZkJar is Debian's ZooKeeper server jar; its manifest's Class-Path
	// names the libraries it needs, so it is the whole class path.
	ZkJar = "/usr/share/java/zookeeper.jar"
	// zkLogJar, when present, gives the server's SLF4J logging a binding,
	// so its warnings reach the member's log instead of nowhere.
	zkLogJar = "/usr/share/java/slf4j-simple.jar"
	// ZkMainClass is the server's entry point for standalone and ensemble
	// members alike.
	ZkMainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// ErrNoZooKeeper is returned when java or the ZooKeeper jars are missing.
var ErrNoZooKeeper = errors.New("ZooKeeper not found: want java on PATH and " + ZkJar +
	"; install them (Debian/Ubuntu: apt-get install zookeeperd; the system service is never used) or pass --zookeeper host:port,…")

// ZkSizes returns the ensemble sizes zookeeper:N accepts: odd, so a
// majority survives the loss of (N-1)/2 members.
func ZkSizes() []int { return []int{1, 3, 5} }

// DefaultZkTick is the local members' tickTime. ZooKeeper grants session
// timeouts from 2 to 20 ticks; 500 ms makes that 1 s to 10 s, the range of
// lease TTLs lockbench's other locks run with (ZooKeeper's default tick,
// 2 s, would allow nothing under 4 s).
const DefaultZkTick = 500 * time.Millisecond

// ZkSessionBounds returns the session timeouts a server with tickTime tick
// grants by default: a client asking for less gets min, for more max.
func ZkSessionBounds(tick time.Duration) (min, max time.Duration) { return 2 * tick, 20 * tick }

// ZkInstalled reports whether this machine can start local ZooKeeper
// members: java on PATH and Debian's jars.
func ZkInstalled() bool {
	_, err := zkJava()
	return err == nil
}

func zkJava() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", ErrNoZooKeeper
	}
	if _, err := os.Stat(ZkJar); err != nil {
		return "", ErrNoZooKeeper
	}
	return java, nil
}

// ZkOptions configures a local ensemble.
type ZkOptions struct {
	// Members is the ensemble size: 1, 3 or 5.
	Members int
	// Tick is the members' tickTime; 0 means DefaultZkTick.
	Tick time.Duration
	// ReadyTimeout bounds the wait for the ensemble to elect a leader and
	// serve; 0 means 60 s (a JVM starts slowly on a busy machine).
	ReadyTimeout time.Duration
	// PeerProxy puts a proxy on each direction of each link between two
	// members (quorum and election ports), so that Isolate can cut a
	// member off from the others while its clients still reach it.
	PeerProxy bool
}

// ZkEnsemble is a ZooKeeper ensemble of local members on free loopback
// ports, each with its own data directory: a standalone server for one
// member, a quorum otherwise.
type ZkEnsemble struct {
	tick    time.Duration
	timeout time.Duration
	members []*ZkMember
	// peerProxy is ZkOptions.PeerProxy; links are its proxies, nil
	// without it.
	peerProxy bool
	links     *linkProxies
}

// ZkMember is one member of a local ensemble.
type ZkMember struct {
	// ID is the member's myid, from 1.
	ID int

	port int
	localProc
}

// Addr is host:port of the member's client port.
func (m *ZkMember) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.port) }

// Restart starts the member again, after Kill, from its data directory;
// it rejoins the ensemble and catches up from the leader.
func (m *ZkMember) Restart(ctx context.Context) error { return m.start(ctx, 60*time.Second) }

// Mode asks the member's srvr four-letter word for its role: leader,
// follower or standalone; an error while it is not serving.
func (m *ZkMember) Mode(ctx context.Context) (string, error) {
	info, err := ZkSrvr(ctx, m.Addr())
	if err != nil {
		return "", err
	}
	return info.Mode, nil
}

// StartZkEnsemble starts opts.Members members at once on free loopback
// ports and waits until the ensemble serves: every member answers srvr
// with its role and one leads (or the one member is standalone). On error
// nothing is left running or on disk.
func StartZkEnsemble(ctx context.Context, opts ZkOptions) (*ZkEnsemble, error) {
	if !validZkSize(opts.Members) {
		return nil, badRequest("zookeeper:%d: want %s members", opts.Members, joinInts(ZkSizes()))
	}
	java, err := zkJava()
	if err != nil {
		return nil, err
	}
	e := &ZkEnsemble{tick: opts.Tick, timeout: opts.ReadyTimeout, peerProxy: opts.PeerProxy}
	if e.tick <= 0 {
		e.tick = DefaultZkTick
	}
	if e.timeout <= 0 {
		e.timeout = 60 * time.Second
	}
	// A port found free can be taken before the JVM binds it: retry a few.
	for try := 0; ; try++ {
		if err = e.start(ctx, java, opts.Members); err == nil {
			return e, nil
		}
		_ = e.Stop()
		if try == 2 || ctx.Err() != nil {
			return nil, err
		}
		e.members, e.links = nil, nil
	}
}

func validZkSize(n int) bool {
	for _, s := range ZkSizes() {
		if s == n {
			return true
		}
	}
	return false
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// start writes every member's zoo.cfg and myid, starts the JVMs in
// parallel (each waits for a quorum before it serves) and waits for a
// leader.
func (e *ZkEnsemble) start(ctx context.Context, java string, n int) error {
	// Per member: a client port, a quorum port and an election port.
	ports, err := freePorts(3 * n)
	if err != nil {
		return err
	}
	servers, err := e.serverLines(n, ports)
	if err != nil {
		return err
	}
	for i := range n {
		m, err := e.newMember(java, i+1, ports[i], servers[i])
		if err != nil {
			return err
		}
		e.members = append(e.members, m)
	}
	if err := e.procs().startAll(ctx, e.timeout); err != nil {
		return fmt.Errorf("start zookeeper:%d: %w", n, err)
	}
	_, err = e.waitLeader(ctx, e.timeout)
	return err
}

// serverLines are each member's server.N lines (none for one member):
// its own quorum and election ports, and the others' as it reaches them,
// through its own proxy to each when the ensemble has peer proxies
// (ZooKeeper takes each member's view of the others from its own zoo.cfg).
func (e *ZkEnsemble) serverLines(n int, ports []int) ([][]string, error) {
	out := make([][]string, n)
	if n == 1 {
		return out, nil
	}
	if e.peerProxy {
		e.links = newLinkProxies()
	}
	for i := range n {
		for j := range n {
			quorum, election := "127.0.0.1:"+strconv.Itoa(ports[n+j]), "127.0.0.1:"+strconv.Itoa(ports[2*n+j])
			if e.links != nil && i != j {
				var err error
				if quorum, err = e.links.add(i, j, quorum); err != nil {
					return nil, err
				}
				if election, err = e.links.add(i, j, election); err != nil {
					return nil, err
				}
			}
			out[i] = append(out[i], fmt.Sprintf("server.%d=%s:%s", j+1, quorum, strings.TrimPrefix(election, "127.0.0.1:")))
		}
	}
	return out, nil
}

// Isolate cuts member i (from 0) off from the others, both ways, on the
// quorum and election ports, until the undo; its clients still reach it.
// It needs ZkOptions.PeerProxy.
func (e *ZkEnsemble) Isolate(i int) (func() error, error) {
	if e.links == nil {
		return nil, errors.New("the ensemble was started without peer proxies (ZkOptions.PeerProxy)")
	}
	return e.links.isolate(i)
}

// peerCuts reports whether the members' links run through proxies.
func (e *ZkEnsemble) peerCuts() bool { return e.links != nil }

// isolate is Isolate for the isolate fault.
func (e *ZkEnsemble) isolate(_ context.Context, t *Topology, n *Node) (func() error, error) {
	return e.Isolate(slices.Index(t.DataNodes(), n))
}

// newMember makes member id's directory, zoo.cfg and myid.
func (e *ZkEnsemble) newMember(java string, id, port int, servers []string) (*ZkMember, error) {
	dir, err := makeTempDir(zkDirWhat)
	if err != nil {
		return nil, fmt.Errorf("temp dir for zookeeper: %w", err)
	}
	m := &ZkMember{ID: id, port: port}
	m.localProc = localProc{what: "zookeeper", addr: m.Addr(), dir: dir, bin: java}
	m.ready = func(ctx context.Context) error { _, err := m.Mode(ctx); return err }
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("zookeeper data dir: %w", err)
	}
	conf := zkConfig(e.tick, data, port, servers)
	err = os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(conf), 0o600)
	if err == nil {
		err = os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(id)+"\n"), 0o600)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("zookeeper member %d configuration: %w", id, err)
	}
	m.args = zkJVMArgs(filepath.Join(dir, "zoo.cfg"))
	return m, nil
}

// zkConfig is a member's zoo.cfg. The limits count in ticks: initLimit for
// a follower's first sync with the leader, syncLimit for how far behind it
// may fall.
func zkConfig(tick time.Duration, data string, port int, servers []string) string {
	lines := []string{
		"tickTime=" + strconv.Itoa(int(tick.Milliseconds())),
		"initLimit=20",
		"syncLimit=10",
		"dataDir=" + data,
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		// No Jetty on a port of its own: srvr tells the role.
		"admin.enableServer=false",
		"4lw.commands.whitelist=srvr,ruok,conf,mntr",
		// Every worker's session comes from 127.0.0.1: no cap per address.
		"maxClientCnxns=0",
		// The transaction log grows by 1 MB, not ZooKeeper's 64 MB a member.
		"preAllocSize=1024",
		// Expired sessions' empty lock containers go within a second.
		"znode.container.checkIntervalMs=1000",
	}
	return strings.Join(append(lines, servers...), "\n") + "\n"
}

// zkJVMArgs is the java command line of a member: a small heap and the
// serial collector, so five members fit on a small machine beside the
// generator.
func zkJVMArgs(conf string) []string {
	cp := ZkJar
	if _, err := os.Stat(zkLogJar); err == nil {
		cp += ":" + zkLogJar
	}
	return []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-Dzookeeper.admin.enableServer=false",
		"-cp", cp, ZkMainClass, conf}
}

// Members lists the ensemble's members, in myid order.
func (e *ZkEnsemble) Members() []*ZkMember { return append([]*ZkMember(nil), e.members...) }

// Addrs lists the members' client addresses, host:port.
func (e *ZkEnsemble) Addrs() []string {
	out := make([]string, len(e.members))
	for i, m := range e.members {
		out[i] = m.Addr()
	}
	return out
}

// Tick is the members' tickTime.
func (e *ZkEnsemble) Tick() time.Duration { return e.tick }

// Leader returns the member that leads now (the one member of a
// standalone server), asking each one's srvr.
func (e *ZkEnsemble) Leader(ctx context.Context) (*ZkMember, error) {
	var errs []error
	for _, m := range e.members {
		mode, err := m.Mode(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if mode == ZkModeLeader || mode == ZkModeStandalone {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no zookeeper member leads: %w", errors.Join(errs...))
}

// WaitLeader waits up to timeout for a member to lead: after the leader
// was killed, the survivors elect another.
func (e *ZkEnsemble) WaitLeader(ctx context.Context, timeout time.Duration) (*ZkMember, error) {
	return e.waitLeader(ctx, timeout)
}

func (e *ZkEnsemble) waitLeader(ctx context.Context, timeout time.Duration) (*ZkMember, error) {
	m, err := waitFor(ctx, timeout, func() (*ZkMember, error) { return e.Leader(ctx) })
	if err != nil {
		return nil, fmt.Errorf("zookeeper:%d: %w", len(e.members), err)
	}
	return m, nil
}

// Version is the ZooKeeper version the first member reports.
func (e *ZkEnsemble) Version(ctx context.Context) (string, error) {
	info, err := ZkSrvr(ctx, e.members[0].Addr())
	return info.Version, err
}

// Processes lists the running members' process ids.
func (e *ZkEnsemble) Processes() []int { return e.procs().pids() }

// Stop ends every member and removes their directories.
func (e *ZkEnsemble) Stop() error {
	if e.links != nil {
		e.links.close()
	}
	return e.procs().stopAll()
}

func (e *ZkEnsemble) procs() procGroup {
	g := make(procGroup, len(e.members))
	for i, m := range e.members {
		g[i] = &m.localProc
	}
	return g
}

// The roles srvr reports.
const (
	ZkModeLeader     = "leader"
	ZkModeFollower   = "follower"
	ZkModeStandalone = "standalone"
)

// ZkServerInfo is what a member's srvr four-letter word says.
type ZkServerInfo struct {
	// Version is the server's version line, "3.8.0-…, built on …".
	Version string
	// Mode is leader, follower or standalone.
	Mode string
	// Zxid is the last transaction id the member applied.
	Zxid int64
}

// ZkSrvr asks the member at addr for srvr. A member that is up but not in
// a quorum ("not currently serving requests") is an error.
func ZkSrvr(ctx context.Context, addr string) (ZkServerInfo, error) {
	out, err := zkFourLetter(ctx, addr, "srvr")
	if err != nil {
		return ZkServerInfo{}, err
	}
	return parseZkSrvr(out)
}

// parseZkSrvr reads the lines "Zookeeper version: …", "Zxid: 0x…" and
// "Mode: …" of a srvr answer.
func parseZkSrvr(out string) (ZkServerInfo, error) {
	var info ZkServerInfo
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch name {
		case "Zookeeper version":
			info.Version = value
		case "Mode":
			info.Mode = value
		case "Zxid":
			z, err := strconv.ParseInt(strings.TrimPrefix(value, "0x"), 16, 64)
			if err != nil {
				return ZkServerInfo{}, fmt.Errorf("srvr: zxid %q: %w", value, err)
			}
			info.Zxid = z
		}
	}
	if info.Mode == "" {
		return ZkServerInfo{}, fmt.Errorf("srvr: no mode in %q", strings.TrimSpace(out))
	}
	return info, nil
}

// zkFourLetter sends a four-letter word and reads the answer to the end
// (the server closes the connection after it).
func zkFourLetter(ctx context.Context, addr, word string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(2 * time.Second)
	}
	_ = c.SetDeadline(deadline)
	if _, err := io.WriteString(c, word); err != nil {
		return "", fmt.Errorf("%s to %s: %w", word, addr, err)
	}
	b, err := io.ReadAll(io.LimitReader(c, 64<<10))
	if err != nil {
		return "", fmt.Errorf("%s from %s: %w", word, addr, err)
	}
	return string(b), nil
}

// zkDirWhat names ZooKeeper members' directories (makeTempDir).
const zkDirWhat = "zookeeper"

// ZkLeftovers lists what the local ZooKeeper members started by process
// pid left behind: directories, and JVMs still running on them.
func ZkLeftovers(pid int) []string { return dirLeftovers(zkDirWhat, pid) }

// ZkServersHelp says what --zookeeper takes.
const ZkServersHelp = "host:port,host:port,… (port 2181 when left out), one per member"

// ParseZkServers parses a --zookeeper value: the ensemble's members as
// host[:port] separated by commas. ZooKeeper's connect string carries no
// credentials, so nothing in it is secret.
func ParseZkServers(raw string) ([]string, error) {
	bad := func(why string) ([]string, error) {
		return nil, badRequest("--zookeeper %q: %s; want %s", raw, why, ZkServersHelp)
	}
	if strings.TrimSpace(raw) == "" {
		return bad("no servers")
	}
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		host, port, err := net.SplitHostPort(part)
		if err != nil {
			// No port: the whole part is the host (an IPv6 one in brackets).
			host, port = strings.TrimSuffix(strings.TrimPrefix(part, "["), "]"), "2181"
		}
		if host == "" || strings.ContainsAny(host, "/@ []") {
			return bad(fmt.Sprintf("%q is not host:port", part))
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad(fmt.Sprintf("port %s is not from 1 to 65535", port))
		}
		addr := net.JoinHostPort(host, port)
		if seen[addr] {
			return bad(fmt.Sprintf("%s twice", addr))
		}
		seen[addr] = true
		out = append(out, addr)
	}
	return out, nil
}
