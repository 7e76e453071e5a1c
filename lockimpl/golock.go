package lockimpl

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// GoPrefix starts the --lock name of a lock a Go program brought through
// the library API (bench/cli.Main with Options.Locks): go:NAME.
const GoPrefix = "go:"

// IsGo reports whether lock names a Go program's own lock (go:NAME).
func IsGo(lock string) bool { return strings.HasPrefix(lock, GoPrefix) }

// GoLock is a lock a Go program brings to lockbench: its descriptor and its
// constructor, as a built-in Redis lock has its entry in descriptors() and
// its case in New. It is built in-process over the topology's go-redis
// clients, so its round trips are counted and its cost is its own, with no
// protocol in between.
type GoLock struct {
	// Descriptor says what the lock is. Name is the NAME of go:NAME
	// (letters, digits, '-', '_', '.'); Backend must be BackendRedis or
	// empty (the constructor takes Redis masters). Lease, Renewable,
	// Fencing, Quorum and OwnClient mean what they mean for the built-in
	// locks; the rest is lockbench's own and ignored.
	Descriptor Descriptor
	// New builds the lock over the topology's masters: one on single,
	// N on redlock:N. A lock that works on one master refuses several
	// with an error naming what it needs.
	New func(nodes []redis.Cmdable) (Locker, error)
}

// GoLocks is a program's set of Go locks: a value handed to the command
// line (bench/cli.Main), never a registry of the package's own.
type GoLocks []GoLock

// goName is what a Go lock's name may hold: a word a flag takes unquoted.
var goName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Check refuses a set that cannot be run: a lock without a name or a
// constructor, a name given twice, a backend other than Redis.
func (g GoLocks) Check() error {
	seen := map[string]bool{}
	for i, l := range g {
		d := l.Descriptor
		switch {
		case !goName.MatchString(d.Name):
			return fmt.Errorf("Go lock %d: name %q: accepted: letters, digits, '.', '-', '_' (it runs as --lock %sNAME)", i, d.Name, GoPrefix)
		case seen[d.Name]:
			return fmt.Errorf("Go lock %s: registered twice", d.Name)
		case l.New == nil:
			return fmt.Errorf("Go lock %s: no constructor (GoLock.New)", d.Name)
		case d.Backend != "" && d.Backend != BackendRedis:
			return fmt.Errorf("Go lock %s: backend %q: a Go lock runs on Redis masters (%s)", d.Name, d.Backend, BackendRedis)
		}
		seen[d.Name] = true
	}
	return nil
}

// Find is the lock registered as go:NAME, with its descriptor as the
// registry gives it (named go:NAME, on Redis).
func (g GoLocks) Find(lock string) (GoLock, bool) {
	for _, l := range g {
		if GoPrefix+l.Descriptor.Name == lock {
			l.Descriptor = goDescriptor(l.Descriptor)
			return l, true
		}
	}
	return GoLock{}, false
}

// Names lists the registered locks as --lock takes them.
func (g GoLocks) Names() []string {
	out := make([]string, len(g))
	for i, l := range g {
		out[i] = GoPrefix + l.Descriptor.Name
	}
	return out
}

// Unregistered says why the Go lock named lock is not one this program
// registered, or nil when it is (or lock is not a well-formed Go lock's
// name: the plan says what is wrong with that).
func (g GoLocks) Unregistered(lock string) error {
	if !IsGo(lock) || !goName.MatchString(strings.TrimPrefix(lock, GoPrefix)) {
		return nil
	}
	if _, ok := g.Find(lock); ok {
		return nil
	}
	if len(g) == 0 {
		return fmt.Errorf("lock %s: this program registered no Go lock; go:NAME names a lock registered by a Go program that calls lockbench's bench/cli.Main", lock)
	}
	return fmt.Errorf("lock %s: not registered; this program registers %s", lock, strings.Join(g.Names(), ", "))
}

// build is New's case for a Go lock: its constructor over the masters, and
// the lock's Info named as --lock names it.
func (g GoLocks) build(lock string, nodes []redis.Cmdable) (Locker, error) {
	if err := g.Unregistered(lock); err != nil {
		return nil, err
	}
	l, _ := g.Find(lock)
	locker, err := l.New(nodes)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lock, err)
	}
	if locker == nil {
		return nil, fmt.Errorf("lock %s: its constructor returned no lock and no error", lock)
	}
	return goLocker{Locker: locker, name: lock, fencing: l.Descriptor.Fencing}, nil
}

// goDescriptor completes a Go lock's descriptor as the registry holds it.
func goDescriptor(d Descriptor) Descriptor {
	d.Name = GoPrefix + d.Name
	d.Backend = BackendRedis
	d.Driver, d.Peer, d.Pipelinable, d.InTransaction = false, false, false, false
	d.RunFlags, d.onRedis = nil, nil
	return d
}

// genericGoDescriptor is what Describe knows of go:NAME without the
// program's locks (plan's checks run before a run reaches them): a
// renewable lease on Redis, as a driver's before its hello; the run checks
// the registered descriptor when it builds the lock.
func genericGoDescriptor(name string) Descriptor {
	return Descriptor{Name: name, Backend: BackendRedis, Lease: true, Renewable: true}
}

// goLocker is a Go lock as a run sees it: reported under its --lock name,
// its fencing as registered.
type goLocker struct {
	Locker
	name    string
	fencing bool
}

// Info is the lock's own, named go:NAME.
func (g goLocker) Info() Info {
	i := g.Locker.Info()
	i.Name, i.Fencing = g.name, i.Fencing || g.fencing
	return i
}

// Close closes the lock's own connections, if it keeps any.
func (g goLocker) Close() error {
	if c, ok := g.Locker.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// goLocksKey carries a program's Go locks in a context.
type goLocksKey struct{}

// WithGoLocks returns ctx carrying the program's Go locks: the command line
// hands them down this way to where runs build their locks, so that no
// package keeps a registry of its own.
func WithGoLocks(ctx context.Context, g GoLocks) context.Context {
	return context.WithValue(ctx, goLocksKey{}, g)
}

// GoLocksIn is the program's Go locks ctx carries (none when it carries none).
func GoLocksIn(ctx context.Context) GoLocks {
	g, _ := ctx.Value(goLocksKey{}).(GoLocks)
	return g
}
