package lockimpl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/lockimpl/clock"
	"github.com/redis/go-redis/v9"
)

// A pipe batches many workers' commands onto a few connections to one
// server, so one generator reaches the server's limit (--pipeline auto).
//
// Measured against go-redis's auto-pipeliner on this workload (see
// BenchmarkPipelinedPairs and notes/29-pipeline.md): go-redis's blocking
// face keeps one ordered batch in flight, so the client and the server take
// turns and neither is ever busy for long; its other settings either split
// the stream into small batches or pay a hook host per command. A pipe runs
// one goroutine per connection, each of which takes every command queued at
// that moment, writes them in one write, and reads their replies in order:
// while one connection waits for the server, another is filling, so the
// generator's and the server's work overlap.

// DefaultPipeConns is how many connections a pipe keeps to its server: two
// batches in flight overlap the client's and the server's work; more split
// the queue into smaller batches and measured slower (BenchmarkPipelinedPairs).
const DefaultPipeConns = 2

// maxPipeBatch bounds the commands one write carries, so a batch's replies
// fit a read buffer or two and its callers are woken in good time.
const maxPipeBatch = 512

// pipeBufSize is a pipe connection's read buffer: a full batch's replies.
const pipeBufSize = 64 << 10

// ErrPipeClosed is returned for a command sent to (or still queued in) a
// pipe that was closed.
var ErrPipeClosed = errors.New("pipe closed")

// PipeOptions tune a pipe.
type PipeOptions struct {
	// Conns is how many connections (and batches in flight) the pipe keeps;
	// 0 means DefaultPipeConns.
	Conns int
	// Sent, when set, counts each batch as one round trip of its commands.
	Sent *SentCounter
}

// Pipe sends commands to one server in batches, over connections of its own
// dialled with a go-redis client's options (address, dialer, TLS,
// credentials, database), so a sentinel-aware client's dialer still finds
// the primary. Each command gets its own reply or error; a connection that
// fails fails only the commands it carried, and is redialled for the next
// batch. It is safe for concurrent use; Close ends it.
type Pipe struct {
	node        *rawNode
	sent        *SentCounter
	readTimeout time.Duration
	// mu guards the queue: the calls waiting for a connection, how many
	// connection goroutines wait for one (idle), and whether the pipe is
	// shut. A caller appends under mu and a connection goroutine takes every
	// call queued at once, so a call costs one short critical section on
	// each side rather than a channel operation each (measured: the
	// channel's select was the largest cost of a call).
	mu     sync.Mutex
	queued []*pipeCall
	idle   int
	shut   bool
	// pending counts the calls queued or in a batch not yet answered: a
	// batch takes at most its connection's share of them (see take; the
	// connections are wake's capacity, a token each).
	pending int
	// wake hands an idle connection goroutine a token when a call comes;
	// it holds one per connection, so sending never blocks.
	wake      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	calls     sync.Pool
}

// pipeCommand is one command as a pipe sends it: plain data, so queueing it
// allocates nothing but its call.
type pipeCommand struct {
	args [7]string
	n    int
	// src is an EVALSHA's script source, for the EVAL after NOSCRIPT.
	src string
	// wire, when set, is a lock definition's command, encoded once and
	// written with vals (args unused); eval resends it by EVAL.
	wire *defWire
	vals wireVals
	eval bool
}

func (c *pipeCommand) argv() []string { return c.args[:c.n] }

// appendTo appends the command in RESP.
func (c *pipeCommand) appendTo(buf []byte) []byte {
	if c.wire != nil {
		return c.wire.encode(buf, &c.vals, c.eval)
	}
	return appendCommand(buf, c.argv()...)
}

// name is the command's name as INFO commandstats writes it.
func (c *pipeCommand) name() string {
	if c.wire != nil {
		if c.eval {
			return "eval"
		}
		return c.wire.name
	}
	switch c.args[0] {
	case "SET":
		return "set"
	case "EVAL":
		return "eval"
	}
	return "evalsha"
}

// noScript is the EVAL to send after a NOSCRIPT reply, or false when err is
// not one (or c runs no script by hash).
func (c *pipeCommand) noScript(err error) (pipeCommand, bool) {
	if c.wire != nil {
		if c.wire.evalHead == nil || c.eval || !redis.HasErrorPrefix(err, "NOSCRIPT") {
			return pipeCommand{}, false
		}
		again := *c
		again.eval = true
		return again, true
	}
	if c.args[0] != "EVALSHA" || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return pipeCommand{}, false
	}
	again := *c
	again.args[0], again.args[1] = "EVAL", c.src
	return again, true
}

// pipeSetNX is SET key token NX PX ttlMS (the TTL in milliseconds, as text).
func pipeSetNX(key, token, ttlMS string) pipeCommand {
	return pipeCommand{n: 6, args: [7]string{"SET", key, token, "NX", "PX", ttlMS}}
}

// pipeScript runs script by its hash over keys, then args.
func pipeScript(script *redis.Script, src string, keys []string, args ...string) pipeCommand {
	c := pipeCommand{src: src, args: [7]string{"EVALSHA", script.Hash(), strconv.Itoa(len(keys))}}
	c.n = 3 + copy(c.args[3:], keys)
	c.n += copy(c.args[c.n:], args)
	return c
}

// pipeCall is one command on its way: the caller waits on done, which the
// connection goroutine signals once rep or err is set.
type pipeCall struct {
	cmd pipeCommand
	rep rawReply
	err error
	// sent is when its batch was written (clock.Now), read once per
	// batch: a lease taken by the command started no later than this.
	sent int64
	done chan struct{}
}

// NewPipe starts a pipe to the server c talks to, with c's options.
func NewPipe(c *redis.Client, opts PipeOptions) *Pipe {
	o := *c.Options()
	conns := opts.Conns
	if conns <= 0 {
		conns = DefaultPipeConns
	}
	o.PoolSize = conns
	p := &Pipe{node: newRawNode(&o), sent: opts.Sent, readTimeout: o.ReadTimeout, wake: make(chan struct{}, conns)}
	if p.readTimeout <= 0 {
		p.readTimeout = 3 * time.Second
	}
	p.calls.New = func() any { return &pipeCall{done: make(chan struct{}, 1)} }
	p.wg.Add(conns)
	for range conns {
		go p.serve()
	}
	return p
}

// Close stops the pipe: commands still queued fail with ErrPipeClosed, and
// its connections close once their batch is answered.
func (p *Pipe) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.shut = true
		idle := p.idle
		p.idle = 0
		p.mu.Unlock()
		for range idle {
			p.wake <- struct{}{}
		}
		p.wg.Wait()
		// No call is queued after shut: these are all that are left.
		p.mu.Lock()
		left := p.queued
		p.queued = nil
		p.mu.Unlock()
		answer(left, ErrPipeClosed)
	})
	return nil
}

// enqueue queues c for the next batch and wakes an idle connection
// goroutine, if one waits; false means the pipe is shut and c was not
// queued. A call queued is always answered: by its batch, or by Close.
func (p *Pipe) enqueue(c *pipeCall) bool {
	p.mu.Lock()
	if p.shut {
		p.mu.Unlock()
		return false
	}
	p.queued = append(p.queued, c)
	p.pending++
	wake := p.idle > 0
	if wake {
		p.idle--
	}
	p.mu.Unlock()
	if wake {
		p.wake <- struct{}{}
	}
	return true
}

// do sends cmd and waits for its reply. A caller whose ctx ends first
// returns ctx's error; the command may still run, as any command sent
// before its deadline may.
func (p *Pipe) do(ctx context.Context, cmd pipeCommand) (rawReply, error) {
	rep, _, err := p.doSent(ctx, cmd)
	return rep, err
}

// doSent is do that also returns when the command's batch was written
// (clock.Now; 0 when it never was): one clock read per batch stamps every
// lease in it, rather than one per caller.
func (p *Pipe) doSent(ctx context.Context, cmd pipeCommand) (rawReply, int64, error) {
	c := p.calls.Get().(*pipeCall)
	c.cmd, c.rep, c.err, c.sent = cmd, rawReply{}, nil, 0
	if !p.enqueue(c) {
		p.calls.Put(c)
		return rawReply{}, 0, ErrPipeClosed
	}
	if done := ctx.Done(); done == nil {
		// A context that never ends (a release's): a plain receive, the
		// cheapest wait there is.
		<-c.done
	} else {
		select {
		case <-c.done:
		case <-done:
			// The call stays with its connection, which signals done into
			// its buffer and drops it; it is not reused.
			return rawReply{}, 0, ctx.Err()
		}
	}
	rep, sent, err := c.rep, c.sent, c.err
	c.cmd = pipeCommand{}
	p.calls.Put(c)
	return rep, sent, err
}

// serve is one connection's goroutine: batch, write, read, answer, until
// the pipe closes.
func (p *Pipe) serve() {
	defer p.wg.Done()
	var conn *rawConn
	defer func() {
		if conn != nil {
			_ = conn.conn.Close()
		}
	}()
	batch := make([]*pipeCall, 0, maxPipeBatch)
	for {
		var ok bool
		if batch, ok = p.take(batch[:0]); !ok {
			return
		}
		conn = p.send(conn, batch)
		p.done(batch)
	}
}

// take waits for queued calls and moves up to maxPipeBatch of them into
// batch, oldest first; false means the pipe is shut. It does not wait for
// more than are queued: while this batch is out, the next one fills.
func (p *Pipe) take(batch []*pipeCall) ([]*pipeCall, bool) {
	p.mu.Lock()
	for len(p.queued) == 0 {
		if p.shut {
			p.mu.Unlock()
			return batch, false
		}
		p.idle++
		p.mu.Unlock()
		<-p.wake
		// Woken by the first call of a new batch: let the workers it is
		// racing (runnable, about to queue theirs) run first, so the batch
		// carries many commands in one write rather than one (measured:
		// fewer syscalls and context switches per acquisition).
		runtime.Gosched()
		p.mu.Lock()
	}
	if p.shut {
		p.mu.Unlock()
		return batch, false
	}
	// At most an even share of the calls outstanding: a batch that took
	// them all would leave the other connections nearly empty, and as each
	// batch's workers come back into the next batch of the same connection,
	// the split would last, the generator and the server taking turns
	// rather than working at once. What is left goes with the next
	// connection free, or one idle now.
	conns := cap(p.wake)
	share := (p.pending + conns - 1) / conns
	n := min(len(p.queued), maxPipeBatch, max(1, share))
	batch = append(batch, p.queued[:n]...)
	rest := copy(p.queued, p.queued[n:])
	clear(p.queued[rest:])
	p.queued = p.queued[:rest]
	wake := rest > 0 && p.idle > 0
	if wake {
		p.idle--
	}
	p.mu.Unlock()
	if wake {
		p.wake <- struct{}{}
	}
	return batch, true
}

// done counts batch's calls as answered.
func (p *Pipe) done(batch []*pipeCall) {
	p.mu.Lock()
	p.pending -= len(batch)
	p.mu.Unlock()
}

// send writes batch on conn (dialled when nil), reads its replies and
// answers every call; it returns the connection for the next batch, nil
// when this one failed.
func (p *Pipe) send(conn *rawConn, batch []*pipeCall) *rawConn {
	var err error
	if conn == nil {
		if conn, err = p.node.connect(); err != nil {
			answer(batch, fmt.Errorf("connect %s: %w", p.node.opts.Addr, err))
			return nil
		}
		conn.r = bufio.NewReaderSize(conn.conn, pipeBufSize)
	}
	conn.buf = conn.buf[:0]
	for _, c := range batch {
		conn.buf = c.cmd.appendTo(conn.buf)
	}
	if err = p.write(conn, batch); err != nil {
		_ = conn.conn.Close()
		answer(batch, err)
		return nil
	}
	err = p.readReplies(conn, batch)
	answer(batch, nil)
	if err != nil {
		_ = conn.conn.Close()
		return nil
	}
	return conn
}

// write sends conn.buf, holding calls' commands, as one round trip. The
// commands are counted by name once per batch, not one by one.
func (p *Pipe) write(conn *rawConn, calls []*pipeCall) error {
	// Read before the write, so every lease the batch takes starts no
	// later than the server saw its command. A resend after NOSCRIPT keeps
	// its first stamp: earlier still.
	sent := clock.Now()
	for _, c := range calls {
		if c.sent == 0 {
			c.sent = sent
		}
	}
	_ = conn.conn.SetWriteDeadline(time.Now().Add(p.readTimeout))
	if _, err := conn.conn.Write(conn.buf); err != nil {
		return fmt.Errorf("write to %s: %w", p.node.opts.Addr, err)
	}
	if p.sent != nil {
		p.sent.roundTrip()
		var set, evalsha, eval int64
		for _, c := range calls {
			switch name := c.cmd.name(); name {
			case "set":
				set++
			case "eval":
				eval++
			case "evalsha":
				evalsha++
			default:
				// A lock definition's command of another name.
				p.sent.commandsNamed(name, 1)
			}
		}
		p.sent.commandsNamed("set", set)
		p.sent.commandsNamed("evalsha", evalsha)
		p.sent.commandsNamed("eval", eval)
	}
	return nil
}

// readReplies reads one reply per call in order, then resends by EVAL the
// scripts the server no longer had (NOSCRIPT, after a restart or SCRIPT
// FLUSH) and reads theirs. A connection failure fails every call not yet
// answered and is returned: the connection is then out of step.
func (p *Pipe) readReplies(conn *rawConn, batch []*pipeCall) error {
	_ = conn.conn.SetReadDeadline(time.Now().Add(p.readTimeout))
	var again []*pipeCall
	stale := false
	for i, c := range batch {
		c.rep, c.err = conn.read()
		if c.err == nil {
			continue
		}
		if _, isReply := c.err.(rawError); !isReply {
			return broken(batch[i:], p.readErr(c.err))
		}
		if eval, ok := c.cmd.noScript(c.err); ok {
			c.cmd = eval
			again = append(again, c)
		}
		if redis.HasErrorPrefix(c.err, "READONLY") {
			// A primary turned replica: the next batch dials again, through
			// the client's dialer, which finds the primary (sentinels).
			stale = true
		}
	}
	if err := p.resend(conn, again); err != nil {
		return err
	}
	if stale {
		return errStaleConn
	}
	return nil
}

// resend sends again by EVAL the calls whose scripts the server did not
// have, and reads their replies.
func (p *Pipe) resend(conn *rawConn, again []*pipeCall) error {
	if len(again) == 0 {
		return nil
	}
	conn.buf = conn.buf[:0]
	for _, c := range again {
		conn.buf = c.cmd.appendTo(conn.buf)
	}
	if err := p.write(conn, again); err != nil {
		return broken(again, err)
	}
	for i, c := range again {
		if c.rep, c.err = conn.read(); c.err != nil {
			if _, isReply := c.err.(rawError); !isReply {
				return broken(again[i:], p.readErr(c.err))
			}
		}
	}
	return nil
}

// readErr says where a read failed.
func (p *Pipe) readErr(err error) error {
	return fmt.Errorf("read from %s: %w", p.node.opts.Addr, err)
}

// errStaleConn marks a connection whose replies were read whole but which
// must not carry another batch.
var errStaleConn = errors.New("connection to a replica")

// broken fails calls with a connection's err and returns it.
func broken(calls []*pipeCall, err error) error {
	for _, c := range calls {
		c.rep, c.err = rawReply{}, err
	}
	return err
}

// answer gives each call its reply (or err, when set) and wakes its caller.
func answer(batch []*pipeCall, err error) {
	for _, c := range batch {
		if err != nil {
			c.rep, c.err = rawReply{}, err
		}
		c.done <- struct{}{}
	}
}
