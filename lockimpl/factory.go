package lockimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configures whichever lock New builds.
type Options struct {
	// Redlock tunes the redlock lock.
	Redlock RedlockOptions
	// NaiveGap is slept between the naive lock's GET and DEL, standing in for
	// the round trip a real network would put there.
	NaiveGap time.Duration
	// Wait makes single and fenced acquisitions wait for replica acks.
	Wait WaitOptions
	// Peer tunes the peer-library locks (redsync, redislock); the zero value
	// means DefaultPeerOptions.
	Peer PeerOptions
	// Sent, when set, counts what a lock writes by hand, past its go-redis
	// clients (Redlock's raw fan-out, single's and fenced's raw path); the
	// clients count through its hook.
	Sent *SentCounter
	// Pipe, when set, sends single's and fenced's commands through a pipe
	// of their own (--pipeline auto): batched with other workers' commands
	// on a few connections to the server.
	Pipe *PipeOptions
	// Driver configures a driver lock (exec:CMD).
	Driver DriverOptions
	// Go are the program's own Go locks, which New builds for go:NAME.
	Go GoLocks
}

// New builds the named lock over the given masters. Single-instance locks
// need exactly one; redlock takes any number from 1.
func New(name string, nodes []redis.Cmdable, opts Options) (Locker, error) {
	single := func() (redis.Cmdable, error) {
		if len(nodes) != 1 {
			return nil, fmt.Errorf("lock %q works on one master, the topology has %d; use --lock redlock for several", name, len(nodes))
		}
		return nodes[0], nil
	}
	switch name {
	case LockSingle, LockFenced, LockNaive:
		c, err := single()
		if err != nil {
			return nil, err
		}
		if opts.Pipe != nil {
			return newPipelined(name, c, opts)
		}
		switch name {
		case LockSingle:
			l := NewSingle(c)
			l.wait = opts.Wait
			if l.wait.Replicas == 0 {
				l.raw = newRawOne(c, opts.Sent)
			}
			return l, nil
		case LockFenced:
			l := NewFenced(c)
			l.wait = opts.Wait
			if l.wait.Replicas == 0 {
				l.raw = newRawOne(c, opts.Sent)
			}
			return l, nil
		}
		n := NewNaive(c)
		n.gap = opts.NaiveGap
		return n, nil
	case LockRedlock:
		r, err := NewRedlock(nodes, opts.Redlock)
		if err != nil {
			return nil, err
		}
		r.sent = opts.Sent
		return r, nil
	case LockRedsync, LockRedislock:
		return newPeer(name, nodes, opts.Peer)
	}
	if d, ok := Describe(name); ok && d.onRedis != nil {
		return d.onRedis(nodes)
	}
	if IsDef(name) {
		d, err := LoadLockDef(DefFile(name))
		if err != nil {
			return nil, err
		}
		if d.Driver() == "" {
			return newDefLocker(name, d, nodes, opts)
		}
		// A file naming a driver is that driver lock (exec:CMD).
		name = d.Driver()
	}
	if IsGo(name) {
		return opts.Go.build(name, nodes)
	}
	if IsDriver(name) {
		servers, err := serverURLs(nodes)
		if err != nil {
			return nil, err
		}
		return NewDriver(context.Background(), name, servers, opts.Driver)
	}
	return nil, refuseOnRedis(name)
}

// refuseOnRedis is New's answer for a lock it does not build: a lock of
// another backend is named with the backend it needs and its builder; any
// other name is unknown.
func refuseOnRedis(name string) error {
	d, ok := Describe(name)
	if !ok || d.Backend == BackendRedis {
		return unknownLock(name)
	}
	b, _ := lookupLockBackend(d.Backend)
	return fmt.Errorf("lock %s runs on the %s backend, not on Redis servers; see %s", name, d.Backend, b.builder)
}

// newPipelined builds single or fenced over a pipe to c's server.
func newPipelined(name string, c redis.Cmdable, opts Options) (Locker, error) {
	client, ok := c.(*redis.Client)
	switch {
	case name == LockNaive:
		return nil, fmt.Errorf("lock naive cannot be pipelined: its GET and DEL are apart by design; use --lock single or fenced")
	case opts.Wait.Replicas > 0:
		return nil, fmt.Errorf("lock %s with --wait-replicas cannot be pipelined: WAIT must follow the SET on its connection", name)
	case !ok:
		return nil, fmt.Errorf("lock %s pipelined needs a plain client to one server, not %T", name, c)
	}
	po := *opts.Pipe
	if po.Sent == nil {
		po.Sent = opts.Sent
	}
	return NewPipelined(client, name == LockFenced, po), nil
}

// newPeer builds a peer-library lock: redsync over any number of masters,
// redislock over one.
func newPeer(name string, nodes []redis.Cmdable, opts PeerOptions) (Locker, error) {
	if opts == (PeerOptions{}) {
		opts = DefaultPeerOptions(name)
	}
	if name == LockRedsync {
		return NewRedsync(nodes, opts)
	}
	if len(nodes) != 1 {
		return nil, fmt.Errorf("lock %s works on one server, the topology has %d; use --lock redsync for several masters", name, len(nodes))
	}
	return NewRedislock(nodes[0], opts)
}

// Nodes turns clients into the nodes New takes.
func Nodes(clients ...*redis.Client) []redis.Cmdable {
	out := make([]redis.Cmdable, len(clients))
	for i, c := range clients {
		out[i] = c
	}
	return out
}
