package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// LockZk is the name of the ZooKeeper lock.
const LockZk = "zk"

// ZkModule is the client module the ZooKeeper lock is built on.
const ZkModule = "github.com/go-zookeeper/zk"

// DefaultZkTimeout bounds each request of the ZooKeeper lock unless told
// otherwise. The client's own bound is two thirds of the session timeout
// (when it gives the connection up), far longer than a worker should wait.
const DefaultZkTimeout = time.Second

// DefaultZkRoot is the node the lock's keys live under.
const DefaultZkRoot = "/lockbench"

// ErrZkNoSession is returned while the lock's client has no session with
// the ensemble (connecting, or reconnecting after a member was lost).
var ErrZkNoSession = errors.New("no ZooKeeper session")

// Zk is Curator's InterProcessMutex recipe on ZooKeeper: each attempt
// creates an ephemeral sequential node under the key's node, and the
// attempt whose node sorts first holds the key; the others wait for their
// predecessor to go (with ZkOptions.Wait) or give up and delete their node.
//
// The lease is the ZooKeeper session: the ensemble deletes a session's
// ephemeral nodes when it has not heard from the client for the session
// timeout, and the client's own pings keep it alive meanwhile, so the lock
// has no TTL of its own and --ttl is the session timeout, which the
// ensemble clamps into its bounds (2 to 20 ticks; see Clamp). A holder
// whose session expired while it worked (Curator #727: a pause, a
// partition) has lost the key without being told: the node's czxid, the
// zxid of its creation, is the fencing token, as zxids only grow across
// the ensemble, its leaders and restarts.
type Zk struct {
	sessions  []*zkSession
	next      atomic.Uint64
	requested time.Duration
	opts      ZkOptions
	// orphans are nodes an attempt may have left in a key's queue and
	// could not delete then (the connection was lost): each would block
	// its key for the session's life, so later attempts delete them.
	orphans zkOrphans
}

// zkOrphan is an attempt's node that may exist: its session, key node
// and token (findOwn finds it by the token).
type zkOrphan struct {
	session       *zkSession
	parent, token string
}

// zkOrphans is the list of nodes left to delete, shared by the workers.
type zkOrphans struct {
	mu   sync.Mutex
	list []zkOrphan
}

func (o *zkOrphans) add(x zkOrphan) {
	o.mu.Lock()
	o.list = append(o.list, x)
	o.mu.Unlock()
}

// take empties the list and returns what it held.
func (o *zkOrphans) take() []zkOrphan {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.list
	o.list = nil
	return out
}

// ZkOptions configures the ZooKeeper lock.
type ZkOptions struct {
	// Servers are the ensemble's members, host:port.
	Servers []string
	// SessionTimeout is the lease asked for (--ttl): the ensemble grants a
	// timeout within its bounds.
	SessionTimeout time.Duration
	// Sessions is how many sessions (connections) the lock's acquisitions
	// are spread over, round robin; 0 means 1, as Curator's one client
	// per process.
	Sessions int
	// Wait is how long one acquisition waits in the key's queue, watching
	// its predecessor, before it gives up as contended; 0 makes one
	// attempt (Curator's acquire(0)).
	Wait time.Duration
	// Timeout bounds each request; 0 means DefaultZkTimeout.
	Timeout time.Duration
	// Root is the node under which keys live; "" means DefaultZkRoot.
	Root string
}

// zkSession is one client connection and the session timeout the ensemble
// granted it (learnt from the client's log of the handshake, the only place
// the client tells it).
type zkSession struct {
	conn    *zk.Conn
	granted atomic.Int64 // milliseconds
	ends    zkSessionEnds

	mu  sync.Mutex
	tcp net.Conn // the connection the client dialled last
}

// dial is the client's dialer: a plain TCP connection, kept so that
// dropExpired can close it.
func (s *zkSession) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err == nil {
		s.mu.Lock()
		s.tcp = c
		s.mu.Unlock()
	}
	return c, err
}

// dropExpired ends the connection of session sid when err says the
// ensemble has expired it while the client still holds it: a member that
// did not close the connection with the session (the session was closed
// through another member, as expire holder does) answers every request
// with "session expired", and go-zookeeper keeps asking on it, so the lock
// would fail every attempt for the rest of the run. Closed, the client
// reconnects, is told its session is gone, and starts a new one, as
// Curator makes a new handle on Expired. A session that has changed since
// (another worker's drop came first) is left alone.
func (s *zkSession) dropExpired(err error, sid int64) {
	if !errors.Is(err, zk.ErrSessionExpired) || s.conn.State() != zk.StateHasSession || s.conn.SessionID() != sid {
		return
	}
	s.mu.Lock()
	c := s.tcp
	s.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// zkSessionEnds notes when the sessions of one connection ended: the
// client opens a new session after an expiry, and the leases of the old
// one are gone with it, though no call of their holders said so.
type zkSessionEnds struct {
	mu sync.Mutex
	// current is the session the client has (0 before the first).
	current int64
	// disconnected is when the connection of the current session was lost,
	// zero while it is up.
	disconnected time.Time
	// ended maps each ended session's id to when it ended.
	ended map[int64]time.Time
}

// established notes the client's new session id.
func (e *zkSessionEnds) established(id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.current, e.disconnected = id, time.Time{}
}

// observe notes a session event of the client at now. An expiry is
// learnt only on reconnecting, after the ensemble ended the session at
// some time while the client was cut off from it: the session counts as
// ended from the disconnection, the earliest instant its holders could no
// longer know it was alive (or from the notice, with no disconnection).
func (e *zkSessionEnds) observe(state zk.State, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch state {
	case zk.StateDisconnected:
		if e.disconnected.IsZero() {
			e.disconnected = now
		}
	case zk.StateExpired:
		if e.current == 0 {
			return
		}
		at := e.disconnected
		if at.IsZero() {
			at = now
		}
		if e.ended == nil {
			e.ended = map[int64]time.Time{}
		}
		e.ended[e.current] = at
		e.current, e.disconnected = 0, time.Time{}
	}
}

// endedAt is when session id ended, false while it has not (as far as
// the client learnt).
func (e *zkSessionEnds) endedAt(id int64) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	at, ok := e.ended[id]
	return at, ok
}

// Printf receives the client's log lines: the one of a new session carries
// the granted timeout; the rest (reconnections after a fault) are dropped,
// as results count those faults by their errors.
func (s *zkSession) Printf(format string, args ...any) {
	if format == "authenticated: id=%d, timeout=%d" && len(args) == 2 {
		if ms, ok := args[1].(int32); ok {
			s.granted.Store(int64(ms))
		}
		if id, ok := args[0].(int64); ok {
			s.ends.established(id)
		}
	}
}

// event receives the client's session events, for the ends of sessions.
func (s *zkSession) event(ev zk.Event) {
	if ev.Type == zk.EventSession {
		s.ends.observe(ev.State, time.Now())
	}
}

// zkHandle is the node behind one acquisition.
type zkHandle struct {
	session *zkSession
	path    string
	owner   int64 // the session id that created the node
}

// NewZk connects the lock's sessions to the ensemble and waits until each
// has a session (bounded by ctx). The session timeout granted may differ
// from the one asked for: see Clamp.
func NewZk(ctx context.Context, opts ZkOptions) (*Zk, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("lock zk: no ZooKeeper servers")
	}
	if opts.SessionTimeout <= 0 {
		return nil, fmt.Errorf("lock zk: session timeout %v: want a positive --ttl", opts.SessionTimeout)
	}
	if opts.Sessions <= 0 {
		opts.Sessions = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultZkTimeout
	}
	if opts.Root == "" {
		opts.Root = DefaultZkRoot
	}
	z := &Zk{requested: opts.SessionTimeout, opts: opts}
	for range opts.Sessions {
		s := &zkSession{}
		conn, _, err := zk.Connect(opts.Servers, opts.SessionTimeout, zk.WithLogger(s), zk.WithDialer(s.dial), zk.WithEventCallback(s.event))
		if err != nil {
			z.Close()
			return nil, fmt.Errorf("lock zk: connect to %s: %w", strings.Join(opts.Servers, ","), err)
		}
		s.conn = conn
		z.sessions = append(z.sessions, s)
	}
	for _, s := range z.sessions {
		if err := s.waitSession(ctx); err != nil {
			z.Close()
			return nil, fmt.Errorf("lock zk: %s: %w", strings.Join(opts.Servers, ","), err)
		}
	}
	return z, nil
}

// waitSession polls until the client has a session and knows its timeout.
func (s *zkSession) waitSession(ctx context.Context) error {
	for s.conn.State() != zk.StateHasSession || s.granted.Load() == 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no session established: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Close ends the lock's sessions: the ensemble deletes their nodes at once.
func (z *Zk) Close() {
	for _, s := range z.sessions {
		if s.conn != nil {
			s.conn.Close()
		}
	}
}

// ConnectedServers lists the member each of the lock's sessions talks to
// now, as given in ZkOptions.Servers: which member a partition must cut to
// reach the lock.
func (z *Zk) ConnectedServers() []string {
	out := make([]string, len(z.sessions))
	for i, s := range z.sessions {
		out[i] = s.conn.Server()
	}
	return out
}

// Granted is the session timeout the ensemble granted: the lease; 0 on a
// lock with no session (its zero value, which the registry's test asks).
func (z *Zk) Granted() time.Duration {
	if len(z.sessions) == 0 {
		return 0
	}
	return time.Duration(z.sessions[0].granted.Load()) * time.Millisecond
}

// Clamp reports the session timeout asked for and the one granted, and
// whether the ensemble clamped one into the other (its bounds are 2 to 20
// ticks unless configured otherwise).
func (z *Zk) Clamp() (requested, granted time.Duration, clamped bool) {
	g := z.Granted()
	return z.requested, g, g != z.requested
}

// ClampNote says, in one line, that the ensemble clamped the session
// timeout, or "" when it granted what was asked.
func (z *Zk) ClampNote() string {
	req, granted, clamped := z.Clamp()
	if !clamped {
		return ""
	}
	return fmt.Sprintf("lock zk: --ttl %v is out of the ensemble's session timeout bounds (2 to 20 ticks); the lease is the %v it granted", req, granted)
}

// Info describes the lock: fenced by the node's czxid.
func (z *Zk) Info() Info {
	req, granted, _ := z.Clamp()
	return Info{Name: LockZk, Fencing: true, Nodes: len(z.opts.Servers), Library: ZkModule, Version: ModuleVersion(ZkModule),
		Settings: map[string]string{
			"session-timeout":           granted.String(),
			"requested-session-timeout": req.String(),
			"sessions":                  fmt.Sprint(len(z.sessions)),
			"wait":                      z.opts.Wait.String(),
			"request-timeout":           z.opts.Timeout.String(),
		}}
}

// checkTTL accepts the ttl the lock was built with (asked or granted): a
// session's timeout is fixed when it is established, so any other would be
// a lease the run records and the server never had.
func (z *Zk) checkTTL(ttl time.Duration) error {
	if ttl != z.requested && ttl != z.Granted() {
		return fmt.Errorf("ttl %v: the zk lock's lease is its session timeout, fixed at %v when it connected; build it with --ttl %v", ttl, z.requested, ttl)
	}
	return nil
}

// zkCall runs one request of the client, which takes no context, bounded
// by ctx and timeout: on either, the caller gets the error and the request
// finishes on its own (the client fails it when it gives the connection up).
func zkCall[T any](ctx context.Context, timeout time.Duration, f func() (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// keyPath is the node of key: its name escaped into one path segment.
func (z *Zk) keyPath(key string) string {
	name := url.PathEscape(key)
	if name == "." || name == ".." {
		name = strings.ReplaceAll(name, ".", "%2E")
	}
	return z.opts.Root + "/" + name
}

// pick returns the next session, round robin.
func (z *Zk) pick() *zkSession {
	return z.sessions[(z.next.Add(1)-1)%uint64(len(z.sessions))]
}

// nodePrefix starts the name of an attempt's node: its token, so that an
// attempt whose create answer was lost can find its node (Curator's
// protected mode).
const nodePrefix = "lock-"

// Acquire makes one attempt at key: create an ephemeral sequential node
// under the key's node and list the queue; the first node holds the key.
// Otherwise it waits up to ZkOptions.Wait for its predecessor to go, and
// then gives up: its node is deleted and the attempt is contended.
func (z *Zk) Acquire(ctx context.Context, key string, ttl time.Duration) (_ Lease, _ Outcome, err error) {
	if err := z.checkTTL(ttl); err != nil {
		return Lease{}, Failed, err
	}
	s := z.pick()
	if s.conn.State() != zk.StateHasSession {
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w (%v)", key, ErrZkNoSession, s.conn.State())
	}
	sid := s.conn.SessionID()
	defer func() { s.dropExpired(err, sid) }()
	z.sweepOrphans(ctx)
	start := time.Now()
	token := NewToken()
	parent := z.keyPath(key)
	path, err := z.create(ctx, s, parent, token)
	if err != nil {
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	}
	first, err := z.queue(ctx, s, parent, path, start)
	if err != nil || !first {
		// Leave no node in the queue: it would block the key for the
		// session's life.
		derr := z.deleteNode(context.WithoutCancel(ctx), s, path)
		if derr != nil {
			z.orphans.add(zkOrphan{session: s, parent: parent, token: token})
		}
		if err != nil {
			return Lease{}, Failed, fmt.Errorf("acquire %s: %w%s", key, err, errSuffix("delete own node", derr))
		}
		return Lease{}, Contended, nil
	}
	st, err := zkCall(ctx, z.opts.Timeout, func() (*zk.Stat, error) { _, st, err := s.conn.Exists(path); return st, err })
	if err == nil && st == nil {
		// The session expired between the listing and now: the node is gone.
		return Lease{}, Failed, fmt.Errorf("acquire %s: node %s vanished: %w", key, path, zk.ErrSessionExpired)
	}
	if err != nil {
		derr := z.deleteNode(context.WithoutCancel(ctx), s, path)
		if derr != nil {
			z.orphans.add(zkOrphan{session: s, parent: parent, token: token})
		}
		return Lease{}, Failed, fmt.Errorf("acquire %s: read the node's czxid: %w%s", key, err, errSuffix("delete own node", derr))
	}
	return Lease{Key: key, Token: token, Fence: st.Czxid, Start: start, Validity: z.Granted(),
		handle: zkHandle{session: s, path: path, owner: st.EphemeralOwner}}, OK, nil
}

// create makes the attempt's ephemeral sequential node, creating the
// key's node (a container, which the ensemble deletes once empty) and the
// root first when missing. An answer lost on the way leaves a node the
// attempt cannot name; it is looked up by its token and deleted.
func (z *Zk) create(ctx context.Context, s *zkSession, parent, token string) (string, error) {
	prefix := parent + "/" + nodePrefix + token + "-"
	mk := func() (string, error) {
		return s.conn.Create(prefix, []byte(token), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	}
	path, err := zkCall(ctx, z.opts.Timeout, mk)
	// The key's container may be missing, or deleted by the ensemble (once
	// empty) between its creation and the node's: a few tries, as Curator.
	for try := 0; try < 3 && errors.Is(err, zk.ErrNoNode); try++ {
		if err = z.ensureParents(ctx, s, parent); err == nil {
			path, err = zkCall(ctx, z.opts.Timeout, mk)
		}
	}
	if err != nil && maybeCreated(err) {
		z.dropOrphan(context.WithoutCancel(ctx), zkOrphan{session: s, parent: parent, token: token})
	}
	return path, err
}

// dropOrphan deletes the node an attempt may have left, if it is there;
// when the ensemble cannot be asked now (the connection that lost the
// create's answer is still down), it is kept for a later attempt: left,
// it would hold its key until the session ends.
func (z *Zk) dropOrphan(ctx context.Context, o zkOrphan) {
	p, err := z.findOwn(ctx, o.session, o.parent, o.token)
	if err == nil && p != "" {
		err = z.deleteNode(ctx, o.session, p)
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		z.orphans.add(o)
	}
}

// sweepOrphans deletes the nodes earlier attempts could not, before this
// attempt queues (its own key's orphan would make it contended).
func (z *Zk) sweepOrphans(ctx context.Context) {
	for _, o := range z.orphans.take() {
		if o.session.conn.State() != zk.StateHasSession {
			z.orphans.add(o)
			continue
		}
		z.dropOrphan(context.WithoutCancel(ctx), o)
	}
}

// maybeCreated reports whether a create that failed with err may still
// have been carried out: sent, and no answer came back.
func maybeCreated(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrSessionMoved)
}

// ensureParents creates the root and the key's container node; one that
// another attempt created meanwhile is fine.
func (z *Zk) ensureParents(ctx context.Context, s *zkSession, parent string) error {
	for _, p := range []string{z.opts.Root, parent} {
		flags := int32(zk.FlagContainer)
		if p == z.opts.Root {
			flags = 0 // the root is permanent: DeletePrefix removes keys, not it
		}
		_, err := zkCall(ctx, z.opts.Timeout, func() (string, error) {
			if flags == 0 {
				return s.conn.Create(p, nil, flags, zk.WorldACL(zk.PermAll))
			}
			return s.conn.CreateContainer(p, nil, flags, zk.WorldACL(zk.PermAll))
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

// findOwn returns the path of the node under parent named with token, or
// "" when there is none.
func (z *Zk) findOwn(ctx context.Context, s *zkSession, parent, token string) (string, error) {
	kids, err := zkCall(ctx, z.opts.Timeout, func() ([]string, error) { k, _, err := s.conn.Children(parent); return k, err })
	if err != nil {
		return "", err
	}
	for _, k := range kids {
		if strings.HasPrefix(k, nodePrefix+token+"-") {
			return parent + "/" + k, nil
		}
	}
	return "", nil
}

// queue lists the key's nodes and reports whether path is the first. Not
// first, it watches its predecessor until that goes or ZkOptions.Wait
// after start has passed, and lists again.
func (z *Zk) queue(ctx context.Context, s *zkSession, parent, path string, start time.Time) (bool, error) {
	deadline := start.Add(z.opts.Wait)
	for {
		kids, err := zkCall(ctx, z.opts.Timeout, func() ([]string, error) { k, _, err := s.conn.Children(parent); return k, err })
		if err != nil {
			return false, fmt.Errorf("list %s: %w", parent, err)
		}
		sortBySequence(kids)
		own := strings.TrimPrefix(path, parent+"/")
		i := slices.Index(kids, own)
		switch {
		case i < 0:
			return false, fmt.Errorf("own node %s is gone: %w", path, zk.ErrSessionExpired)
		case i == 0:
			return true, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return false, nil
		}
		if err := z.watchGone(ctx, s, parent+"/"+kids[i-1], wait); err != nil {
			return false, err
		}
	}
}

// watchGone waits, up to wait, for the node at pred to be deleted; it
// returns nil when it is gone or the wait ended.
func (z *Zk) watchGone(ctx context.Context, s *zkSession, pred string, wait time.Duration) error {
	type watch struct {
		exists bool
		ch     <-chan zk.Event
	}
	w, err := zkCall(ctx, z.opts.Timeout, func() (watch, error) {
		ok, _, ch, err := s.conn.ExistsW(pred)
		return watch{ok, ch}, err
	})
	if err != nil {
		return fmt.Errorf("watch %s: %w", pred, err)
	}
	if !w.exists {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// sortBySequence orders a key's nodes by their sequence number, the ten
// digits after the last dash: the names start with each attempt's token,
// so sorting by name would not be their order of creation.
func sortBySequence(kids []string) {
	seq := func(name string) string { return name[strings.LastIndexByte(name, '-')+1:] }
	slices.SortFunc(kids, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
}

// deleteNode deletes path, which may already be gone.
func (z *Zk) deleteNode(ctx context.Context, s *zkSession, path string) error {
	_, err := zkCall(ctx, z.opts.Timeout, func() (struct{}, error) { return struct{}{}, s.conn.Delete(path, -1) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

func zkLease(lease Lease) (zkHandle, error) {
	h, ok := lease.handle.(zkHandle)
	if !ok {
		return zkHandle{}, fmt.Errorf("zk lease of %s: %w", lease.Key, ErrForeignLease)
	}
	return h, nil
}

// Renew confirms the holder's node still exists under its session: the
// session itself is kept alive by the client's pings, so a renewal cannot
// extend it beyond the session timeout, only tell that it is still there
// (and, being a request, reset the ensemble's timer for it). A node gone
// is Lost, or Taken when another attempt now holds the key.
func (z *Zk) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	h, err := zkLease(*lease)
	if err != nil {
		return Failed, err
	}
	if err := z.checkTTL(ttl); err != nil {
		return Failed, err
	}
	start := time.Now()
	sid := h.session.conn.SessionID()
	st, err := zkCall(ctx, z.opts.Timeout, func() (*zk.Stat, error) { _, st, err := h.session.conn.Exists(h.path); return st, err })
	if err != nil {
		h.session.dropExpired(err, sid)
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	if st == nil || st.EphemeralOwner != h.owner || st.Czxid != lease.Fence {
		return z.gone(ctx, h, lease.Key)
	}
	lease.Start, lease.Validity = start, z.Granted()
	return OK, nil
}

// Release deletes the holder's node, which only it ever had (its name
// holds the owner's token). A node gone (its session expired) is Lost, or
// Taken when another attempt now holds the key.
func (z *Zk) Release(ctx context.Context, lease Lease) (Outcome, error) {
	h, err := zkLease(lease)
	if err != nil {
		return Failed, err
	}
	sid := h.session.conn.SessionID()
	_, err = zkCall(ctx, z.opts.Timeout, func() (struct{}, error) { return struct{}{}, h.session.conn.Delete(h.path, -1) })
	switch {
	case err == nil:
		return OK, nil
	case !errors.Is(err, zk.ErrNoNode):
		h.session.dropExpired(err, sid)
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	}
	return z.gone(ctx, h, lease.Key)
}

// LeaseEnded reports when lease's session ended, as the client learnt
// on reconnecting after the ensemble expired it: every lease of the
// session ended with it, unasked (see SessionLocker).
func (z *Zk) LeaseEnded(lease Lease) (time.Time, bool) {
	h, err := zkLease(lease)
	if err != nil {
		return time.Time{}, false
	}
	return h.session.ends.endedAt(h.owner)
}

// gone tells, for a holder whose node is gone, whether another attempt
// holds the key now (Taken) or none does (Lost).
func (z *Zk) gone(ctx context.Context, h zkHandle, key string) (Outcome, error) {
	parent := h.path[:strings.LastIndexByte(h.path, '/')]
	kids, err := zkCall(ctx, z.opts.Timeout, func() ([]string, error) { k, _, err := h.session.conn.Children(parent); return k, err })
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return Lost, nil
	case err != nil:
		return Lost, fmt.Errorf("%s: node gone; whether another owner holds the key is unknown: %w", key, err)
	case len(kids) > 0:
		return Taken, nil
	}
	return Lost, nil
}

// DeletePrefix deletes the nodes of every key starting with prefix (and
// what is under them), and nothing else; it returns how many keys it
// deleted.
func (z *Zk) DeletePrefix(ctx context.Context, prefix string) (int64, error) {
	s := z.sessions[0]
	keys, err := zkCall(ctx, z.opts.Timeout, func() ([]string, error) { k, _, err := s.conn.Children(z.opts.Root); return k, err })
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("delete %s*: list %s: %w", prefix, z.opts.Root, err)
	}
	var n int64
	var errs []error
	for _, k := range keys {
		key, uerr := url.PathUnescape(k)
		if uerr != nil || !strings.HasPrefix(key, prefix) {
			continue
		}
		if err := z.deleteTree(ctx, s, z.opts.Root+"/"+k); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("delete %s*: %w", prefix, err)
	}
	return n, nil
}

// deleteTree deletes path and its children (a key's node holds only
// attempts' nodes, one level deep).
func (z *Zk) deleteTree(ctx context.Context, s *zkSession, path string) error {
	kids, err := zkCall(ctx, z.opts.Timeout, func() ([]string, error) { k, _, err := s.conn.Children(path); return k, err })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := z.deleteNode(ctx, s, path+"/"+k); err != nil {
			return err
		}
	}
	return z.deleteNode(ctx, s, path)
}

// ZkErrorKind names a ZooKeeper client error for the errors-by-kind
// counters ("zk_connection_closed", "zk_session_expired", …), or "" when
// err is none.
func ZkErrorKind(err error) string {
	kinds := []struct {
		err  error
		kind string
	}{
		{zk.ErrConnectionClosed, "zk_connection_closed"}, {zk.ErrSessionExpired, "zk_session_expired"},
		{zk.ErrNoServer, "zk_no_server"}, {zk.ErrClosing, "zk_closing"}, {zk.ErrSessionMoved, "zk_session_moved"},
		{ErrZkNoSession, "zk_no_session"},
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return ""
}
