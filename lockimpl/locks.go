package lockimpl

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results/suggest"
)

// Backends: the server protocol a lock speaks. A topology kind names the
// same backend (compose.KindInfo.Backend), which is how a run pairs a lock
// with the servers it can run on.
const (
	// BackendRedis is redis-server: the single-instance locks, Redlock and
	// the peer libraries.
	BackendRedis = "redis"
	// BackendEtcd is an etcd cluster: the lease lock.
	BackendEtcd = "etcd"
	// BackendPostgres is a PostgreSQL server: advisory, transaction, lease
	// and OCC locks.
	BackendPostgres = "postgres"
	// BackendZookeeper is a ZooKeeper ensemble: Curator's lock recipe.
	BackendZookeeper = "zookeeper"
	// BackendNats is NATS with JetStream: the KV lock with per-key TTLs.
	BackendNats = "nats"
)

// lockBackend is what lockimpl knows of one backend beyond its locks'
// descriptors: how its clients' errors are named, and the builder its
// locks are made by, for the refusal of a lock handed the wrong servers.
type lockBackend struct {
	// name is the backend (BackendRedis, …).
	name string
	// builder is the function that builds its locks (New, NewEtcd, …).
	builder string
	// errorKind names an error of its clients for the errors-by-kind
	// counters, "" for an error it does not know; nil for Redis, whose
	// classification is ErrorKind's fallback.
	errorKind func(error) string
}

// lockBackends is the lock side's backend registry: one line per backend,
// in the order ErrorKind asks their classifiers.
func lockBackends() []lockBackend {
	return []lockBackend{
		{name: BackendRedis, builder: "New"},
		{name: BackendEtcd, builder: "NewEtcd", errorKind: etcdErrorKind},
		{name: BackendPostgres, builder: "NewPg", errorKind: pgErrorKind},
		{name: BackendZookeeper, builder: "NewZk", errorKind: ZkErrorKind},
		{name: BackendNats, builder: "NewNatsKV", errorKind: NatsErrorKind},
	}
}

// lookupLockBackend finds a backend's entry in lockBackends.
func lookupLockBackend(name string) (lockBackend, bool) {
	for _, b := range lockBackends() {
		if b.name == name {
			return b, true
		}
	}
	return lockBackend{}, false
}

// lockbench's own Redis locks, by their --lock names; the other locks'
// names sit beside their code (LockEtcd, LockPgLease, LockRedsync, …).
const (
	// LockSingle is the single-instance lease lock (SET NX PX, scripts to
	// renew and release).
	LockSingle = "single"
	// LockFenced is the single-instance lock whose leases carry a fencing
	// token from a counter incremented in the acquire script.
	LockFenced = "fenced"
	// LockRedlock is Redlock over N masters.
	LockRedlock = "redlock"
	// LockNaive releases by GET then DEL, kept to measure that hazard.
	LockNaive = "naive"
)

// Descriptor is what lockbench knows of one lock before building it: every
// package that would otherwise ask for a lock by name (plan's checks and
// flag scopes, compose's kinds, sweep, advise, help texts) reads it here.
type Descriptor struct {
	// Name is the --lock name.
	Name string
	// Backend is the server protocol it speaks (BackendRedis, …).
	Backend string
	// Lease is true when an acquisition holds a lease with a TTL; false for
	// a lock that lasts as long as its session or transaction.
	Lease bool
	// Renewable is true when a holder can extend its lease (--renew-every).
	Renewable bool
	// Fencing is true when leases carry fencing tokens.
	Fencing bool
	// Quorum is true when it acquires by a majority of several masters.
	Quorum bool
	// Pipelinable is true when --pipeline auto may batch its commands with
	// other workers' on a few shared connections.
	Pipelinable bool
	// InTransaction is true when its protected write is part of the lock
	// (in its transaction, or as its compare-and-set), so the resource must
	// be the lock's own database.
	InTransaction bool
	// Peer is true when it drives a peer library rather than lockbench's
	// own code.
	Peer bool
	// Unsafe is true for a lock kept only to measure a known hazard.
	Unsafe bool
	// Driver is true for a user's lock run by a driver process
	// (exec:CMD): its name is its command, and its hello its capabilities.
	Driver bool
	// OwnClient is true when it talks to its servers through a client of
	// its own (a driver process, a library with its own connections), past
	// the go-redis clients lockbench counts round trips on: its round trips
	// are not measured.
	OwnClient bool
	// RunFlags are the lock-scoped run flags it takes (plan's flag table
	// then applies each only to the locks listing it).
	RunFlags []string
	// TTLGrain is the unit its server counts a lease's TTL in (whole
	// seconds on etcd and NATS); 0 for any duration. plan refuses a TTL off
	// the grain, and plans of TTLs (advise, tune-ttl) round to it.
	TTLGrain time.Duration
	// LocalMinTTL is the shortest TTL every local topology lockbench
	// starts for it grants (etcd raises a shorter lease); 0 for none
	// beyond one grain.
	LocalMinTTL time.Duration
	// LoneMinTTL, when set, is the shortest TTL a lone local server grants,
	// below LocalMinTTL (etcd:1 runs at a shorter election timeout than a
	// cluster: EtcdLocalTiming).
	LoneMinTTL time.Duration
	// onRedis, when set, builds the lock over Redis masters: New asks it
	// for a lock that has no case of its own (a peer in a file of its own).
	onRedis func(nodes []redis.Cmdable) (Locker, error)
}

// MinTTLOn is the shortest TTL the lock's local topology of the given
// servers grants: LoneMinTTL on one, where set, else LocalMinTTL.
func (d Descriptor) MinTTLOn(servers int) time.Duration {
	if servers == 1 && d.LoneMinTTL > 0 {
		return d.LoneMinTTL
	}
	return d.LocalMinTTL
}

// FitTTL is ttl as every local topology of the lock takes it: rounded to
// its grain, and at least one grain and LocalMinTTL.
func (d Descriptor) FitTTL(ttl time.Duration) time.Duration {
	if d.TTLGrain > 0 {
		ttl = max(d.TTLGrain, ttl.Round(d.TTLGrain))
	}
	return max(d.LocalMinTTL, ttl)
}

// descriptors is the registry: one entry per lock, in help order. Adding a
// lock is its code in a file of its own, one entry here, and one case in
// its backend's builder (New, NewEtcd, NewPg).
func descriptors() []Descriptor {
	return []Descriptor{
		{Name: LockSingle, Backend: BackendRedis, Lease: true, Renewable: true, Pipelinable: true, RunFlags: []string{"wait-replicas"}},
		{Name: LockFenced, Backend: BackendRedis, Lease: true, Renewable: true, Fencing: true, Pipelinable: true, RunFlags: []string{"wait-replicas", "unfenced-writes"}},
		{Name: LockRedlock, Backend: BackendRedis, Lease: true, Renewable: true, Quorum: true, RunFlags: []string{"node-timeout", "drift-factor", "fail-fast"}},
		{Name: LockNaive, Backend: BackendRedis, Lease: true, Renewable: true, Unsafe: true, RunFlags: []string{"naive-gap"}},
		{Name: LockRedsync, Backend: BackendRedis, Lease: true, Renewable: true, Quorum: true, Peer: true, RunFlags: []string{"peer-option"}},
		{Name: LockRedislock, Backend: BackendRedis, Lease: true, Renewable: true, Peer: true, RunFlags: []string{"peer-option"}},
		{Name: LockRueidislock, Backend: BackendRedis, Lease: true, Peer: true, OwnClient: true, onRedis: func(n []redis.Cmdable) (Locker, error) { return newCtxLock(rueidislockSpec(), n) }},
		{Name: LockValkeylock, Backend: BackendRedis, Lease: true, Peer: true, OwnClient: true, onRedis: func(n []redis.Cmdable) (Locker, error) { return newCtxLock(valkeylockSpec(), n) }},
		{Name: LockEtcd, Backend: BackendEtcd, Lease: true, Renewable: true, Fencing: true, RunFlags: []string{"node-timeout", "unfenced-writes"},
			TTLGrain: time.Second, LocalMinTTL: EtcdLocalMinTTL(3), LoneMinTTL: EtcdLocalMinTTL(1)},
		{Name: LockPgAdvisory, Backend: BackendPostgres},
		{Name: LockPgAdvisoryXact, Backend: BackendPostgres, InTransaction: true},
		{Name: LockPgLease, Backend: BackendPostgres, Lease: true, Renewable: true, Fencing: true, RunFlags: []string{"unfenced-writes"}},
		{Name: LockOCC, Backend: BackendPostgres, InTransaction: true},
		// zk's lease is its session: --ttl is the session timeout, which the
		// client's own pings keep alive, so there is nothing to renew.
		{Name: LockZk, Backend: BackendZookeeper, Lease: true, Fencing: true, RunFlags: []string{"unfenced-writes"}},
		{Name: LockNatsKV, Backend: BackendNats, Lease: true, Renewable: true, Fencing: true, RunFlags: []string{"unfenced-writes"},
			TTLGrain: time.Second},
	}
}

// Descriptors lists every lock's descriptor, in help order.
func Descriptors() []Descriptor { return descriptors() }

// Describe finds a lock's descriptor.
func Describe(name string) (Descriptor, bool) {
	if IsDriver(name) {
		if _, err := ParseDriverCommand(name); err != nil {
			return Descriptor{}, false
		}
		return driverDescriptor(name), true
	}
	if IsDef(name) {
		return defDescriptor(name)
	}
	if IsGo(name) {
		return genericGoDescriptor(name), goName.MatchString(strings.TrimPrefix(name, GoPrefix))
	}
	for _, d := range descriptors() {
		if d.Name == name {
			return d, true
		}
	}
	return Descriptor{}, false
}

// mustDescribe is the descriptor of a lock the caller knows is registered;
// an unknown name gets the zero descriptor, which takes nothing.
func mustDescribe(name string) Descriptor {
	d, _ := Describe(name)
	return d
}

// Names lists the registered locks' names, in help order.
func Names() []string { return LocksWhere(func(Descriptor) bool { return true }) }

// LocksWhere lists the names of the locks keep selects, in help order.
func LocksWhere(keep func(Descriptor) bool) []string {
	var out []string
	for _, d := range descriptors() {
		if keep(d) {
			out = append(out, d.Name)
		}
	}
	return out
}

// LocksOn lists the locks that speak backend, in help order.
func LocksOn(backend string) []string {
	return LocksWhere(func(d Descriptor) bool { return d.Backend == backend })
}

// LocksTakingFlag lists the locks that take a lock-scoped run flag.
func LocksTakingFlag(flag string) []string {
	return LocksWhere(func(d Descriptor) bool { return slices.Contains(d.RunFlags, flag) })
}

// IsPeer reports whether lock drives a peer library rather than lockbench's own code.
func IsPeer(lock string) bool { return mustDescribe(lock).Peer }

// IsQuorum reports whether lock acquires by a majority of several masters.
func IsQuorum(lock string) bool { return mustDescribe(lock).Quorum }

// IsRenewable reports whether lock has a lease with a TTL to renew.
func IsRenewable(lock string) bool { return mustDescribe(lock).Renewable }

// IsPipelinable reports whether --pipeline auto may batch lock's commands.
func IsPipelinable(lock string) bool { return mustDescribe(lock).Pipelinable }

// IsInTransaction reports whether lock's protected write is part of the
// lock itself.
func IsInTransaction(lock string) bool { return mustDescribe(lock).InTransaction }

// unknownLock refuses a name that is not registered, with the nearest one.
func unknownLock(name string) error {
	return fmt.Errorf("lock %q: unknown; %s", name, suggest.Unknown(name, Names()))
}
