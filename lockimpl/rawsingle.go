package lockimpl

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// rawOne reaches one server by hand-spoken RESP over connections of its
// own, as Redlock's raw fan-out reaches each master: the single-instance
// lock's SET NX PX and scripts then cost a write and a read, without a
// go-redis command object, pool checkout and hook chain per command. A call
// that finds no idle connection (at the start, after the server closed
// them) goes through the go-redis client instead and asks for one more
// connection in the background, so a call never waits for a dial.
type rawOne struct {
	node *rawNode
	// timeout bounds a command whose context has no deadline, as go-redis
	// does with ContextTimeoutEnabled; 0 sets no deadline.
	timeout time.Duration
	sent    *SentCounter
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
	if o == nil {
		return rawReply{}, nil, false
	}
	c := o.node.take(&o.dials)
	if c == nil {
		return rawReply{}, nil, false
	}
	deadline, has := ctx.Deadline()
	if !has && o.timeout > 0 {
		deadline = time.Now().Add(o.timeout)
	}
	c.setDeadlines(deadline, deadline)
	if err = o.write(c, cmd); err == nil {
		rep, err = c.read()
		if again, retry := cmd.evalFallback(err); retry {
			if err = o.write(c, &again); err == nil {
				rep, err = c.read()
			}
		}
	}
	if _, isReply := err.(rawError); err == nil || isReply {
		o.node.put(c)
	} else {
		o.node.discard(c)
	}
	return rep, err, true
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
