package scenario

import (
	"fmt"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
)

// The recipes. Each reproduces its hazard within seconds on local
// processes; timings are chosen so that the fault lands while holders are
// inside their critical sections.

// gcPause: holders stall past the TTL before their protected write.
func gcPause() Scenario {
	return Scenario{
		Name:        "gc-pause",
		Description: "holders stall 300 ms past a 100 ms TTL before writing; single vs fenced, with and without renewal",
		Base:        vals("workload", "gc-pause", "duration", "3s", "warmup", "0"),
		Violation:   "a stale write accepted (an expired holder wrote after a newer one): silent corruption",
		violated:    staleWrites,
		exposure:    outlivedLeases(),
		Variants: []Variant{
			{Name: "single", Flags: vals("lock", lockimpl.LockSingle), TakesLock: true},
			{Name: "single + renewal ttl/3", Flags: vals("lock", lockimpl.LockSingle, "renew-every", "ttl/3"), TakesLock: true},
			{Name: "fenced", Mitigated: true, Flags: vals("lock", lockimpl.LockFenced)},
			{Name: "fenced + renewal ttl/3", Mitigated: true, Flags: vals("lock", lockimpl.LockFenced, "renew-every", "ttl/3")},
		},
	}
}

// failover: a lock granted on the primary during replication lag is lost
// when the replica is promoted, and granted again.
func failover() Scenario {
	return Scenario{
		Name: "failover",
		Description: "replication lags, locks are granted on the primary, the primary dies and sentinels promote the " +
			"replica that never saw them; WAIT 1 after SET prevents it, at a cost",
		// Holders outlast the ~2 s the sentinels need to promote, and every key
		// has waiters. The TTL is just above the longest hold: the replica
		// still has the entry of the holder before the lag (its DEL was not
		// replicated either), and that entry must expire while the holder
		// granted during the lag is still inside.
		Base: vals("topology", "replicated", "lock", "single", "keys", "uniform:16", "concurrency", "48",
			"hold", "uniform:4s,5500ms", "ttl", "6500ms", "retry", "fixed:10ms", "acquire-timeout", "20s",
			"duration", "9s", "warmup", "4s",
			// The lag must end soon after the kill: a replica paused for writes
			// cannot answer the sentinels, and they will not promote it.
			"fault", "at=0s lag-replica for=2500ms", "fault", "at=2300ms kill primary"),
		Violation:    "double grants: a second holder was granted a key whose first holder was still inside with a valid lease",
		violated:     doubleGrants,
		exposure:     atFault("kill primary"),
		Per:          "per failover",
		Availability: true,
		Variants: []Variant{
			{Name: "no WAIT", TakesLock: true},
			{Name: "--wait-replicas 1", Mitigated: true, Flags: waitVariant("lag-replica", "kill primary")},
		},
	}
}

// waitVariant is the WAIT variant of a failover recipe. Under WAIT nothing
// is granted while the replica lags, and the holders of the warm-up leave
// 0-1.5 s into the window: with the base's faults the primary would die
// with nobody inside, a trial that could not have failed. So its lag (and
// the kill, as long after it) come 1.5 s later, once every key has been
// granted again, with WAIT, and is held (holds of 4 s and more) past the
// kill. lag and kill are the fault specs after "at=".
func waitVariant(lag, kill string) plan.Values {
	return vals("wait-replicas", "1", "wait-timeout", "100ms",
		"fault", "at=1500ms "+lag+" for=2500ms", "fault", "at=3800ms "+kill)
}

// clusterFailover: failover's hazard on one shard of a Redis Cluster. The
// cluster promotes the replica itself (no sentinels), about a node timeout
// (1.5 s) and a second after the master dies; the ClusterClient finds the
// new master within its 0.5 s slot-map reload. Timings as in failover:
// holders outlast the promotion, and the TTL is just above the longest hold.
func clusterFailover() Scenario {
	return Scenario{
		Name: "cluster-failover",
		Description: "Redis Cluster: shard 0's replica lags, locks are granted on its master, the master dies and the cluster " +
			"promotes the replica that never saw them; WAIT 1 after SET on the shard's master prevents it, at a cost",
		Base: vals("topology", "cluster:3", "lock", "single", "keys", "uniform:24", "concurrency", "48",
			"hold", "uniform:4s,5500ms", "ttl", "6500ms", "retry", "fixed:10ms", "acquire-timeout", "20s",
			"duration", "8s", "warmup", "4s",
			// The lag ends just after the kill: the replica drops the stream
			// it held when its master's link breaks.
			"fault", "at=0s lag-replica shard=0 for=2500ms", "fault", "at=2300ms kill master=0"),
		Violation: "double grants: a second holder was granted a key whose first holder was still inside with a valid lease",
		violated:  doubleGrants,
		exposure:  atFault("kill master=0"),
		Per:       "per failover",
		Variants: []Variant{
			{Name: "no WAIT", TakesLock: true},
			{Name: "--wait-replicas 1", Mitigated: true, Flags: waitVariant("lag-replica shard=0", "kill master=0")},
		},
	}
}

// redlockPartialQuorum is the shared shape of restart and clock-jump: two
// masters are killed, so every lock meanwhile is held on exactly three of
// five; one of those three then forgets it; the two come back empty (no
// persistence) and a second client reaches a quorum of its own while the first
// is still inside. Killing rather than cutting the two matters: a cut-off
// master keeps the previous holder's entry, which blocks the second quorum
// until it expires.
func redlockPartialQuorum(forget string) plan.Values {
	return append2(vals("topology", "redlock:5", "keys", "uniform:8", "concurrency", "16",
		"hold", "uniform:3s,4s", "ttl", "8s", "retry", "fixed:10ms", "acquire-timeout", "20s",
		"node-timeout", "50ms", "duration", "7s", "warmup", "2s"), twoDown(forget)...)
}

// twoDown kills masters 3 and 4 at the start and restarts them at 2.5 s,
// with an optional fault on master 2 in between.
func twoDown(between string) []string {
	faults := []string{"at=0s kill node=3", "at=0s kill node=4", "at=2500ms restart node=3", "at=2500ms restart node=4"}
	if between != "" {
		faults = append(faults, between)
	}
	return faults
}

// append2 adds fault flags to v.
func append2(v plan.Values, faults ...string) plan.Values {
	v["fault"] = append(v["fault"], faults...)
	return v
}

func redlockRestart() Scenario {
	return Scenario{
		Name: "redlock-restart",
		Description: "five masters without persistence; one that holds part of a quorum restarts at once and forgets " +
			"the lock; mitigations: a restart delay of at least the TTL, or fsync'd AOF",
		Base:      redlockPartialQuorum("at=2s restart node=2"),
		Violation: "double grants: two clients each held a quorum for the same key, both leases valid",
		violated:  doubleGrants,
		exposure:  atFault("restart node=2"),
		Per:       "per restart",
		Variants: []Variant{
			{Name: "restart at once, no persistence", TakesLock: true},
			{Name: "--restart-delay 8s (≥ TTL)", Mitigated: true, Flags: vals("restart-delay", "8s"), TakesLock: true},
			{Name: "--persistence aof-always", Mitigated: true, Flags: vals("persistence", "aof-always"), TakesLock: true},
		},
	}
}

func redlockClockJump() Scenario {
	return Scenario{
		Name:        "redlock-clock-jump",
		Description: "one master of a three-master quorum has its clock jump past the TTL, expiring the lock early",
		Base:        redlockPartialQuorum("at=2s clock-jump node=2 +9s"),
		Violation:   "double grants: two clients each held a quorum for the same key, both leases valid",
		violated:    doubleGrants,
		exposure:    atFault("clock-jump"),
		Per:         "per clock jump",
		Variants: []Variant{
			{Name: "clock jumps +9s (TTL 8s)", TakesLock: true},
			{Name: "no jump (control)", Mitigated: true, Flags: plan.Values{"fault": twoDown("")}, TakesLock: true},
		},
	}
}

func redlockNodeDown() Scenario {
	return Scenario{
		Name:        "redlock-node-down",
		Description: "availability and latency of Redlock on five masters with one killed, with and without --fail-fast",
		Base:        vals("topology", "redlock:5", "concurrency", "8", "duration", "3s", "warmup", "500ms", "keys", "unique"),
		Variants: []Variant{
			{Name: "all masters up", TakesLock: true},
			{Name: "one killed", Flags: vals("fault", "at=0s kill node=0"), TakesLock: true},
			{Name: "one killed, --fail-fast", Flags: vals("fault", "at=0s kill node=0", "fail-fast", "true"), TakesLock: true},
		},
	}
}

func redlockSlowNode() Scenario {
	return Scenario{
		Name:        "redlock-slow-node",
		Description: "availability and latency of Redlock on five masters with one 300 ms slower, with and without --fail-fast",
		Base:        vals("topology", "redlock:5", "concurrency", "8", "duration", "3s", "warmup", "500ms", "keys", "unique", "node-timeout", "500ms"),
		Variants: []Variant{
			// 1 ms on master 0 keeps the proxies of the other variants in the path.
			{Name: "all masters fast (1ms)", Flags: vals("fault", "at=0s latency node=0 1ms for=1h"), TakesLock: true},
			{Name: "one 300ms slower", Flags: vals("fault", "at=0s latency node=0 300ms for=1h"), TakesLock: true},
			{Name: "one 300ms slower, --fail-fast", Flags: vals("fault", "at=0s latency node=0 300ms for=1h", "fail-fast", "true"), TakesLock: true},
		},
	}
}

func naiveRelease() Scenario {
	return Scenario{
		Name:        "naive-release",
		Description: "release by GET then DEL races the lease's expiry and deletes the next holder's lock; the atomic script does not",
		Base:        vals("workload", "naive-release-race", "duration", "3s", "warmup", "0"),
		Violation:   "double grants: the naive release deleted the next holder's lease, and a third was granted while it was inside",
		violated:    doubleGrants,
		Variants: []Variant{
			{Name: "naive GET+DEL"},
			{Name: "single (atomic script)", Mitigated: true, Flags: vals("lock", lockimpl.LockSingle)},
		},
	}
}

// etcdLeaderFailover: the etcd leader is killed while holders are inside.
// A new leader keeps every lease (etcd extends them across an election), so
// no key is granted twice; what the failover costs is the window without
// acquisitions while the members elect, and for keys whose release failed
// during the election, until their lease expires: etcd refreshes every lease
// to a full TTL when a new leader takes over, so the TTL is etcd's minimum.
func etcdLeaderFailover() Scenario {
	return Scenario{
		Name: "etcd-leader-failover",
		Description: "the etcd leader of three members is killed with holders inside; consensus keeps every lease, " +
			"so nothing is granted twice: the cost is a window without acquisitions (compare failover on replicated Redis)",
		Base: vals("topology", "etcd:3", "keys", "uniform:16", "concurrency", "32",
			"hold", "uniform:200ms,800ms", "ttl", "2s", "retry", "fixed:10ms", "acquire-timeout", "10s",
			"duration", "8s", "warmup", "1s"),
		Violation:    "double grants: a second holder was granted a key whose first holder was still inside with a valid lease",
		violated:     doubleGrants,
		exposure:     atFault("kill leader"),
		Per:          "per failover",
		Availability: true,
		Variants: []Variant{
			{Name: "kill leader at 2s", Mitigated: true, Flags: vals("fault", "at=2s kill leader")},
			{Name: "no fault (control)", Mitigated: true},
		},
	}
}

// etcdLeaderIsolated is etcd-leader-failover with the leader cut off from
// its followers instead of killed: it keeps running and its clients still
// reach it, but it cannot commit, steps down once it misses its quorum,
// and the others elect one of themselves. A holder whose client talks to
// it cannot renew or release there; does the new leader grant its key to a
// second holder while the first still works?
func etcdLeaderIsolated() Scenario {
	s := etcdLeaderFailover()
	s.Name = "etcd-leader-isolated"
	s.Description = "the etcd leader of three members is cut off from its followers for 3 s with holders inside, while " +
		"its clients still reach it; the others elect a new leader: is a key granted twice? (compare etcd-leader-failover)"
	s.exposure = atFault("isolate leader")
	s.Per = "per isolation"
	s.Variants = []Variant{
		{Name: "isolate leader at 2s for 3s", Mitigated: true, Flags: vals("fault", "at=2s isolate leader for=3s")},
		{Name: "no fault (control)", Mitigated: true},
	}
	return s
}

// etcdGroupsIsolated is etcd-leader-isolated on five members with the
// group cuts: the leader's minority (the leader and one more) cut off from
// the other three, which elect a leader of their own, or a ring in which
// each member keeps its two neighbours, a majority of its own, and no two
// the same one. A holder whose client talks to a cut member cannot renew
// or release there; is its key granted to a second holder while it still
// works?
func etcdGroupsIsolated() Scenario {
	s := etcdLeaderFailover()
	s.Name = "etcd-groups-isolated"
	s.Description = "etcd:5 is cut for 3 s with holders inside, its clients still reaching every member: the leader's " +
		"minority from the majority, or a ring of overlapping majorities: is a key granted twice? (compare etcd-leader-isolated)"
	s.Base["topology"] = []string{"etcd:5"}
	s.exposure = atFault("isolate")
	s.Per = "per cut"
	s.Variants = []Variant{
		{Name: "minority of 5 cut 3s", Mitigated: true, Flags: vals("fault", "at=2s isolate minority for=3s")},
		{Name: "ring of 5 cut 3s", Mitigated: true, Flags: vals("fault", "at=2s isolate ring for=3s")},
		{Name: "no fault (control)", Mitigated: true},
	}
	return s
}

// replicatedPrimaryIsolated is failover with the primary cut off from its
// replica and the sentinels instead of killed: it keeps running and its
// clients keep reaching it, so it grants locks nobody replicates while the
// sentinels promote the replica, and the failover client moves to the new
// primary only when the sentinels announce it. A key granted on the cut
// primary in that window is free on the new one: a second holder is
// granted while the first still works. At the heal the old primary
// becomes the new one's replica and its grants vanish. The cut outlasts
// the ~2-3 s promotion; holds of 1-2 s keep keys changing hands before
// the cut, so that the WAIT variant (under which nothing is granted from
// the cut until the demoted node resyncs, ~10 s after the heal) acquires
// in its window and is conclusive. fenced takes its tokens from the same
// primary, whose counter the promoted replica has only up to the cut:
// what a fence changes is measured, not assumed.
func replicatedPrimaryIsolated() Scenario {
	return Scenario{
		Name: "replicated-primary-isolated",
		Description: "the primary of replicated is cut off from its replica and sentinels for 5 s with holders inside, " +
			"its clients still reaching it; the sentinels promote the replica: is a key granted twice? (compare failover)",
		Base: vals("topology", "replicated", "lock", "single", "keys", "uniform:16", "concurrency", "32",
			"hold", "uniform:1s,2s", "ttl", "3s", "retry", "fixed:10ms", "acquire-timeout", "20s",
			"duration", "10s", "warmup", "1s", "fault", "at=3s isolate primary for=5s"),
		Violation:    "double grants: a second holder was granted a key whose first holder was still inside with a valid lease",
		violated:     doubleGrants,
		exposure:     atFault("isolate primary"),
		Per:          "per isolation",
		Availability: true,
		Variants: []Variant{
			{Name: "isolate primary 5s", TakesLock: true},
			{Name: "fenced", Flags: vals("lock", lockimpl.LockFenced)},
			{Name: "--wait-replicas 1", Mitigated: true, Flags: vals("wait-replicas", "1", "wait-timeout", "100ms")},
		},
	}
}

// zkLeaderIsolated: the ZooKeeper leader is cut off from its followers
// while its clients still reach it (isolate leader on zookeeper:3), or the
// leader's side of five members is (isolate minority: the leader and one
// more), or the five are cut into a ring in which each keeps a majority of
// its own (isolate ring). The cut side loses its quorum and stops serving;
// its clients reconnect elsewhere within the session timeout, or their
// sessions expire and their ephemeral nodes with them. Is a key granted
// while its holder still works?
func zkLeaderIsolated() Scenario {
	return Scenario{
		Name: "zk-leader-isolated",
		Description: "the ZooKeeper leader is cut off from its followers for 4 s with holders inside (on three members; " +
			"or the leader's minority, or a ring of overlapping majorities, on five), its clients still reaching it: is a key granted twice?",
		Base: vals("topology", "zookeeper:3", "lock", lockimpl.LockZk, "keys", "uniform:16", "concurrency", "32",
			"hold", "uniform:200ms,800ms", "ttl", "2s", "retry", "fixed:10ms", "acquire-timeout", "10s",
			"duration", "10s", "warmup", "1s"),
		Violation: "double grants: a second holder was granted a key whose first holder was still inside with a valid lease",
		violated:  doubleGrants,
		exposure:  atFault("isolate"),
		Per:       "per isolation",
		Variants: []Variant{
			{Name: "leader of 3 cut 4s", Mitigated: true, Flags: vals("fault", "at=2s isolate leader for=4s")},
			{Name: "minority of 5 cut 4s", Mitigated: true, Flags: vals("topology", "zookeeper:5", "fault", "at=2s isolate minority for=4s")},
			{Name: "ring of 5 cut 4s", Mitigated: true, Flags: vals("topology", "zookeeper:5", "fault", "at=2s isolate ring for=4s")},
			{Name: "no fault (control)", Mitigated: true},
		},
	}
}

// etcdGCPause is gc-pause on etcd: a holder stalls past its lease, etcd
// expires it and grants the key to the next, and the stalled holder comes
// back believing it still holds the lock (an overlap: a lease is still a
// lease). Its write carries the old create revision and the fenced resource
// rejects it. Redis single, unfenced, is the contrast. etcd grants at least
// 2 s and revokes expired leases on a 500 ms tick, so the stall is 3.5 s.
func etcdGCPause() Scenario {
	return Scenario{
		Name: "etcd-gc-pause",
		Description: "gc-pause on etcd:3: holders stall 3.5 s past a 2 s lease; the overlap still happens, but the key's " +
			"create revision fences the stale write (single on Redis, unfenced, for contrast)",
		Base: vals("topology", "etcd:3", "keys", "uniform:4", "concurrency", "8", "ttl", "2s", "hold", "const:5ms",
			"pause-prob", "0.2", "pause", "const:3500ms", "retry", "fixed:20ms", "acquire-timeout", "10s",
			"duration", "6s", "warmup", "0"),
		Violation: "a stale write accepted (an expired holder wrote after a newer one): silent corruption",
		violated:  staleWrites,
		exposure:  outlivedLeases(),
		Variants: []Variant{
			{Name: "single on Redis (no fence)", Flags: vals("topology", "single", "lock", "single")},
			{Name: "etcd (create-revision fence)", Mitigated: true},
			{Name: "etcd + renewal ttl/2", Mitigated: true, Flags: vals("renew-every", "ttl/2")},
		},
	}
}

// pgSessionLoss: lock holders' PostgreSQL sessions are terminated while
// they work. A session-level advisory lock ends with its session, the next
// waiter takes the key, and the first holder, unaware, writes after it
// through another connection: its unfenced write is accepted though stale.
// The transaction-level lock's write goes in the lock's own transaction, so
// a holder whose session died cannot write at all. Holds are heavy-tailed
// so that the holder who lost its session often writes after the one who
// took over: a termination lands more often in a long hold, and the next
// holder's is usually short (two in five terminations ended in a stale
// write, where a uniform hold gave one in four and CI once saw none in ten).
// Two keys so that every terminated holder has a waiter.
func pgSessionLoss() Scenario {
	// Nine terminations a trial: each ends in a stale write about half the
	// time, so two trials all but surely show one.
	var faults []string
	for at := 300; at < 4000; at += 400 {
		faults = append(faults, fmt.Sprintf("at=%dms terminate holder", at))
	}
	return Scenario{
		Name: "pg-session-loss",
		Description: "PostgreSQL: lock holders' sessions are terminated mid-work; the session-level advisory lock is freed " +
			"under a holder whose unfenced write then lands after the next holder's; the transaction-level lock's write " +
			"commits only if its session survived",
		Base: append2(vals("topology", "postgres", "keys", "uniform:2", "concurrency", "8", "hold", "lognormal:60ms,1.2",
			"ttl", "2s", "retry", "fixed:5ms", "acquire-timeout", "5s", "duration", "4s", "warmup", "0"), faults...),
		Violation: "a stale write accepted (a holder whose lock had ended wrote after a newer holder): silent corruption",
		violated:  staleWrites,
		exposure:  atFault("terminate holder"),
		Variants: []Variant{
			{Name: "pg-advisory, unfenced write", Flags: vals("lock", "pg-advisory")},
			{Name: "pg-advisory-xact, write in tx", Mitigated: true, Flags: vals("lock", "pg-advisory-xact")},
			{Name: "pg-lease, fenced by a sequence", Mitigated: true, Flags: vals("lock", "pg-lease")},
		},
	}
}

// zkSessionExpiry is Curator #727/#1121: the ensemble expires a lock
// holder's session while the holder works (here: expire holder, which ends
// the session as an expiry would), deletes its node and grants the key to
// the next waiter; the first holder, not yet told, writes after the new
// one. Holders stall 4 s before writing (a GC pause, twice the 2 s session
// timeout) so that one is inside, stalled, at each expiry, and its write
// comes after its successor's; without an expiry the stall is harmless,
// the session's pings keep the node. Four expiries a trial, a second
// apart: one lands with nobody stalled inside often enough that two
// showed the stale write in three trials of five. Every worker shares the lock's one
// session, as Curator's clients in a process share theirs, so each expiry
// ends every holder's lease at once.
func zkSessionExpiry() Scenario {
	return Scenario{
		Name: "zk-session-expiry",
		Description: "ZooKeeper: a stalled holder's session is expired by the ensemble, the next waiter is granted, and the " +
			"first writes after it (Curator #727); the node's czxid fences the stale write, a write without it is accepted",
		Base: vals("topology", "zookeeper:3", "lock", lockimpl.LockZk, "keys", "uniform:2", "concurrency", "8", "ttl", "2s",
			"hold", "const:10ms", "pause-prob", "0.3", "pause", "const:4s", "retry", "fixed:20ms", "acquire-timeout", "10s",
			"duration", "9s", "warmup", "1s", "fault", "at=1s expire holder", "fault", "at=2s expire holder",
			"fault", "at=3s expire holder", "fault", "at=4s expire holder"),
		Violation: "a stale write accepted (a holder whose session had expired wrote after the key's next holder): silent corruption",
		violated:  staleWrites,
		exposure:  atFault("expire holder"),
		Per:       "per trial of four expiries",
		Variants: []Variant{
			{Name: "zk, writes without the czxid", Flags: vals("unfenced-writes", "true")},
			{Name: "zk, czxid fence", Mitigated: true},
		},
	}
}

// natsLeaderLoss: the leader of the lock bucket's stream (KV_lockbench) is
// killed while holders work, renewing every third of a 1 s TTL (NATS
// counts key TTLs in whole seconds). Until the two other servers elect a
// leader nothing can be written: renewals fail and leases run out under
// their holders. The hazard is such a holder writing after the key's next
// holder; the key's revision fences that write, and without it the write
// would be accepted. Holds are heavy-tailed so that some are long enough to
// span the election. The verdict adds the unavailability window.
func natsLeaderLoss() Scenario {
	return Scenario{
		Name: "nats-leader-loss",
		Description: "NATS JetStream KV: the lock stream's leader is killed with holders inside; renewals fail until a new " +
			"leader is elected and leases run out under working holders; a stale write, if any, is fenced by the key's revision",
		Base: vals("topology", "nats:3", "lock", lockimpl.LockNatsKV, "keys", "uniform:4", "concurrency", "16", "ttl", "1s",
			"hold", "lognormal:300ms,1.5", "renew-every", "ttl/3", "retry", "fixed:20ms", "acquire-timeout", "10s",
			"duration", "10s", "warmup", "1s", "fault", "at=2s kill leader"),
		Violation:    "a stale write accepted (a holder whose lease ran out during the election wrote after the next holder): silent corruption",
		violated:     staleWrites,
		exposure:     atFault("kill leader"),
		Per:          "per leader loss",
		Availability: true,
		Variants: []Variant{
			{Name: "nats-kv, unfenced writes", Flags: vals("unfenced-writes", "true")},
			{Name: "nats-kv, revision fence", Mitigated: true},
		},
	}
}

// natsLeaderIsolated is nats-leader-loss with the lock bucket's stream
// leader cut off from the other two servers (its routes) instead of
// killed: it keeps running and its clients still reach it, but it cannot
// reach its stream's quorum, so it can commit nothing, and the other two
// elect a stream leader of their own. Renewals and grants through the cut
// server fail; does the new leader grant a key whose holder still works
// with a valid lease? The cut (5 s) outlasts a stream election on this
// host; holds as in nats-leader-loss, renewing every third of the 1 s TTL.
// The key's revision fences a write; what the fence changes is measured
// beside the same lock without it and a control without the cut.
func natsLeaderIsolated() Scenario {
	s := natsLeaderLoss()
	s.Name = "nats-leader-isolated"
	s.Description = "NATS JetStream KV: the lock stream's leader is cut off from the other two servers for 5 s with " +
		"holders inside, its clients still reaching it; the others elect a leader: is a key granted twice? (compare nats-leader-loss)"
	delete(s.Base, "fault")
	cut := "at=2s isolate leader for=5s"
	s.Violation = "double grants: a second holder was granted a key whose first holder was still inside with a valid lease"
	s.violated = doubleGrants
	s.exposure = atFault("isolate leader")
	s.Per = "per isolation"
	s.Variants = []Variant{
		{Name: "leader cut 5s, unfenced", Mitigated: true, Flags: vals("fault", cut, "unfenced-writes", "true")},
		{Name: "leader cut 5s, revision fence", Mitigated: true, Flags: vals("fault", cut)},
		{Name: "no fault (control)", Mitigated: true},
	}
	return s
}

// clusterMasterIsolated is cluster-failover with the master of shard 0
// (where a third of the keys live) cut off the cluster bus instead of
// killed: it keeps running and its clients keep reaching it on its data
// port, while the other masters fail it after the node timeout and promote
// its replica. Until it counts itself in a minority (also a node timeout)
// it could grant locks its replica never sees, free on the promoted
// replica. Redis Cluster closes that window by design: the cut master
// counts itself in a minority and answers CLUSTERDOWN after one node
// timeout, while the others promote its replica only after a node timeout
// and an election delay. So every variant is marked mitigated: the recipe
// tests that claim (3 trials of each showed no double grant, the cut
// master's refusals counted as clusterdown errors). At the heal the old
// master becomes a replica. Timings as in replicated-primary-isolated: the
// cut outlasts the promotion, holds of 1-2 s keep keys changing hands.
// fenced takes its tokens from the same master: what a fence changes is
// measured.
func clusterMasterIsolated() Scenario {
	cut := "at=3s isolate master=0 for=5s"
	return Scenario{
		Name: "cluster-master-isolated",
		Description: "Redis Cluster: shard 0's master is cut off the cluster bus for 5 s with holders inside, its clients " +
			"still reaching it; the cluster promotes its replica: is a key granted twice? (compare cluster-failover)",
		Base: vals("topology", "cluster:3,1", "lock", "single", "keys", "uniform:24", "concurrency", "32",
			"hold", "uniform:1s,2s", "ttl", "3s", "retry", "fixed:10ms", "acquire-timeout", "20s",
			"duration", "10s", "warmup", "1s"),
		Violation:    "double grants: a second holder was granted a key whose first holder was still inside with a valid lease",
		violated:     doubleGrants,
		exposure:     atFault("isolate master=0"),
		Per:          "per isolation",
		Availability: true,
		Variants: []Variant{
			{Name: "isolate master=0 5s", Mitigated: true, TakesLock: true, Flags: vals("fault", cut)},
			{Name: "fenced", Mitigated: true, Flags: vals("lock", lockimpl.LockFenced, "fault", cut)},
			{Name: "no fault (control)", Mitigated: true},
		},
	}
}
