package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockimpl/clock"
	"github.com/redis/go-redis/v9"
)

// DefLock is a lock defined by its Redis scripts (a LockDef) over one
// server: each operation is its script, by EVALSHA with EVAL on NOSCRIPT,
// or its single command, and its reply is read by the definition's rules.
// The commands go out as the built-in single's do: encoded by hand on
// connections of the lock's own (the raw path, see rawOne and defWire),
// through the go-redis client while no such connection is idle.
type DefLock struct {
	name   string
	def    *LockDef
	client redis.Cmdable
	// do sends a single command (go-redis's clients have Do, Cmdable not).
	do func(ctx context.Context, args ...any) *redis.Cmd
	// raw is the raw path; nil sends everything through client.
	raw *rawOne
	// pipe, when set (--pipeline auto), batches the commands with other
	// workers' on a few connections instead, as Pipelined does single's.
	pipe   *Pipe
	tokens tokenSource
	ttls   msTexts
}

// doer is a client that sends any command.
type doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// defDescriptor is a definition lock's descriptor: a lease on one Redis
// server, renewable and fencing as its file says. A file that does not
// parse has none (Describe says so, and plan names the error).
func defDescriptor(name string) (Descriptor, bool) {
	d, err := LoadLockDef(DefFile(name))
	if err != nil {
		return Descriptor{}, false
	}
	if d.Driver() != "" {
		// Before its hello, what a driver lock is (plan runs the driver).
		return driverDescriptor(d.Driver()), true
	}
	if d.Quorum() {
		return Descriptor{Name: name, Backend: BackendRedis, Lease: true, Renewable: d.Renews(), Fencing: d.Fences(), Quorum: true,
			RunFlags: []string{"node-timeout", "drift-factor"}}, true
	}
	return Descriptor{Name: name, Backend: BackendRedis, Lease: true, Renewable: d.Renews(), Fencing: d.Fences(), Pipelinable: true}, true
}

// NewDefLock builds the lock of definition file name (def:FILE) over one
// server; opts.Sent counts what its raw path writes.
func NewDefLock(name string, nodes []redis.Cmdable, opts Options) (*DefLock, error) {
	d, err := LoadLockDef(DefFile(name))
	if err != nil {
		return nil, err
	}
	return newDefLock(name, d, nodes, opts)
}

// newDefLock builds the lock of the parsed definition d over one server.
func newDefLock(name string, d *LockDef, nodes []redis.Cmdable, opts Options) (*DefLock, error) {
	if len(nodes) != 1 {
		return nil, fmt.Errorf("lock definition %s works on one master, the topology has %d", d.File, len(nodes))
	}
	c, ok := nodes[0].(doer)
	if !ok {
		return nil, fmt.Errorf("lock definition %s needs a go-redis client, not %T", d.File, nodes[0])
	}
	l := &DefLock{name: name, def: d, client: nodes[0], do: c.Do}
	if opts.Pipe == nil {
		l.raw = newRawOne(nodes[0], opts.Sent)
		return l, nil
	}
	client, ok := nodes[0].(*redis.Client)
	if !ok {
		return nil, fmt.Errorf("lock definition %s pipelined needs a plain client to one server, not %T", d.File, nodes[0])
	}
	po := *opts.Pipe
	if po.Sent == nil {
		po.Sent = opts.Sent
	}
	l.pipe = NewPipe(client, po)
	return l, nil
}

// Close closes the raw path's connections; the client stays open.
func (l *DefLock) Close() error {
	l.raw.close()
	if l.pipe != nil {
		return l.pipe.Close()
	}
	return nil
}

// Info describes the lock.
func (l *DefLock) Info() Info {
	return Info{Name: l.name, Fencing: l.def.Fences(), Nodes: 1}
}

// errUnexpectedReply is a reply no rule of the definition reads.
var errUnexpectedReply = errors.New("reply matches no rule of the definition")

// vals are op's template values for key, token and ttl.
func (l *DefLock) vals(op *defOp, key, token string, ttl time.Duration) wireVals {
	v := wireVals{key: key, token: token, ttlMS: l.ttls.text(ttl)}
	if op.secs {
		v.ttlS = strconv.FormatInt((ttl.Milliseconds()+999)/1000, 10)
	}
	return v
}

// run sends op with vals and returns its reply: through the pipe when the
// lock has one (sent is then when its batch was written, clock.Now), else
// on the raw path when it has an idle connection, else through the client.
func (l *DefLock) run(ctx context.Context, op *defOp, vals *wireVals) (rep rawReply, sent int64, err error) {
	if l.pipe != nil {
		return l.pipe.doSent(ctx, pipeCommand{wire: op.wire, vals: *vals})
	}
	if rep, err, ok := l.raw.doWire(ctx, op.wire, vals); ok {
		return rep, 0, err
	}
	rep, err = l.clientRun(ctx, op, vals)
	return rep, 0, err
}

// clientRun sends op through the go-redis client (a script by
// Script.Run: EVALSHA, EVAL on NOSCRIPT), in a frame of its own.
//
//go:noinline
func (l *DefLock) clientRun(ctx context.Context, op *defOp, wv *wireVals) (rawReply, error) {
	defer l.raw.leftClient()
	vals := wv.values()
	var cmd *redis.Cmd
	if op.script != nil {
		keys := make([]string, len(op.keys))
		for i, t := range op.keys {
			keys[i] = t.expand(&vals)
		}
		args := make([]any, len(op.args))
		for i, t := range op.args {
			args[i] = t.expand(&vals)
		}
		cmd = op.script.Run(ctx, l.client, keys, args...)
	} else {
		argv := make([]any, len(op.command))
		for i, t := range op.command {
			argv[i] = t.expand(&vals)
		}
		cmd = l.do(ctx, argv...)
	}
	val, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return rawReply{kind: '$', isNil: true}, nil
	case err != nil:
		return rawReply{}, err
	}
	return replyOf(val), nil
}

// Acquire makes one attempt at key by the definition's acquire.
func (l *DefLock) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	return l.acquireToken(ctx, key, l.tokens.token(), ttl)
}

// acquireToken is Acquire with the token given (a quorum lock sends one
// token to every master).
func (l *DefLock) acquireToken(ctx context.Context, key, token string, ttl time.Duration) (Lease, Outcome, error) {
	lease := Lease{Key: key, Token: token, Start: time.Now(), Validity: ttl}
	op := &l.def.acquire
	vals := l.vals(op, key, lease.Token, ttl)
	rep, sent, err := l.run(ctx, op, &vals)
	switch {
	case err != nil:
		return Lease{}, Failed, wrapAcquireErr(key, err)
	case op.ok.match(rep):
		if sent != 0 {
			// Pipelined: the lease starts when its batch was written.
			lease.Start = clock.Time(sent)
		}
		if op.fence {
			lease.Fence = rep.n
		}
		if op.validity {
			lease.Validity = time.Duration(rep.n) * time.Millisecond
		}
		return lease, OK, nil
	case op.held.match(rep):
		return Lease{}, Contended, nil
	}
	return Lease{}, Failed, unexpectedReply("acquire", key, rep)
}

// unexpectedReply is the error of a reply no rule reads, saying what it was.
//
//go:noinline
func unexpectedReply(what, key string, rep rawReply) error {
	return fmt.Errorf("%s %s: %w: %s", what, key, errUnexpectedReply, rep)
}

// String says what a reply was, for errors.
func (r rawReply) String() string {
	switch {
	case r.isNil:
		return "nil"
	case r.ok:
		return "OK"
	case r.kind == ':':
		return "integer " + strconv.FormatInt(r.n, 10)
	case r.kind == '+':
		return "a status other than OK"
	case r.kind == '$':
		return "a string other than OK"
	}
	return "an array"
}

// owned runs a release or renew and reads its reply.
// On success it returns the reply's integer and when the command went out
// (sent, from the pipe; the zero time otherwise).
func (l *DefLock) owned(ctx context.Context, what string, op *defOp, lease Lease, ttl time.Duration) (Outcome, int64, int64, error) {
	vals := l.vals(op, lease.Key, lease.Token, ttl)
	rep, sent, err := l.run(ctx, op, &vals)
	switch {
	case err != nil:
		return Failed, 0, 0, fmt.Errorf("%s %s: %w", what, lease.Key, err)
	case op.ok.match(rep):
		return OK, rep.n, sent, nil
	case op.lost.match(rep):
		return Lost, 0, 0, nil
	case op.taken.kind != matchNone && op.taken.match(rep):
		return Taken, 0, 0, nil
	}
	return Failed, 0, 0, unexpectedReply(what, lease.Key, rep)
}

// Renew extends the lease by the definition's renew.
func (l *DefLock) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	if l.def.renew == nil {
		return Failed, fmt.Errorf("renew %s: definition %s has no renew", lease.Key, l.def.File)
	}
	start := time.Now()
	out, n, sent, err := l.owned(ctx, "renew", l.def.renew, *lease, ttl)
	if out == OK {
		if sent != 0 {
			start = clock.Time(sent)
		}
		lease.Start, lease.Validity = start, ttl
		if l.def.renew.validity {
			lease.Validity = time.Duration(n) * time.Millisecond
		}
	}
	return out, err
}

// Release gives the key up by the definition's release.
func (l *DefLock) Release(ctx context.Context, lease Lease) (Outcome, error) {
	out, _, _, err := l.owned(ctx, "release", &l.def.release, lease, lease.Validity)
	return out, err
}
