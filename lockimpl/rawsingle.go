package lockimpl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// rawOne reaches one server by hand-spoken RESP over connections of its
// own, as Redlock's raw fan-out reaches each master: the single-instance
// lock's SET NX PX and scripts then cost a write and a read, without a
// go-redis command object, pool checkout and hook chain per command. A call
// that finds no idle connection (at the start, after the server closed
// them) goes through the go-redis client instead and asks for one more
// connection in the background, so a call need not wait for a dial; once
// a pool's worth of calls are in the client, a call waits for a connection
// of the lock's own instead, put back or newly dialled (see awaitIdle).
type rawOne struct {
	node *rawNode
	// timeout bounds a command whose context has no deadline, as go-redis
	// does with ContextTimeoutEnabled; 0 sets no deadline.
	timeout time.Duration
	sent    *SentCounter
	// viaClient counts the calls gone through the client (see claimClient).
	viaClient atomic.Int32
	// waited counts the calls that waited in awaitIdle, for tests.
	waited atomic.Int64
	// dials tracks the background dials, for Close.
	dials sync.WaitGroup
}

// newRawOne returns the raw path to the server c reaches, or nil where c is
// not a plain client to one server: a sentinel failover client follows the
// primary by closing its pool's connections, which connections of the
// lock's own would not follow; a cluster client or a pipe is no *redis.Client.
func newRawOne(c redis.Cmdable, sent *SentCounter) *rawOne {
	client, ok := c.(*redis.Client)
	if !ok {
		return nil
	}
	o := client.Options()
	if o.Addr == "FailoverClient" {
		return nil
	}
	timeout := o.ReadTimeout
	switch {
	case timeout == 0:
		timeout = 3 * time.Second // go-redis's default
	case timeout < 0:
		timeout = 0
	}
	return &rawOne{node: newRawNode(o), timeout: timeout, sent: sent}
}

// close closes the idle connections once the background dials are done.
func (o *rawOne) close() {
	if o == nil {
		return
	}
	o.node.closed.Store(true)
	o.dials.Wait()
	o.node.close()
}

// do sends cmd and reads its reply by ctx's deadline (or the client's read
// timeout), sending a script's source by EVAL after NOSCRIPT. ok is false
// when no connection was idle: nothing was sent, and the caller goes
// through its go-redis client. A server's error reply comes back as a
// rawError; a connection whose state is unknown after a failure is closed.
func (o *rawOne) do(ctx context.Context, cmd *rawCommand) (rep rawReply, err error, ok bool) {
	c := o.begin(ctx)
	if c == nil {
		return rawReply{}, nil, false
	}
	if err = o.write(c, cmd); err == nil {
		rep, err = c.read()
		if cmd.op == rawScript && err != nil {
			rep, err = o.evalAfterNoScript(c, cmd, rep, err)
		}
	}
	o.end(c, err)
	return rep, err, true
}

// begin takes a connection of the raw path for one command, its deadlines
// set by ctx's (or the client's read timeout), or returns nil when none was
// idle: the caller then goes through its go-redis client, holding a client
// slot that leftClient gives back.
func (o *rawOne) begin(ctx context.Context) *rawConn {
	if o == nil {
		return nil
	}
	c := o.node.take(&o.dials)
	if c == nil && !o.claimClient() {
		c = o.awaitIdle(ctx)
	}
	if c == nil {
		// Through the client after all (the wait ended without one):
		// the call holds a client slot like any other, left by leftClient.
		o.viaClient.Add(1)
		return nil
	}
	deadline, has := ctx.Deadline()
	if !has && o.timeout > 0 {
		deadline = time.Now().Add(o.timeout)
	}
	c.setDeadlines(deadline, deadline)
	return c
}

// end puts c back after a command whose reply was read whole (err nil or
// the server's error reply), and closes it otherwise: its state is unknown.
func (o *rawOne) end(c *rawConn, err error) {
	if _, isReply := err.(rawError); err == nil || isReply {
		o.node.put(c)
	} else {
		o.node.discard(c)
	}
}

// claimClient takes one of the client's slots for a call that found no idle
// connection, or says all are taken (every connection of the client's
// pool busy, so a call through it would queue deep in go-redis's pool).
// A claimed slot is given back by leftClient.
func (o *rawOne) claimClient() bool {
	for {
		n := o.viaClient.Load()
		if n >= o.node.max {
			return false
		}
		if o.viaClient.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// leftClient gives back the client slot of a call that do did not send.
func (o *rawOne) leftClient() {
	if o != nil {
		o.viaClient.Add(-1)
	}
}

// awaitIdle waits for a connection of the raw path, put back or newly
// dialled, when the client's slots are all taken: a worker waiting its
// turn then waits here, in a shallow frame, rather than deep in go-redis's
// pool, and at 10,000 workers the waiters' stacks are most of the run's
// memory. It returns nil, for the caller to go through its client, when
// the path is closed, when ctx ends, or after the command timeout: a
// connection lost meanwhile is never put back and a dial may fail, so the
// wait is bounded rather than left to a put that may not come.
//
//go:noinline
func (o *rawOne) awaitIdle(ctx context.Context) *rawConn {
	n := o.node
	if n.closed.Load() {
		return nil
	}
	o.waited.Add(1)
	n.waiting.Add(1)
	defer n.waiting.Add(-1)
	n.grow(&o.dials)
	var expired <-chan time.Time
	if o.timeout > 0 {
		t := time.NewTimer(o.timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case c := <-n.idle:
		if c.alive() {
			return c
		}
		n.discard(c)
	case <-ctx.Done():
	case <-expired:
	}
	return nil
}

// evalAfterNoScript sends script cmd's source by EVAL on c when its reply
// err was NOSCRIPT, and returns that reply; otherwise rep and err as they
// were. A frame of its own keeps the second command off every call's stack.
//
//go:noinline
func (o *rawOne) evalAfterNoScript(c *rawConn, cmd *rawCommand, rep rawReply, err error) (rawReply, error) {
	again, retry := cmd.evalFallback(err)
	if !retry {
		return rep, err
	}
	if err = o.write(c, &again); err != nil {
		return rawReply{}, err
	}
	return c.read()
}

// write writes cmd, counting it once written.
func (o *rawOne) write(c *rawConn, cmd *rawCommand) error {
	c.buf = appendCommand(c.buf[:0], cmd.argv()...)
	if _, err := c.conn.Write(c.buf); err != nil {
		return err
	}
	o.sent.sentAlone(cmd.name())
	return nil
}
