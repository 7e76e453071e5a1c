package compose

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Kind names a topology's shape.
type Kind string

const (
	// KindSingle is one master.
	KindSingle Kind = "single"
	// KindRedlock is N independent masters.
	KindRedlock Kind = "redlock"
)

// MaxMasters bounds redlock:N.
const MaxMasters = 9

// SpecHelp lists the accepted topology specs.
const SpecHelp = "single or redlock:N with 1 ≤ N ≤ 9"

// Spec is a parsed --topology value.
type Spec struct {
	// Kind is the shape.
	Kind Kind
	// Masters is the number of independent masters (1 for single; 0 for
	// "redlock" without a count, which takes the count of --redis URLs or 5).
	Masters int
}

// ParseSpec parses single, redlock or redlock:N.
func ParseSpec(s string) (Spec, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch Kind(name) {
	case KindSingle:
		if hasArg {
			return Spec{}, fmt.Errorf("topology %q: single takes no count; want %s", s, SpecHelp)
		}
		return Spec{Kind: KindSingle, Masters: 1}, nil
	case KindRedlock:
		if !hasArg {
			return Spec{Kind: KindRedlock}, nil
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > MaxMasters {
			return Spec{}, fmt.Errorf("topology %q: master count must be a whole number from 1 to %d; want %s", s, MaxMasters, SpecHelp)
		}
		return Spec{Kind: KindRedlock, Masters: n}, nil
	}
	return Spec{}, fmt.Errorf("topology %q: unknown; want %s", s, SpecHelp)
}

// String renders the spec in --topology form.
func (s Spec) String() string {
	if s.Kind == KindRedlock {
		return fmt.Sprintf("redlock:%d", s.Masters)
	}
	return string(s.Kind)
}

// Node is one server of a topology.
type Node struct {
	// Name is the node's role and index, e.g. "master-0".
	Name string
	// Addr is host:port; it never carries a password.
	Addr string
	// Server is the local process, or nil for an external server.
	Server *Server
	opts   *redis.Options
}

// Topology is a set of Redis servers brought up (or reached) for a run.
type Topology struct {
	// Spec is what was asked for, with the master count resolved.
	Spec Spec
	// Provider is "local" or "external".
	Provider string
	// Nodes are the servers, masters first.
	Nodes   []*Node
	clients []*redis.Client
}

// UpOptions configures Up.
type UpOptions struct {
	// URLs selects the external provider: one redis:// or rediss:// URL a master.
	URLs []string
	// Persistence of local servers.
	Persistence Persistence
	// ServerEnv is extra environment for local servers.
	ServerEnv []string
}

// Up brings the topology up: local redis-server processes, or the given URLs.
// On error everything it started is stopped again.
func Up(ctx context.Context, spec Spec, opts UpOptions) (*Topology, error) {
	if len(opts.URLs) > 0 {
		return external(spec, opts.URLs)
	}
	if spec.Masters == 0 {
		spec.Masters = 5
	}
	t := &Topology{Spec: spec, Provider: "local"}
	for i := range spec.Masters {
		srv, err := StartServer(ctx, ServerOptions{Persistence: opts.Persistence, Env: opts.ServerEnv})
		if err != nil {
			_ = t.Close()
			return nil, fmt.Errorf("start master %d of %s: %w", i, spec, err)
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("master-%d", i), Addr: srv.Addr(), Server: srv, opts: &redis.Options{Addr: srv.Addr()}})
	}
	return t, nil
}

func external(spec Spec, urls []string) (*Topology, error) {
	if spec.Masters == 0 {
		spec.Masters = len(urls)
	}
	if len(urls) != spec.Masters {
		return nil, fmt.Errorf("topology %s needs %d --redis URLs, got %d", spec, spec.Masters, len(urls))
	}
	t := &Topology{Spec: spec, Provider: "external"}
	for i, u := range urls {
		o, err := ParseRedisURL(u)
		if err != nil {
			return nil, err
		}
		t.Nodes = append(t.Nodes, &Node{Name: fmt.Sprintf("master-%d", i), Addr: o.Addr, opts: o})
	}
	return t, nil
}

// ParseRedisURL parses redis://[user:password@]host:port[/db] or rediss://…;
// its errors never repeat the password.
func ParseRedisURL(raw string) (*redis.Options, error) {
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis %q: %v; want redis://[user:password@]host:port[/db] or rediss://…", RedactURL(raw), redactErr(err, raw))
	}
	return o, nil
}

func redactErr(err error, raw string) string {
	msg := err.Error()
	if p := urlPassword(raw); p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// urlPassword finds the password of scheme://user:password@host even in a URL
// that does not parse, so that no error message can carry it.
func urlPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest = raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

// RedactURL hides the password of a Redis URL.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if at := strings.LastIndex(raw, "@"); at >= 0 {
			return "redacted@" + raw[at+1:]
		}
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// ClientOptions are the options every lockbench client uses.
type ClientOptions struct {
	// PoolSize is the connection pool size; set it to at least the concurrency.
	PoolSize int
}

// Client returns a new client for node i that Close will close. Automatic retries
// are off: a retried SET NX after a timeout would find its own key and be
// miscounted as contended.
func (t *Topology) Client(i int, co ClientOptions) *redis.Client {
	o := *t.Nodes[i].opts
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true
	o.DialTimeout = time.Second
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if co.PoolSize > 0 {
		o.PoolSize = co.PoolSize
		o.MaxActiveConns = 0
	}
	c := redis.NewClient(&o)
	t.clients = append(t.clients, c)
	return c
}

// Clients returns one new client per master.
func (t *Topology) Clients(co ClientOptions) []*redis.Client {
	out := make([]*redis.Client, len(t.Nodes))
	for i := range t.Nodes {
		out[i] = t.Client(i, co)
	}
	return out
}

// Addrs lists the nodes' host:port.
func (t *Topology) Addrs() []string {
	out := make([]string, len(t.Nodes))
	for i, n := range t.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Close closes every client and stops every process the topology started.
func (t *Topology) Close() error {
	var errs []error
	for _, c := range t.clients {
		_ = c.Close()
	}
	t.clients = nil
	for _, n := range t.Nodes {
		if n.Server != nil {
			if err := n.Server.Stop(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
