package compose

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Labels on every container and network the docker provider creates, so
// that lockbench (and a test, or a user with docker ps --filter) can find
// and remove them without Ryuk.
const (
	// LabelRun names the topology's run: one random id per Up.
	LabelRun = "org.lockbench.run"
	// LabelPID is the process that created it; with LabelHost it lets a
	// later Up remove what a process killed outright left behind.
	LabelPID = "org.lockbench.pid"
	// LabelHost is the hostname of that process.
	LabelHost = "org.lockbench.host"
	// LabelNode is the node's name (master-0, node-1, sentinel-2).
	LabelNode = "org.lockbench.node"
)

const sentinelPort = "26379/tcp"

// dockerRun is the docker provider's state for one topology: the engine
// client, the run's private network and the address its ports are bound on.
type dockerRun struct {
	id     string // the run label's value
	cli    *testcontainers.DockerClient
	image  string
	netID  string
	net    string // the network's name
	bindIP string // host address published ports are bound on
	// fixedPorts is false for a remote engine, where this machine cannot
	// pick a free port for it: the engine picks, and a container that
	// restarts may come back on another.
	fixedPorts bool
	labels     map[string]string
}

// dockerNode is the container behind a Node.
type dockerNode struct {
	c    *testcontainers.DockerContainer
	id   string // container id
	name string // container name
	port string // container port, e.g. 6379/tcp

	mu     sync.Mutex
	killed bool // killed by a fault and not started again
}

func (d *dockerNode) setKilled(v bool) {
	d.mu.Lock()
	d.killed = v
	d.mu.Unlock()
}

func (d *dockerNode) isKilled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.killed
}

// disableRyuk turns testcontainers' reaper off unless the user chose
// otherwise: its image would have to be pulled, which fails where no
// registry answers, and lockbench removes its containers and network itself
// (by the LabelRun label, on success, error and Ctrl-C; and those of a
// process that was killed outright on the next Up). testcontainers reads
// its configuration once per process, from the environment, so this must
// come before its first call.
func disableRyuk() {
	if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !set {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

// upDocker starts the topology as containers of UpOptions.Image on a bridge
// network of its own: startNodes starts the kind's containers
// (upDockerMasters, upDockerReplicated). Every port is published on a
// fixed host port, so a container that a fault restarts comes back where the
// clients look for it. Masters are published on 127.0.0.1; the replicated
// topology on the network's gateway address, which both this machine and
// the containers reach, so the addresses its servers and sentinels announce
// (replica-announce-ip/port, sentinel announce-ip/port) are the ones the
// clients dial.
func (t *Topology) upDocker(ctx context.Context, startNodes func(context.Context) error) error {
	if t.opts.ClockShim {
		return errors.New("the clock shim needs local servers; the docker provider cannot move a container's clock")
	}
	if t.Spec.Masters == 0 {
		t.Spec.Masters = 5
	}
	// Checked before any container request: without an engine,
	// testcontainers would otherwise go on to start its reaper.
	if err := checkDockerEngine(ctx); err != nil {
		return err
	}
	t.Provider = ProviderDocker
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return noEngine(err)
	}
	d := &dockerRun{cli: cli, image: t.opts.Image}
	if d.image == "" {
		d.image = DefaultImage
	}
	t.docker = d
	t.addCleanup(d.close)
	host, _ := os.Hostname()
	d.id = randomID()
	d.labels = map[string]string{LabelRun: d.id, LabelPID: strconv.Itoa(os.Getpid()), LabelHost: host}
	if n := reapOrphans(ctx, cli, host); n > 0 {
		t.logf("docker: removed %d container(s) or network(s) left by lockbench processes that no longer run", n)
	}
	if _, err := cli.ImageInspect(ctx, d.image); err != nil {
		t.logf("docker: image %s is not on the engine; pulling it", d.image)
		if err := pullImage(ctx, d.image); err != nil {
			return fmt.Errorf("image %s is not on the engine and could not be pulled (%w); where no registry answers, build one from this machine's redis-server: lockbench image build, then --image %s", d.image, err, LocalImage)
		}
	}
	if err := d.createNetwork(ctx); err != nil {
		return err
	}
	d.bindIP, d.fixedPorts = "127.0.0.1", true
	if !localEngine(cli.DaemonHost()) {
		d.bindIP, d.fixedPorts = "", false
	}
	start := time.Now()
	if err := startNodes(ctx); err != nil {
		return err
	}
	t.logf("docker: %s up after %s: %s", t.Spec, time.Since(start).Round(time.Millisecond), strings.Join(t.Addrs(), " "))
	return nil
}

// upDockerMasters starts one container a master (single, redlock:N).
func (t *Topology) upDockerMasters(ctx context.Context) error {
	d := t.docker
	t.logf("docker: starting %d container(s) of %s on network %s", t.Spec.Masters, d.image, d.net)
	nodes := make([]*Node, t.Spec.Masters)
	errs := make([]error, t.Spec.Masters)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			cmd := append([]string{"redis-server", "--protected-mode", "no"}, persistenceArgs(t.opts.Persistence)...)
			nodes[i], errs[i] = d.startNode(ctx, fmt.Sprintf("master-%d", i), RoleMaster, cmd, redisPort, nil, 0)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	t.Nodes = append(t.Nodes, nodes...)
	return nil
}

// DockerRun is the LabelRun value of the docker provider's containers and
// network, or "" for another provider.
func (t *Topology) DockerRun() string {
	if t.docker == nil {
		return ""
	}
	return t.docker.id
}

// upDockerReplicated starts the replicated topology's containers.
func (t *Topology) upDockerReplicated(ctx context.Context) error {
	d := t.docker
	if !d.fixedPorts {
		return errors.New("topology replicated with the docker provider needs a local Docker engine (its servers announce host ports picked on this machine)")
	}
	gw, err := d.gateway(ctx)
	if err != nil {
		return err
	}
	d.bindIP = gw
	t.Spec.Masters = 1
	ports := make([]int, 2+sentinelCount)
	for i := range ports {
		if ports[i], err = freePortOn(gw); err != nil {
			return err
		}
	}
	data := func(i int, extra ...string) []string {
		cmd := append([]string{"redis-server", "--protected-mode", "no"}, persistenceArgs(t.opts.Persistence)...)
		cmd = append(cmd, "--repl-diskless-sync-delay", "0", "--replica-announce-ip", gw, "--replica-announce-port", strconv.Itoa(ports[i]))
		return append(cmd, extra...)
	}
	t.logf("docker: starting replicated (%s) on network %s, announced on %s", d.image, d.net, gw)
	primary, err := d.startNode(ctx, "node-0", RolePrimary, data(0), redisPort, nil, ports[0])
	if err != nil {
		return err
	}
	t.Nodes = append(t.Nodes, primary)
	replica, err := d.startNode(ctx, "node-1", RoleReplica, data(1, "--replicaof", gw, strconv.Itoa(ports[0])), redisPort, nil, ports[1])
	if err != nil {
		return err
	}
	t.Nodes = append(t.Nodes, replica)
	if err := waitReplicaOnline(ctx, primary.Addr, replica.Addr, replica.Addr); err != nil {
		return err
	}
	nodes := make([]*Node, sentinelCount)
	errs := make([]error, sentinelCount)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			conf := strings.Join([]string{
				"port 26379",
				"sentinel announce-ip " + gw,
				"sentinel announce-port " + strconv.Itoa(ports[2+i]),
				fmt.Sprintf("sentinel monitor %s %s %d %d", MasterName, gw, ports[0], sentinelQuorum),
				fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, downAfter.Milliseconds()),
				fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, failoverTimeout.Milliseconds()),
				fmt.Sprintf("sentinel parallel-syncs %s 1", MasterName),
			}, "\n") + "\n"
			// The file is copied in before the first start: Sentinel rewrites
			// it with what it learns, and a restarted sentinel keeps that.
			file := testcontainers.ContainerFile{Reader: strings.NewReader(conf), ContainerFilePath: "/data/sentinel.conf", FileMode: 0o666}
			nodes[i], errs[i] = d.startNode(ctx, fmt.Sprintf("sentinel-%d", i), RoleSentinel,
				[]string{"redis-server", "/data/sentinel.conf", "--sentinel"}, sentinelPort, &file, ports[2+i])
		})
	}
	wg.Wait()
	for _, n := range nodes {
		if n != nil {
			t.Nodes = append(t.Nodes, n)
			t.sentinels = append(t.sentinels, redis.NewSentinelClient(adminOptions(n.Addr)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return t.waitSentinels(ctx, replica.Addr)
}

// startNode starts one container on the run's network, publishing port on
// hostPort of the bind address (0: a free one), and waits until the server
// answers PING from this machine.
func (d *dockerRun) startNode(ctx context.Context, name, role string, cmd []string, port string, file *testcontainers.ContainerFile, hostPort int) (*Node, error) {
	labels := map[string]string{LabelNode: name}
	for k, v := range d.labels {
		labels[k] = v
	}
	ready := "Ready to accept connections"
	if role == RoleSentinel {
		ready = "Sentinel ID is"
	}
	var c *testcontainers.DockerContainer
	var err error
	for try := 0; ; try++ {
		hp := ""
		if d.fixedPorts {
			if hostPort == 0 || try > 0 {
				p, perr := freePortOn(d.bindIP)
				if perr != nil {
					return nil, perr
				}
				hostPort = p
			}
			hp = strconv.Itoa(hostPort)
		}
		binding := network.PortBinding{HostPort: hp}
		if d.bindIP != "" {
			binding.HostIP = netip.MustParseAddr(d.bindIP)
		}
		opts := []testcontainers.ContainerCustomizer{
			testcontainers.WithLogger(tclog.NewNoopLogger()),
			testcontainers.WithName("lockbench-" + d.id + "-" + name),
			testcontainers.WithCmd(cmd...),
			testcontainers.WithExposedPorts(port),
			testcontainers.WithLabels(labels),
			tcnetwork.WithNetworkName([]string{name}, d.net),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{network.MustParsePort(port): {binding}}
			}),
			testcontainers.WithWaitStrategyAndDeadline(time.Minute, wait.ForLog(ready)),
		}
		if file != nil {
			opts = append(opts, testcontainers.WithFiles(*file))
		}
		c, err = d.create(ctx, opts)
		if err == nil {
			err = c.Start(ctx)
		}
		// A port taken between the probe and the engine's bind: the
		// container is removed with the run; try another port, and only for
		// a port the caller did not need announced.
		if err != nil && d.fixedPorts && try < 3 && ctx.Err() == nil && portTaken(err) && file == nil && role == RoleMaster {
			if c != nil {
				_ = c.Terminate(context.WithoutCancel(ctx))
			}
			continue
		}
		break
	}
	if err != nil {
		return nil, fmt.Errorf("start %s container (%s): %w", name, d.image, err)
	}
	host := d.bindIP
	if host == "" {
		if host, err = c.Host(ctx); err != nil {
			return nil, fmt.Errorf("%s container: docker host: %w", name, err)
		}
	}
	mapped, err := c.MappedPort(ctx, port)
	if err != nil {
		return nil, fmt.Errorf("%s container: mapped port of %s: %w", name, port, err)
	}
	addr := net.JoinHostPort(host, mapped.Port())
	if err := waitPing(ctx, addr, 30*time.Second); err != nil {
		return nil, fmt.Errorf("%s container %s: %w", name, addr, err)
	}
	return &Node{Name: name, Role: role, Addr: addr, opts: &redis.Options{Addr: addr},
		ctr: &dockerNode{c: c, id: c.GetContainerID(), name: "lockbench-" + d.id + "-" + name, port: port}}, nil
}

// create creates the container without starting it. The request is not cut
// short by ctx: the engine would finish creating a container whose request
// was abandoned, after Close had looked for the run's containers, and leave
// it behind. Once create returns, the container exists and carries the run's
// label, so a cancelled start still leaves nothing Close cannot find.
func (d *dockerRun) create(ctx context.Context, opts []testcontainers.ContainerCustomizer) (*testcontainers.DockerContainer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	noStart := testcontainers.CustomizeRequestOption(func(req *testcontainers.GenericContainerRequest) error {
		req.Started = false
		return nil
	})
	return testcontainers.Run(cctx, d.image, append(opts, noStart)...)
}

// pullImage pulls image through testcontainers (which knows the registry
// credentials of the docker CLI's configuration).
func pullImage(ctx context.Context, image string) error {
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(tclog.NewNoopLogger()))
	if err != nil {
		return err
	}
	defer p.Close()
	return p.PullImage(ctx, image)
}

// logTail is the end of the container's output, for error messages.
func (d *dockerNode) logTail() string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	rc, err := d.c.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(logs of %s: %v)", d.name, err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	return tail(b)
}

// portTaken reports whether the engine refused a host port already in use.
func portTaken(err error) bool {
	s := err.Error()
	return strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use")
}

// waitPing waits until the server at addr answers PING.
func waitPing(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := adminDo(ctx, adminOptions(addr), "PING")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PING answer within %s: %w", timeout, err)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("wait for PING: %w", err)
		}
	}
}

// createNetwork creates the run's bridge network.
func (d *dockerRun) createNetwork(ctx context.Context) error {
	d.net = "lockbench-" + d.id
	// Not cancelled with the run: a create the client gave up on is still
	// carried out by the engine, after close had listed the run's networks
	// and found none (Ctrl-C during start-up left a network behind). The
	// call waits for the engine's answer; the run's cancellation is then
	// reported.
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	res, err := d.cli.NetworkCreate(wait, d.net, client.NetworkCreateOptions{Driver: "bridge", Labels: d.labels})
	if err != nil {
		return fmt.Errorf("create docker network %s: %w", d.net, err)
	}
	d.netID = res.ID
	return ctx.Err()
}

// gateway is the IPv4 gateway of the run's network: this machine's address
// on it.
func (d *dockerRun) gateway(ctx context.Context) (string, error) {
	res, err := d.cli.NetworkInspect(ctx, d.netID, client.NetworkInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("inspect docker network %s: %w", d.net, err)
	}
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.Is4() {
			return c.Gateway.String(), nil
		}
	}
	return "", fmt.Errorf("docker network %s has no IPv4 gateway", d.net)
}

// close force-removes every container and then the network of the run, found
// by its label, so that also a container whose start was cancelled half way
// (and that testcontainers never returned) goes. It is Topology.Close's
// cleanup, and runs with a context of its own: the run's may be cancelled.
func (d *dockerRun) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer d.cli.Close()
	_, err := removeLabelled(ctx, d.cli, LabelRun+"="+d.id)
	return err
}

// removeLabelled force-removes the containers, then the networks, that carry
// the label filter (KEY=VALUE or KEY), and says how many went.
func removeLabelled(ctx context.Context, cli *testcontainers.DockerClient, label string) (int, error) {
	var errs []error
	removed := 0
	ctrs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return 0, fmt.Errorf("list containers labelled %s: %w", label, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range ctrs.Items {
		wg.Go(func() {
			_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !strings.Contains(err.Error(), "No such container") && !strings.Contains(err.Error(), "already in progress") {
				errs = append(errs, fmt.Errorf("remove container %s: %w", shortID(c.ID), err))
				return
			}
			removed++
		})
	}
	wg.Wait()
	nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return removed, errors.Join(append(errs, fmt.Errorf("list networks labelled %s: %w", label, err))...)
	}
	for _, n := range nets.Items {
		if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// reapOrphans removes the containers and networks of lockbench processes of
// this host that no longer run (killed with SIGKILL, say, so that their own
// cleanup never ran): what Ryuk would have done. It returns how many went;
// errors are left for the next time.
func reapOrphans(ctx context.Context, cli *testcontainers.DockerClient, host string) int {
	f := make(client.Filters).Add("label", LabelHost+"="+host)
	ctrs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0
	}
	runs := map[string]string{}
	for _, c := range ctrs.Items {
		runs[c.Labels[LabelRun]] = c.Labels[LabelPID]
	}
	if nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range nets.Items {
			runs[n.Labels[LabelRun]] = n.Labels[LabelPID]
		}
	}
	removed := 0
	for run, pid := range runs {
		if run == "" || processAlive(pid) {
			continue
		}
		n, _ := removeLabelled(ctx, cli, LabelRun+"="+run)
		removed += n
	}
	return removed
}

// processAlive reports whether pid names a running process of this machine;
// an unreadable pid counts as alive, so nothing is removed by mistake.
func processAlive(pid string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return true
	}
	err = syscall.Kill(n, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// localEngine reports whether the engine runs on this machine (a unix socket
// or a loopback TCP address), where published ports on 127.0.0.1 and this
// machine's free ports mean something.
func localEngine(daemonHost string) bool {
	switch {
	case daemonHost == "", strings.HasPrefix(daemonHost, "unix://"), strings.HasPrefix(daemonHost, "npipe://"):
		return true
	}
	_, rest, _ := strings.Cut(daemonHost, "://")
	h, _, err := net.SplitHostPort(rest)
	if err != nil {
		h = rest
	}
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}

// freePortOn finds a free TCP port on ip of this machine.
func freePortOn(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// randomID is 12 hex digits from crypto/rand (whose Read never fails on
// supported platforms): a name no other run on this machine picks.
func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const redisPort = "6379/tcp"

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// CheckDockerEngine reports, within a few seconds, whether a Docker engine
// answers; its error wraps ErrNoDockerEngine. Call it before anything else
// of testcontainers in the process: it also turns Ryuk off (see the README).
func CheckDockerEngine(ctx context.Context) error { return checkDockerEngine(ctx) }

// CountLabelled counts the containers (running or not) and the networks
// that carry label, KEY or KEY=VALUE (e.g. LabelRun+"="+id).
func CountLabelled(ctx context.Context, label string) (containers, networks int, err error) {
	if err := checkDockerEngine(ctx); err != nil {
		return 0, 0, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 0, 0, noEngine(err)
	}
	defer cli.Close()
	f := make(client.Filters).Add("label", label)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, 0, fmt.Errorf("list containers labelled %s: %w", label, err)
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return 0, 0, fmt.Errorf("list networks labelled %s: %w", label, err)
	}
	return len(cs.Items), len(ns.Items), nil
}

// DockerClient connects to the engine the docker provider uses (DOCKER_HOST,
// else testcontainers' discovery), once it has answered a ping; its error
// wraps ErrNoDockerEngine. The caller closes it.
func DockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	if err := checkDockerEngine(ctx); err != nil {
		return nil, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, noEngine(err)
	}
	return cli, nil
}
