package lockimpl

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// Redlock's fan-out at its floor. A goroutine per master costs a wake-up and
// a hand-off per master per call, and go-redis a command object, a pool
// checkout and a reader per command: on loopback that is more than the round
// trip itself. So a fan-out that waits for every master (acquire and renew
// without --fail-fast, and release up to its bound) writes its command to
// every master's socket first and only then reads the replies, on one
// goroutine, over connections of the lock's own spoken to in RESP by hand.
// Waiting for all replies in order costs nothing over waiting in arrival
// order: the call ends when the slowest master answered or the deadline
// passed, either way. Fail-fast, which must return on the first deciding
// replies whichever master sends them, keeps the goroutine fan-out.

// rawLateGrace is how long a reply is waited for once the fan-out's bound or
// deadline has passed while another master's reply was awaited: a master
// that answered meanwhile has its reply in the socket already, and only one
// that did not costs this much more.
const rawLateGrace = time.Millisecond

// rawReadyWait bounds the read of a reply that has begun to come in once
// the wait is over: it is read whole, not left late.
const rawReadyWait = 100 * time.Millisecond

// rawNode is one master reached by hand-spoken RESP over connections of its
// own, dialled with its client's options (address, dialer, TLS, credentials,
// database), so proxies and faults act on them as on the client's.
//
// A call never dials: one that finds no idle connection for some master
// falls back to the goroutine fan-out and asks for one more connection in
// the background, so a master that is slow to accept (paused, blackholed,
// in a TLS handshake) can never hold up the writes to the others.
type rawNode struct {
	opts *redis.Options
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// idle holds connections between calls.
	idle chan *rawConn
	// hello is what a new connection sends before it is used (AUTH,
	// SELECT), and helloReplies how many replies that draws.
	hello        []byte
	helloReplies int
	// max bounds the connections open at once (the client's pool size);
	// open counts them, idle, in use and being dialled.
	max  int32
	open atomic.Int32
	// dialing lets one background dial run at a time.
	dialing atomic.Bool
	closed  atomic.Bool
	// waiting counts the calls waiting for a connection (see rawOne's
	// awaitIdle); while any wait, a dial that ends starts the next.
	waiting atomic.Int32
}

// rawConn is one connection with its reader and a reusable write buffer.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
	buf  []byte
	// sys and peek probe the socket for alive (nil: not probed).
	sys     syscall.RawConn
	peek    func(fd uintptr) bool
	peekBuf [1]byte
	// fd is the socket's descriptor, for probing every master of a fan-out
	// with one poll (see aliveAll); -1 where the socket is not probed. It
	// stays valid while the connection is open, and only the holder of the
	// connection closes it.
	fd int
	// readBy is the read deadline last set on conn, so a read that wants
	// the same one does not set it again.
	readBy time.Time
	// peekN and peekAgain are the last probe's result: bytes waiting (-1
	// for none or an error), and whether the socket said "nothing yet".
	peekN     int
	peekAgain bool
}

// rawNodes returns a rawNode per master when every master is a plain
// go-redis client, nil otherwise (an auto-pipeliner, a test's wrapper): the
// fan-out then stays on the Cmdable interface.
func rawNodes(nodes []redis.Cmdable) []*rawNode {
	out := make([]*rawNode, len(nodes))
	for i, n := range nodes {
		c, ok := n.(*redis.Client)
		if !ok {
			return nil
		}
		out[i] = newRawNode(c.Options())
	}
	return out
}

func newRawNode(o *redis.Options) *rawNode {
	size := max(o.PoolSize, 1)
	n := &rawNode{opts: o, dial: o.Dialer, idle: make(chan *rawConn, size), max: int32(size)}
	if n.dial == nil {
		n.dial = redis.NewDialer(o)
	}
	if o.Password != "" {
		if o.Username != "" {
			n.hello = appendCommand(n.hello, "AUTH", o.Username, o.Password)
		} else {
			n.hello = appendCommand(n.hello, "AUTH", o.Password)
		}
		n.helloReplies++
	}
	if o.DB != 0 {
		n.hello = appendCommand(n.hello, "SELECT", strconv.Itoa(o.DB))
		n.helloReplies++
	}
	return n
}

// take returns an idle connection that is still open, or nil, having then
// asked for another in the background (tracked by wg).
func (n *rawNode) take(wg *sync.WaitGroup) *rawConn {
	for {
		c := n.pop(wg)
		if c == nil || c.alive() {
			return c
		}
		n.discard(c)
	}
}

// pop returns an idle connection, unchecked, or nil, having then asked for
// another in the background (tracked by wg).
func (n *rawNode) pop(wg *sync.WaitGroup) *rawConn {
	select {
	case c := <-n.idle:
		return c
	default:
		n.grow(wg)
		return nil
	}
}

// grow dials one more connection in the background, unless one is being
// dialled already or the node has its pool's worth.
func (n *rawNode) grow(wg *sync.WaitGroup) {
	if n.closed.Load() || n.open.Load() >= n.max || !n.dialing.CompareAndSwap(false, true) {
		return
	}
	n.open.Add(1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := n.connect()
		n.dialing.Store(false)
		if err != nil {
			n.open.Add(-1)
			return
		}
		n.put(c)
		if n.waiting.Load() > 0 {
			// Calls wait for a connection (the single lock's awaitIdle):
			// dial the next one now rather than on the next call that
			// finds none.
			n.grow(wg)
		}
	}()
}

// connect dials the master and completes the handshake, so a connection in
// the pool is always ready for a command; a refused AUTH or SELECT closes it.
func (n *rawNode) connect() (*rawConn, error) {
	timeout := n.opts.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	network := n.opts.Network
	if network == "" {
		network = "tcp"
	}
	conn, err := n.dial(ctx, network, n.opts.Addr)
	if err != nil {
		return nil, err
	}
	c := &rawConn{conn: conn, r: bufio.NewReaderSize(conn, 512), buf: make([]byte, 0, 256), fd: -1}
	c.preparePeek()
	if len(n.hello) > 0 {
		_ = conn.SetDeadline(time.Now().Add(timeout))
		_, err = conn.Write(n.hello)
		for i := 0; err == nil && i < n.helloReplies; i++ {
			_, err = c.read()
		}
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("connection handshake with %s: %w", n.opts.Addr, err)
		}
	}
	return c, nil
}

// put keeps a connection whose last reply was read whole, or closes it.
func (n *rawNode) put(c *rawConn) {
	if n.closed.Load() {
		n.discard(c)
		return
	}
	select {
	case n.idle <- c:
	default:
		n.discard(c)
	}
}

// discard closes a connection that will not be used again.
func (n *rawNode) discard(c *rawConn) {
	_ = c.conn.Close()
	n.open.Add(-1)
}

// close closes every idle connection, and any put back later.
func (n *rawNode) close() {
	n.closed.Store(true)
	for {
		select {
		case c := <-n.idle:
			n.discard(c)
		default:
			return
		}
	}
}

// preparePeek readies the socket probe of alive and ready once per connection, so that the check
// before every use allocates nothing. A connection without a socket of its
// own (TLS, whose socket may carry records of its own) is not probed.
func (c *rawConn) preparePeek() {
	sc, ok := c.conn.(syscall.Conn) // a *tls.Conn is not one
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	c.sys = raw
	_ = raw.Control(func(fd uintptr) { c.fd = int(fd) })
	c.peek = func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), c.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		c.peekN, c.peekAgain = n, n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	}
}

// alive reports whether an idle connection is still open and in step: a
// server that restarted left its connections closed, and their first use
// would fail a command the master would have answered. The socket is
// peeked without blocking, as go-redis checks its pooled connections.
func (c *rawConn) alive() bool {
	if c.r.Buffered() > 0 {
		return false
	}
	if c.sys == nil {
		return true
	}
	// Nothing to read is the healthy case; a byte is a reply no one asked
	// for, and 0 bytes without an error is the peer's close.
	return c.sys.Read(c.peek) == nil && c.peekAgain
}

// aliveAll reports which of conns (nil entries skipped) are still open and
// in step, as alive does, probing every socket in one poll rather than one
// peek each: an idle connection with nothing to read is healthy, and poll
// says so of all of them at once. A socket that reports anything (bytes no
// one asked for, the peer's close, an error) is not; one that cannot be
// polled is peeked on its own.
func aliveAll(conns []*rawConn) (alive [MaxRawMasters]bool) {
	var fds [MaxRawMasters]unix.PollFd
	var at [MaxRawMasters]int
	n := 0
	for i, c := range conns {
		switch {
		case c == nil:
		case c.r.Buffered() > 0:
		case c.fd < 0:
			alive[i] = c.alive()
		default:
			fds[n] = unix.PollFd{Fd: int32(c.fd), Events: unix.POLLIN}
			at[n] = i
			alive[i] = true
			n++
		}
	}
	if n == 0 {
		return alive
	}
	ready, err := unix.Poll(fds[:n], 0)
	for err == unix.EINTR {
		ready, err = unix.Poll(fds[:n], 0)
	}
	switch {
	case err != nil:
		// The probe itself failed: ask each socket on its own.
		for _, i := range at[:n] {
			alive[i] = conns[i].alive()
		}
	case ready > 0:
		for k, i := range at[:n] {
			alive[i] = fds[k].Revents == 0
		}
	}
	return alive
}

// ready reports whether a reply has (begun to) come in: buffered, or
// waiting in the socket. It sets no deadline, so a goroutine preempted on
// a busy machine cannot miss a reply that was there.
func (c *rawConn) ready() bool {
	if c.r.Buffered() > 0 {
		return true
	}
	return c.sys != nil && c.sys.Read(c.peek) == nil && c.peekN > 0
}

// rawError is a server's error reply. It is a redis.Error, so error kinds
// and maybeDelivered treat it as go-redis's own.
type rawError string

func (e rawError) Error() string { return string(e) }

// RedisError marks rawError as a server reply.
func (rawError) RedisError() {}

// rawReply is one RESP reply as the lock commands need it: an integer,
// whether it was nil (a SET NX that found the key held), its kind, and
// whether it said OK. The text of a simple or bulk string is not needed,
// and not copied: a definition's rules tell replies apart by kind alone.
type rawReply struct {
	isNil bool
	// ok is a simple or bulk string reading OK (as go-redis's Cmd.Val
	// gives both as the string "OK").
	ok bool
	// kind is the reply's RESP type byte: '+', ':', '$' or '*'.
	kind byte
	n    int64
}

// read reads one reply. A server error reply comes back as a rawError with
// the connection still usable.
func (c *rawConn) read() (rawReply, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return rawReply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return rawReply{}, fmt.Errorf("malformed reply %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return rawReply{kind: '+', ok: string(body) == "OK"}, nil
	case '-':
		return rawReply{}, rawError(body)
	case ':':
		v, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return rawReply{}, fmt.Errorf("malformed integer reply %q", body)
		}
		return rawReply{kind: ':', n: v}, nil
	case '$':
		size, err := strconv.Atoi(string(body))
		if err != nil || size < -1 {
			return rawReply{}, fmt.Errorf("malformed bulk reply %q", body)
		}
		if size == -1 {
			return rawReply{kind: '$', isNil: true}, nil
		}
		return c.readBulk(size)
	case '*':
		return c.readArray(body)
	}
	return rawReply{}, fmt.Errorf("unexpected reply %q", line)
}

// readBulk reads a bulk string's size bytes and CRLF, noting only whether
// it reads OK.
func (c *rawConn) readBulk(size int) (rawReply, error) {
	rep := rawReply{kind: '$'}
	if size == 2 {
		b, err := c.r.Peek(2)
		if err != nil {
			return rawReply{}, err
		}
		rep.ok = string(b) == "OK"
	}
	if _, err := c.r.Discard(size + 2); err != nil {
		return rawReply{}, err
	}
	return rep, nil
}

// readArray reads an array (a script may return a table) and skips its
// elements, error replies among them: no rule reads an array, but the
// connection stays in step. A nil array is nil, as go-redis reads it.
//
//go:noinline
func (c *rawConn) readArray(body []byte) (rawReply, error) {
	size, err := strconv.Atoi(string(body))
	if err != nil || size < -1 {
		return rawReply{}, fmt.Errorf("malformed array reply %q", body)
	}
	if size == -1 {
		return rawReply{kind: '*', isNil: true}, nil
	}
	for range size {
		if _, err := c.read(); err != nil {
			if _, isReply := err.(rawError); !isReply {
				return rawReply{}, err
			}
		}
	}
	return rawReply{kind: '*'}, nil
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(buf []byte, args ...string) []byte {
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(args)), 10)
	buf = append(buf, '\r', '\n')
	for _, a := range args {
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(a)), 10)
		buf = append(buf, '\r', '\n')
		buf = append(buf, a...)
		buf = append(buf, '\r', '\n')
	}
	return buf
}

// rawOp is what a raw command does, which decides how its replies count.
type rawOp uint8

const (
	// rawSetNX is SET key token NX PX ttl, counted like setOne.
	rawSetNX rawOp = iota
	// rawScript is EVALSHA of a compare-and-act script; a master that lost
	// its script cache (NOSCRIPT) is sent the source by EVAL on the same
	// connection.
	rawScript
)

// rawCommand is what a raw fan-out sends to each master: plain data, built
// on the caller's stack, so a fan-out allocates no command or closure.
type rawCommand struct {
	op   rawOp
	args [6]string
	n    int
	// src is a rawScript's source, for the EVAL after NOSCRIPT.
	src string
}

func (c *rawCommand) argv() []string { return c.args[:c.n] }

// name is the command's name as INFO commandstats writes it, in lower case
// without converting on every send.
func (c *rawCommand) name() string {
	switch {
	case c.op == rawSetNX:
		return "set"
	case c.args[0] == "EVAL":
		return "eval"
	}
	return "evalsha"
}

// setNXCommand is SET key token NX PX ttl.
func setNXCommand(key, token string, ttl time.Duration) rawCommand {
	return rawCommand{op: rawSetNX, n: 6, args: [6]string{"SET", key, token, "NX", "PX", strconv.FormatInt(ttl.Milliseconds(), 10)}}
}

// scriptCommand runs a compare-and-act script on key by its hash, with the
// token and, for renew, the new TTL in ms.
func scriptCommand(script *redis.Script, src, key string, args ...string) rawCommand {
	c := rawCommand{op: rawScript, src: src, args: [6]string{"EVALSHA", script.Hash(), "1", key}}
	c.n = 4 + copy(c.args[4:], args)
	return c
}

// evalFallback is the EVAL to send after a NOSCRIPT reply, or false when
// err is not one (or c runs no script).
func (c *rawCommand) evalFallback(err error) (rawCommand, bool) {
	if c.op != rawScript || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return rawCommand{}, false
	}
	again := *c
	again.args[0], again.args[1] = "EVAL", c.src
	return again, true
}

// rawOutcome maps master i's reply to cmd (or its failure) to an outcome.
func (r *Redlock) rawOutcome(cmd *rawCommand, i int, rep rawReply, err error) (Outcome, error) {
	if cmd.op == rawSetNX {
		return r.countSet(i, err == nil && !rep.isNil, err)
	}
	if err != nil {
		return Failed, fmt.Errorf("master %d: %w", i, err)
	}
	return scriptOutcome(rep.n), nil
}

// fanOutCmd runs a fan-out the raw way when every master has an idle raw
// connection, and through fanOut (op on goroutines) otherwise: with
// --fail-fast, for a lock over other Cmdables, while the raw pools fill, or
// while a master's connections are being replaced.
func (r *Redlock) fanOutCmd(ctx context.Context, timeout time.Duration, rule waitRule, bound time.Duration, onLate func(nodeReply),
	raw rawCommand, op func(ctx context.Context, node int) (Outcome, error)) (tally, *stragglers) {
	if r.raw != nil {
		if conns, ok := r.takeRaw(); ok {
			return r.rawFanOut(ctx, timeout, bound, onLate, &raw, conns)
		}
	}
	return r.fanOut(ctx, timeout, rule, bound, onLate, op)
}

// takeRaw takes an idle raw connection for every master, or none: the
// ones it took go back when some master has none. The connections are
// checked together (aliveAll), and a master whose connection was stale gets
// another, checked on its own.
func (r *Redlock) takeRaw() (conns [MaxRawMasters]*rawConn, ok bool) {
	ok = true
	for i, node := range r.raw {
		conns[i] = node.pop(&r.cleanup)
		ok = ok && conns[i] != nil
	}
	if ok {
		alive := aliveAll(conns[:len(r.raw)])
		for i, node := range r.raw {
			if !alive[i] {
				node.discard(conns[i])
				conns[i] = node.take(&r.cleanup)
				ok = ok && conns[i] != nil
			}
		}
	}
	if !ok {
		for i, c := range conns[:len(r.raw)] {
			if c != nil {
				r.raw[i].put(c)
			}
		}
	}
	return conns, ok
}

// rawFanOut writes cmd to every master on the connections given, then reads
// the replies: every one within timeout, or with bound > 0 and shorter,
// those that came within bound, leaving the rest to be read in the
// background, where onLate sees them. Its tally and stragglers mean what
// fanOut's do.
func (r *Redlock) rawFanOut(ctx context.Context, timeout, bound time.Duration, onLate func(nodeReply), cmd *rawCommand,
	connsArr [MaxRawMasters]*rawConn) (tally, *stragglers) {
	n := len(r.raw)
	start := time.Now()
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	wait := deadline
	if bound > 0 && start.Add(bound).Before(deadline) {
		wait = start.Add(bound)
	}
	conns := connsArr[:n]
	r.rawCalls.Add(1)
	t := tally{n: n, quorum: Quorum(n)}
	sent := 0
	for i, c := range conns {
		c.buf = appendCommand(c.buf[:0], cmd.argv()...)
		c.setDeadlines(deadline, wait)
		_, err := c.conn.Write(c.buf)
		if err == nil {
			sent++
		}
		if err != nil {
			r.raw[i].discard(c)
			conns[i] = nil
			out, oerr := r.rawOutcome(cmd, i, rawReply{}, err)
			t.add(nodeReply{node: i, out: out, err: oerr})
		}
	}
	r.sent.sentEach(cmd.name(), sent)
	var lateNodes []int
	// The last master written to is read first: by the time its reply is
	// in, the others' most likely are too, so the goroutine parks once
	// rather than once per master still busy.
	for i := n - 1; i >= 0; i-- {
		c := conns[i]
		if c == nil {
			continue
		}
		// Once the wait is over, a reply already in the socket is still
		// read, past the deadline too: the master answered in time, and
		// only this goroutine's reading it came later.
		readBy, keep := wait, wait.Before(deadline)
		if now := time.Now(); !now.Before(wait) {
			// A short deadline alone is not enough: Go refuses to read
			// once it has passed, even with the reply in the socket, and
			// a preempted goroutine can pass it before its read.
			if c.ready() {
				readBy, keep = now.Add(rawReadyWait), false
			} else {
				readBy = now.Add(rawLateGrace)
				keep = readBy.Before(deadline)
			}
		}
		rep, err := r.rawRead(i, c, cmd, readBy, keep)
		if err != nil && keep && isTimeout(err) {
			lateNodes = append(lateNodes, i)
			continue
		}
		out, oerr := r.rawOutcome(cmd, i, rep, err)
		t.add(nodeReply{node: i, out: out, err: oerr})
		conns[i] = nil
	}
	if len(lateNodes) == 0 {
		return t, nil
	}
	late := &stragglers{done: make(chan struct{}), nodes: lateNodes}
	waiting := make([]*rawConn, len(lateNodes))
	for k, i := range lateNodes {
		waiting[k] = conns[i]
	}
	r.cleanup.Add(1)
	// The command goes to the background reader as a copy: the caller's
	// stays on its stack.
	go func(cmd rawCommand) {
		defer r.cleanup.Done()
		defer close(late.done)
		for k, i := range lateNodes {
			rep, err := r.rawRead(i, waiting[k], &cmd, deadline, false)
			out, oerr := r.rawOutcome(&cmd, i, rep, err)
			if onLate != nil {
				onLate(nodeReply{node: i, out: out, err: oerr})
			}
		}
	}(*cmd)
	return t, late
}

// rawRead reads master i's reply by readBy, retrying once where cmd allows.
// The connection goes back to the pool after a whole reply, stays open for
// the caller after a timeout when keep is set (a fan-out's bound passed, and
// the reply is read on in the background), and is closed otherwise: its
// state is unknown.
func (r *Redlock) rawRead(i int, c *rawConn, cmd *rawCommand, readBy time.Time, keep bool) (rawReply, error) {
	c.setReadDeadline(readBy)
	rep, err := c.read()
	if err != nil {
		if again, ok := cmd.evalFallback(err); ok {
			c.buf = appendCommand(c.buf[:0], again.argv()...)
			_ = c.conn.SetWriteDeadline(readBy)
			_, werr := c.conn.Write(c.buf)
			if werr == nil {
				r.sent.sentAlone(again.name())
			}
			if werr != nil {
				err = werr
			} else {
				rep, err = c.read()
			}
		}
	}
	_, isReply := err.(rawError) // read returns a server's error reply as it is
	switch {
	case err == nil, isReply:
		r.raw[i].put(c)
	case keep && isTimeout(err):
	default:
		r.raw[i].discard(c)
	}
	return rep, err
}

// setDeadlines bounds the write that is about to go out by writeBy, and the
// read of its reply by readBy: with one call when they are the same (an
// acquire or renew, which waits for every reply up to its deadline), as a
// deadline is a timer the runtime re-arms on every call.
func (c *rawConn) setDeadlines(writeBy, readBy time.Time) {
	if writeBy.Equal(readBy) {
		_ = c.conn.SetDeadline(writeBy)
		c.readBy = readBy
		return
	}
	_ = c.conn.SetWriteDeadline(writeBy)
	c.setReadDeadline(readBy)
}

// setReadDeadline bounds the next read by readBy, unless it already is.
func (c *rawConn) setReadDeadline(readBy time.Time) {
	if readBy.Equal(c.readBy) {
		return
	}
	_ = c.conn.SetReadDeadline(readBy)
	c.readBy = readBy
}

// MaxRawMasters bounds the masters a raw fan-out serves with no allocation.
const MaxRawMasters = 16
