package lockimpl_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
)

// builtInfo builds d's lock the way its backend's builder does, over
// clients that are never dialled (building a lock sends nothing), and
// returns what the built lock says of itself.
func builtInfo(t *testing.T, d lockimpl.Descriptor) (lockimpl.Info, error) {
	t.Helper()
	switch d.Backend {
	case lockimpl.BackendRedis:
		nodes := 1
		if d.Quorum {
			nodes = 3
		}
		var clients []*redis.Client
		for range nodes {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
			t.Cleanup(func() { _ = c.Close() })
			clients = append(clients, c)
		}
		l, err := lockimpl.New(d.Name, lockimpl.Nodes(clients...), lockimpl.Options{})
		if err != nil {
			return lockimpl.Info{}, err
		}
		return l.Info(), nil
	case lockimpl.BackendEtcd:
		return lockimpl.NewEtcd(nil, 1, 0).Info(), nil
	case lockimpl.BackendZookeeper:
		// NewZk connects at once; what the lock says of itself does not
		// depend on its sessions (TestZk builds it on an ensemble).
		return (&lockimpl.Zk{}).Info(), nil
	case lockimpl.BackendNats:
		// NewNatsKV creates its bucket at once (TestNatsKV builds it on a server).
		return (&lockimpl.NatsKV{}).Info(), nil
	case lockimpl.BackendPostgres:
		l, err := lockimpl.NewPg(d.Name, nil, "versions", 0)
		if err != nil {
			return lockimpl.Info{}, err
		}
		return l.Info(), nil
	}
	t.Fatalf("%s: backend %q has no builder in this test", d.Name, d.Backend)
	return lockimpl.Info{}, nil
}

// TestEveryLockIsWhole walks the lock registry: each lock is registered
// once, speaks a known backend, is built by that backend's builder under
// its name, and says of itself what its descriptor says (fencing, unsafe);
// what it declares hangs together (renewal needs a lease; quorum and
// pipelining are Redis's); and the other backends' builders refuse it.
func TestEveryLockIsWhole(t *testing.T) {
	backends := []string{lockimpl.BackendRedis, lockimpl.BackendEtcd, lockimpl.BackendPostgres, lockimpl.BackendZookeeper, lockimpl.BackendNats}
	seen := map[string]bool{}
	for _, d := range lockimpl.Descriptors() {
		t.Run(d.Name, func(t *testing.T) {
			if d.Name == "" || seen[d.Name] {
				t.Fatalf("lock %q registered twice or without a name", d.Name)
			}
			seen[d.Name] = true
			if !slices.Contains(backends, d.Backend) {
				t.Fatalf("backend %q is not one of %v", d.Backend, backends)
			}
			if !slices.Contains(lockimpl.LocksOn(d.Backend), d.Name) {
				t.Errorf("LocksOn(%s) = %v, without it", d.Backend, lockimpl.LocksOn(d.Backend))
			}
			if got, ok := lockimpl.Describe(d.Name); !ok || got.Name != d.Name {
				t.Errorf("Describe(%q) = %+v, %v", d.Name, got, ok)
			}
			info, err := builtInfo(t, d)
			if err != nil {
				t.Fatalf("building it: %v", err)
			}
			if info.Name != d.Name || info.Fencing != d.Fencing || info.Unsafe != d.Unsafe {
				t.Errorf("built lock says %+v; descriptor says fencing %v, unsafe %v", info, d.Fencing, d.Unsafe)
			}
			if d.Renewable && !d.Lease {
				t.Errorf("renewable without a lease to renew")
			}
			if d.InTransaction && d.Lease {
				t.Errorf("its write is in the lock's transaction, yet it has a lease that outlives one")
			}
			if (d.Quorum || d.Pipelinable) && d.Backend != lockimpl.BackendRedis {
				t.Errorf("quorum or pipelining declared on %s, which only Redis's builder knows", d.Backend)
			}
			for _, f := range d.RunFlags {
				if f == "" || strings.HasPrefix(f, "-") || !slices.Contains(lockimpl.LocksTakingFlag(f), d.Name) {
					t.Errorf("run flag %q: want a bare flag name listed by LocksTakingFlag", f)
				}
			}
			if d.Backend != lockimpl.BackendRedis {
				if _, err := lockimpl.New(d.Name, nil, lockimpl.Options{}); err == nil {
					t.Errorf("the Redis builder built a %s lock", d.Backend)
				}
			}
			if d.Backend != lockimpl.BackendPostgres {
				if _, err := lockimpl.NewPg(d.Name, nil, "versions", 0); err == nil {
					t.Errorf("the PostgreSQL builder built a %s lock", d.Backend)
				}
			}
		})
	}
}

// TestLockQueries holds the registry's answers to what other packages ask,
// including the sad path: an unregistered name has no properties at all.
func TestLockQueries(t *testing.T) {
	for _, tc := range []struct {
		name                                     string
		peer, quorum, renewable, pipe, tx, known bool
	}{
		{lockimpl.LockSingle, false, false, true, true, false, true},
		{lockimpl.LockFenced, false, false, true, true, false, true},
		{lockimpl.LockRedlock, false, true, true, false, false, true},
		{lockimpl.LockNaive, false, false, true, false, false, true},
		{lockimpl.LockRedsync, true, true, true, false, false, true},
		{lockimpl.LockRedislock, true, false, true, false, false, true},
		{lockimpl.LockEtcd, false, false, true, false, false, true},
		{lockimpl.LockPgAdvisory, false, false, false, false, false, true},
		{lockimpl.LockPgAdvisoryXact, false, false, false, false, true, true},
		{lockimpl.LockPgLease, false, false, true, false, false, true},
		{lockimpl.LockOCC, false, false, false, false, true, true},
		{lockimpl.LockZk, false, false, false, false, false, true},
		{lockimpl.LockNatsKV, false, false, true, false, false, true},
		{"redlok", false, false, false, false, false, false},
		{"", false, false, false, false, false, false},
	} {
		_, known := lockimpl.Describe(tc.name)
		got := []bool{lockimpl.IsPeer(tc.name), lockimpl.IsQuorum(tc.name), lockimpl.IsRenewable(tc.name),
			lockimpl.IsPipelinable(tc.name), lockimpl.IsInTransaction(tc.name), known}
		want := []bool{tc.peer, tc.quorum, tc.renewable, tc.pipe, tc.tx, tc.known}
		if !slices.Equal(got, want) {
			t.Errorf("%q: peer, quorum, renewable, pipelinable, in transaction, known = %v, want %v", tc.name, got, want)
		}
	}
	if got, want := lockimpl.LocksTakingFlag("node-timeout"), []string{lockimpl.LockRedlock, lockimpl.LockEtcd}; !slices.Equal(got, want) {
		t.Errorf("LocksTakingFlag(node-timeout) = %v, want %v", got, want)
	}
	if got := lockimpl.LocksTakingFlag("no-such-flag"); got != nil {
		t.Errorf("LocksTakingFlag(no-such-flag) = %v, want none", got)
	}
	if _, err := lockimpl.New("redlok", nil, lockimpl.Options{}); err == nil || !strings.Contains(err.Error(), "redlock") {
		t.Errorf("New(redlok) = %v, want an unknown lock with the nearest name", err)
	}
}

// TestTTLGrain checks the TTL grain each lock's descriptor carries, against
// what its server does: etcd and NATS count whole seconds (their TTL
// converters refuse anything else), etcd's local members grant 2s at least,
// and a lock without a grain takes any TTL as it is.
func TestTTLGrain(t *testing.T) {
	for _, tc := range []struct {
		lock     string
		ttl      time.Duration
		want     time.Duration
		accepted func(time.Duration) error
	}{
		{lockimpl.LockEtcd, 1400 * time.Millisecond, 2 * time.Second, func(d time.Duration) error { _, err := lockimpl.EtcdTTLSeconds(d); return err }},
		{lockimpl.LockEtcd, 3600 * time.Millisecond, 4 * time.Second, func(d time.Duration) error { _, err := lockimpl.EtcdTTLSeconds(d); return err }},
		{lockimpl.LockNatsKV, 300 * time.Millisecond, time.Second, func(d time.Duration) error { _, err := lockimpl.NatsTTLSeconds(d); return err }},
		{lockimpl.LockNatsKV, 1600 * time.Millisecond, 2 * time.Second, func(d time.Duration) error { _, err := lockimpl.NatsTTLSeconds(d); return err }},
		{lockimpl.LockSingle, 1600 * time.Millisecond, 1600 * time.Millisecond, nil},
		{lockimpl.LockPgLease, 250 * time.Millisecond, 250 * time.Millisecond, nil},
	} {
		d, ok := lockimpl.Describe(tc.lock)
		if !ok {
			t.Fatalf("%s not registered", tc.lock)
		}
		got := d.FitTTL(tc.ttl)
		if got != tc.want {
			t.Errorf("%s: FitTTL(%v) = %v, want %v", tc.lock, tc.ttl, got, tc.want)
		}
		if tc.accepted == nil {
			if d.TTLGrain != 0 {
				t.Errorf("%s: grain %v, want none", tc.lock, d.TTLGrain)
			}
			continue
		}
		if err := tc.accepted(got); err != nil {
			t.Errorf("%s: fitted TTL %v refused by its server's converter: %v", tc.lock, got, err)
		}
		if err := tc.accepted(tc.ttl); err == nil {
			t.Errorf("%s: %v off the grain accepted by its converter; the planted case is wrong", tc.lock, tc.ttl)
		}
	}
	d, _ := lockimpl.Describe(lockimpl.LockEtcd)
	for _, tc := range []struct {
		members int
		want    time.Duration
	}{{1, time.Second}, {3, 2 * time.Second}, {5, 2 * time.Second}} {
		if got := d.MinTTLOn(tc.members); got != tc.want || got != lockimpl.EtcdLocalMinTTL(tc.members) {
			t.Errorf("etcd:%d: descriptor's local minimum %v, timing's %v, want %v (⌈1.5 × election timeout⌉)",
				tc.members, got, lockimpl.EtcdLocalMinTTL(tc.members), tc.want)
		}
	}
	if d.FitTTL(time.Second) != 2*time.Second {
		t.Errorf("etcd's FitTTL(1s) = %v, want 2s: every local topology must take it", d.FitTTL(time.Second))
	}
}
