package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

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
	raw    *rawOne
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
	return Descriptor{Name: name, Backend: BackendRedis, Lease: true, Renewable: d.Renews(), Fencing: d.Fences()}, true
}

// NewDefLock builds the lock of definition file name (def:FILE) over one
// server; opts.Sent counts what its raw path writes.
func NewDefLock(name string, nodes []redis.Cmdable, opts Options) (*DefLock, error) {
	d, err := LoadLockDef(DefFile(name))
	if err != nil {
		return nil, err
	}
	if len(nodes) != 1 {
		return nil, fmt.Errorf("lock definition %s works on one master, the topology has %d", d.File, len(nodes))
	}
	c, ok := nodes[0].(doer)
	if !ok {
		return nil, fmt.Errorf("lock definition %s needs a go-redis client, not %T", d.File, nodes[0])
	}
	return &DefLock{name: name, def: d, client: nodes[0], do: c.Do, raw: newRawOne(nodes[0], opts.Sent)}, nil
}

// Close closes the raw path's connections; the client stays open.
func (l *DefLock) Close() error {
	l.raw.close()
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

// run sends op with vals and returns its reply: on the raw path when it has
// an idle connection, through the client otherwise.
func (l *DefLock) run(ctx context.Context, op *defOp, vals *wireVals) (rawReply, error) {
	if rep, err, sent := l.raw.doWire(ctx, op.wire, vals); sent {
		return rep, err
	}
	return l.clientRun(ctx, op, vals)
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
	lease := Lease{Key: key, Token: l.tokens.token(), Start: time.Now(), Validity: ttl}
	op := &l.def.acquire
	vals := l.vals(op, key, lease.Token, ttl)
	rep, err := l.run(ctx, op, &vals)
	switch {
	case err != nil:
		return Lease{}, Failed, wrapAcquireErr(key, err)
	case op.ok.match(rep):
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
func (l *DefLock) owned(ctx context.Context, what string, op *defOp, lease Lease, ttl time.Duration) (Outcome, int64, error) {
	vals := l.vals(op, lease.Key, lease.Token, ttl)
	rep, err := l.run(ctx, op, &vals)
	switch {
	case err != nil:
		return Failed, 0, fmt.Errorf("%s %s: %w", what, lease.Key, err)
	case op.ok.match(rep):
		return OK, rep.n, nil
	case op.lost.match(rep):
		return Lost, 0, nil
	case op.taken.kind != matchNone && op.taken.match(rep):
		return Taken, 0, nil
	}
	return Failed, 0, unexpectedReply(what, lease.Key, rep)
}

// Renew extends the lease by the definition's renew.
func (l *DefLock) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	if l.def.renew == nil {
		return Failed, fmt.Errorf("renew %s: definition %s has no renew", lease.Key, l.def.File)
	}
	start := time.Now()
	out, n, err := l.owned(ctx, "renew", l.def.renew, *lease, ttl)
	if out == OK {
		lease.Start, lease.Validity = start, ttl
		if l.def.renew.validity {
			lease.Validity = time.Duration(n) * time.Millisecond
		}
	}
	return out, err
}

// Release gives the key up by the definition's release.
func (l *DefLock) Release(ctx context.Context, lease Lease) (Outcome, error) {
	out, _, err := l.owned(ctx, "release", &l.def.release, lease, lease.Validity)
	return out, err
}
