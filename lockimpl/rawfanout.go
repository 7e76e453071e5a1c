package lockimpl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
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

// rawNode is one master reached by hand-spoken RESP over connections of its
// own, dialled with its client's options (address, dialer, TLS, credentials,
// database), so proxies and faults act on them as on the client's.
type rawNode struct {
	opts *redis.Options
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// idle holds connections between calls; one that does not fit is closed.
	idle chan *rawConn
	// hello is what a new connection sends before its first command (AUTH,
	// SELECT), pipelined with it so a paused master costs no extra wait.
	hello []byte
	// helloReplies is how many replies hello draws.
	helloReplies int
}

// rawConn is one connection with its reader and a reusable write buffer.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
	buf  []byte
	// pending is how many handshake replies precede the next command's.
	pending int
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
	n := &rawNode{opts: o, dial: o.Dialer, idle: make(chan *rawConn, max(o.PoolSize, 8))}
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

// get takes an idle connection or dials a new one, bounded by deadline.
func (n *rawNode) get(ctx context.Context, deadline time.Time) (*rawConn, error) {
	select {
	case c := <-n.idle:
		return c, nil
	default:
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := n.dial(dctx, n.network(), n.opts.Addr)
	if err != nil {
		return nil, err
	}
	c := &rawConn{conn: conn, r: bufio.NewReaderSize(conn, 512), buf: make([]byte, 0, 256)}
	c.buf = append(c.buf, n.hello...)
	c.pending = n.helloReplies
	return c, nil
}

func (n *rawNode) network() string {
	if n.opts.Network != "" {
		return n.opts.Network
	}
	return "tcp"
}

// put keeps a connection whose last reply was read whole, or closes it.
func (n *rawNode) put(c *rawConn) {
	select {
	case n.idle <- c:
	default:
		_ = c.conn.Close()
	}
}

// close closes every idle connection.
func (n *rawNode) close() {
	for {
		select {
		case c := <-n.idle:
			_ = c.conn.Close()
		default:
			return
		}
	}
}

// rawError is a server's error reply. It is a redis.Error, so error kinds
// and maybeDelivered treat it as go-redis's own.
type rawError string

func (e rawError) Error() string { return string(e) }

// RedisError marks rawError as a server reply.
func (rawError) RedisError() {}

// rawReply is one RESP reply: an integer, a simple or bulk string, or nil.
type rawReply struct {
	isNil bool
	n     int64
	s     string
}

// read reads one reply (after any handshake replies still owed). A server
// error reply comes back as a rawError with the connection still usable.
func (c *rawConn) read() (rawReply, error) {
	for c.pending > 0 {
		rep, err := c.readOne()
		if err != nil {
			return rep, fmt.Errorf("connection handshake: %w", err)
		}
		c.pending--
	}
	return c.readOne()
}

func (c *rawConn) readOne() (rawReply, error) {
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
		return rawReply{s: string(body)}, nil
	case '-':
		return rawReply{}, rawError(body)
	case ':':
		v, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return rawReply{}, fmt.Errorf("malformed integer reply %q", body)
		}
		return rawReply{n: v}, nil
	case '$':
		size, err := strconv.Atoi(string(body))
		if err != nil || size < -1 {
			return rawReply{}, fmt.Errorf("malformed bulk reply %q", body)
		}
		if size == -1 {
			return rawReply{isNil: true}, nil
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return rawReply{}, err
		}
		return rawReply{s: string(b[:size])}, nil
	}
	return rawReply{}, fmt.Errorf("unexpected reply %q", line)
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

// rawCommand is what a raw fan-out sends to each master and how it reads the
// reply. retry, when set, is sent once on the same connection if the first
// reply was an error it accepts (EVALSHA's NOSCRIPT after a restart).
type rawCommand struct {
	args  []string
	retry func(err error) []string
	// outcome maps master i's reply (or failure) to an outcome.
	outcome func(i int, rep rawReply, err error) (Outcome, error)
}

// scriptCommand runs a compare-and-act script by its hash, falling back to
// its source on a master that does not have it cached.
func scriptCommand(script *redis.Script, src, key string, args ...string) rawCommand {
	sha := append([]string{"EVALSHA", script.Hash(), "1", key}, args...)
	return rawCommand{
		args: sha,
		retry: func(err error) []string {
			var rerr rawError
			if errors.As(err, &rerr) && len(rerr) >= 8 && rerr[:8] == "NOSCRIPT" {
				return append([]string{"EVAL", src, "1", key}, args...)
			}
			return nil
		},
		outcome: func(i int, rep rawReply, err error) (Outcome, error) {
			if err != nil {
				return Failed, fmt.Errorf("master %d: %w", i, err)
			}
			return scriptOutcome(rep.n), nil
		},
	}
}

// rawFanOut sends cmd to every master, then reads the replies: every one
// within timeout, or with bound > 0 and shorter, those that came within
// bound, leaving the rest to be read in the background, where onLate sees
// them. Its tally and stragglers mean what fanOut's do.
func (r *Redlock) rawFanOut(ctx context.Context, timeout, bound time.Duration, onLate func(nodeReply), cmd rawCommand) (tally, *stragglers) {
	n := len(r.raw)
	start := time.Now()
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	wait := deadline
	if bound > 0 && bound < timeout {
		wait = start.Add(bound)
	}
	var connsArr [MaxRawMasters]*rawConn
	conns := connsArr[:n]
	t := tally{n: n, quorum: Quorum(n)}
	for i, node := range r.raw {
		c, err := node.get(ctx, deadline)
		if err == nil {
			c.buf = appendCommand(c.buf, cmd.args...)
			_ = c.conn.SetWriteDeadline(deadline)
			_, err = c.conn.Write(c.buf)
			c.buf = c.buf[:0]
			if err != nil {
				_ = c.conn.Close()
			}
		}
		if err != nil {
			out, oerr := cmd.outcome(i, rawReply{}, err)
			t.add(nodeReply{node: i, out: out, err: oerr})
			continue
		}
		conns[i] = c
	}
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
		readBy := wait
		if now := time.Now(); !now.Before(wait) {
			readBy = now.Add(rawLateGrace)
		}
		keep := readBy.Before(deadline)
		rep, err := r.rawRead(i, c, cmd, readBy, keep)
		if err != nil && keep && isTimeout(err) {
			lateNodes = append(lateNodes, i)
			continue
		}
		out, oerr := cmd.outcome(i, rep, err)
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
	go func() {
		defer r.cleanup.Done()
		defer close(late.done)
		for k, i := range lateNodes {
			rep, err := r.rawRead(i, waiting[k], cmd, deadline, false)
			out, oerr := cmd.outcome(i, rep, err)
			if onLate != nil {
				onLate(nodeReply{node: i, out: out, err: oerr})
			}
		}
	}()
	return t, late
}

// rawRead reads master i's reply by readBy, retrying once where cmd allows.
// The connection goes back to the pool after a whole reply, stays open for
// the caller after a timeout when keep is set (a fan-out's bound passed, and
// the reply is read on in the background), and is closed otherwise: its
// state is unknown.
func (r *Redlock) rawRead(i int, c *rawConn, cmd rawCommand, readBy time.Time, keep bool) (rawReply, error) {
	_ = c.conn.SetReadDeadline(readBy)
	rep, err := c.read()
	if err != nil && cmd.retry != nil {
		if again := cmd.retry(err); again != nil {
			c.buf = appendCommand(c.buf[:0], again...)
			_ = c.conn.SetWriteDeadline(readBy)
			_, werr := c.conn.Write(c.buf)
			c.buf = c.buf[:0]
			if werr != nil {
				err = werr
			} else {
				rep, err = c.read()
			}
		}
	}
	var rerr rawError
	switch {
	case err == nil, errors.As(err, &rerr):
		r.raw[i].put(c)
	case keep && isTimeout(err):
	default:
		_ = c.conn.Close()
	}
	return rep, err
}

// MaxRawMasters bounds the masters a raw fan-out serves with no allocation.
const MaxRawMasters = 16
