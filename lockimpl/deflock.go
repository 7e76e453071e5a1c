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
// server: each operation is its script, by EVALSHA with EVAL on NOSCRIPT
// (go-redis's Script.Run), or its single command, and its reply is read by
// the definition's rules.
type DefLock struct {
	name   string
	def    *LockDef
	client redis.Cmdable
	// do sends a single command (go-redis's clients have Do, Cmdable not).
	do func(ctx context.Context, args ...any) *redis.Cmd
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

// NewDefLock builds the lock of definition file name (def:FILE) over one server.
func NewDefLock(name string, nodes []redis.Cmdable) (*DefLock, error) {
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
	return &DefLock{name: name, def: d, client: nodes[0], do: c.Do}, nil
}

// Info describes the lock.
func (l *DefLock) Info() Info {
	return Info{Name: l.name, Fencing: l.def.Fences(), Nodes: 1}
}

// errUnexpectedReply is a reply no rule of the definition reads.
var errUnexpectedReply = errors.New("reply matches no rule of the definition")

// run sends op with vals and returns its reply: nil for a nil reply.
func (l *DefLock) run(ctx context.Context, op *defOp, vals *tmplValues) (any, error) {
	var cmd *redis.Cmd
	if op.script != nil {
		keys := make([]string, len(op.keys))
		for i, t := range op.keys {
			keys[i] = t.expand(vals)
		}
		args := make([]any, len(op.args))
		for i, t := range op.args {
			args[i] = t.expand(vals)
		}
		cmd = op.script.Run(ctx, l.client, keys, args...)
	} else {
		argv := make([]any, len(op.command))
		for i, t := range op.command {
			argv[i] = t.expand(vals)
		}
		cmd = l.do(ctx, argv...)
	}
	val, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return val, err
}

// values are the templates' values for key, token and ttl.
func values(key, token string, ttl time.Duration) tmplValues {
	ms := ttl.Milliseconds()
	return tmplValues{
		tmplKey:      key,
		tmplToken:    token,
		tmplTTLms:    strconv.FormatInt(ms, 10),
		tmplTTLs:     strconv.FormatInt((ms+999)/1000, 10),
		tmplFenceKey: FenceKey(key),
	}
}

// Acquire makes one attempt at key by the definition's acquire.
func (l *DefLock) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	lease := Lease{Key: key, Token: NewToken(), Start: time.Now(), Validity: ttl}
	vals := values(key, lease.Token, ttl)
	op := &l.def.acquire
	val, err := l.run(ctx, op, &vals)
	switch {
	case err != nil:
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	case op.ok.match(val):
		n, _ := val.(int64)
		if op.fence {
			lease.Fence = n
		}
		if op.validity {
			lease.Validity = time.Duration(n) * time.Millisecond
		}
		return lease, OK, nil
	case op.held.match(val):
		return Lease{}, Contended, nil
	}
	return Lease{}, Failed, fmt.Errorf("acquire %s: %w: %v", key, errUnexpectedReply, val)
}

// owned runs a release or renew and reads its reply.
func (l *DefLock) owned(ctx context.Context, what string, op *defOp, lease Lease, ttl time.Duration) (Outcome, int64, error) {
	vals := values(lease.Key, lease.Token, ttl)
	val, err := l.run(ctx, op, &vals)
	n, _ := val.(int64)
	switch {
	case err != nil:
		return Failed, 0, fmt.Errorf("%s %s: %w", what, lease.Key, err)
	case op.ok.match(val):
		return OK, n, nil
	case op.lost.match(val):
		return Lost, 0, nil
	case op.taken.kind != matchNone && op.taken.match(val):
		return Taken, 0, nil
	}
	return Failed, 0, fmt.Errorf("%s %s: %w: %v", what, lease.Key, errUnexpectedReply, val)
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
