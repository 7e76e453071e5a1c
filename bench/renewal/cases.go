package renewal

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/lockimpl"
)

// Lock is one column of the matrix: a lock that renews, on the smallest
// topology it runs on, with the shortest TTL its servers grant (so a cell
// takes seconds, not minutes).
type Lock struct {
	// Name is the --lock value.
	Name string
	// Topology is the --topology value its cells run on.
	Topology string
	// Nodes is how many servers the topology has: a fault that must reach
	// the lease everywhere (a cut path) hits each.
	Nodes int
	// TTL is the lease TTL of its cells; every other timing of a recipe is
	// a multiple of it.
	TTL time.Duration
	// RestartTTL, when set, is the TTL of its restart-empty runs: a store
	// that keeps leases shows it only if a restart ends inside the lease,
	// and etcd:1 takes most of a second to come back, which its 1 s lease
	// does not outlast (the holders are told, and the cell says caught
	// where 2 s shows kept).
	RestartTTL time.Duration
	// Fencing says whether its leases carry fencing tokens (stale writes are
	// then stopped by the resource, and counted apart).
	Fencing bool
	// Absent, when set, says why the lock has no cells yet (it is not on
	// main); its column is kept so that the matrix shows where it goes.
	Absent string
	// NoRenewal, when set, says why no case applies to the lock: a driver
	// lock whose hello says it does not renew.
	NoRenewal string
	// SelfExtending is true for a lock whose library extends its keys
	// itself and cancels the lock's context when an extension fails
	// (rueidislock, valkeylock): its holders renew nothing, and each case
	// runs its self-extending form, or is n/a with why.
	SelfExtending bool
}

// session says whether l's lease is a session that its client's pings
// keep alive (zk): nothing renews it, so each case runs its session
// analogue on l, or is n/a there.
func (l Lock) session() bool {
	d, _ := lockimpl.Describe(l.Name)
	return d.Lease && !d.Renewable
}

// cut is the fault that cuts l's path to its servers for a while, so that
// its renewals fail, as --fault names it (recipes write faults as the flag
// reads them): a partition through the proxy in front of each server,
// which every topology a renewing lock runs on takes (TestEveryLockCanBeCut).
func (l Lock) cut() string { return "partition" }

// Locks returns every lock that renews, in column order: lockbench's own,
// the peer libraries, then the other backends, zk's session among them.
func Locks() []Lock {
	const redisTTL, pgTTL = 300 * time.Millisecond, 500 * time.Millisecond
	// etcd raises a shorter lease to ⌈1.5 × election timeout⌉: 1 s on a
	// lone local member (lockimpl.EtcdLocalTiming), 2 s on a cluster.
	etcdTTL := lockimpl.EtcdLocalMinTTL(1)
	// NATS counts key TTLs in whole seconds; ZooKeeper's local members
	// grant session timeouts from two ticks: 1 s.
	const natsTTL, zkTTL = time.Second, time.Second
	return []Lock{
		{Name: lockimpl.LockSingle, Topology: "single", Nodes: 1, TTL: redisTTL},
		{Name: lockimpl.LockFenced, Topology: "single", Nodes: 1, TTL: redisTTL, Fencing: true},
		{Name: lockimpl.LockRedlock, Topology: "redlock:3", Nodes: 3, TTL: redisTTL},
		{Name: lockimpl.LockRedsync, Topology: "redlock:3", Nodes: 3, TTL: redisTTL},
		{Name: lockimpl.LockRedislock, Topology: "single", Nodes: 1, TTL: redisTTL},
		{Name: lockimpl.LockRueidislock, Topology: "single", Nodes: 1, TTL: redisTTL, SelfExtending: true},
		{Name: lockimpl.LockValkeylock, Topology: "single", Nodes: 1, TTL: redisTTL, SelfExtending: true},
		{Name: lockimpl.LockEtcd, Topology: "etcd:1", Nodes: 1, TTL: etcdTTL, RestartTTL: 2 * etcdTTL, Fencing: true},
		{Name: lockimpl.LockPgLease, Topology: "postgres", Nodes: 1, TTL: pgTTL, Fencing: true},
		{Name: lockimpl.LockZk, Topology: "zookeeper:1", Nodes: 1, TTL: zkTTL, Fencing: true},
		{Name: lockimpl.LockNatsKV, Topology: "nats:1", Nodes: 1, TTL: natsTTL, Fencing: true},
	}
}

// selfExtendingUnseen is why a self-extending lock's lease cannot be
// judged past its first TTL: the library's extensions go over its own
// connections, which the history does not see, so the lease model bounds
// each lease by the TTL from its acquisition (as zk's session), and its
// cases keep the work under one TTL.
const selfExtendingUnseen = "the library extends its keys on its own goroutines and connections, which the history does not see: " +
	"a lease is judged by one TTL from its acquisition, so the work stays under it"

// noRenewCall is why a probe that calls Renew has no self-extending form.
const noRenewCall = "the holder has no renewal to call: the library extends its keys itself, out of the holder's reach"

// Loss says when a lease is lost in a case, which decides what its holder
// had to notice.
type Loss uint8

const (
	// LossAtExpiry: the lease ends at its own validity (it was not renewed
	// in time); a write after it is an overrun.
	LossAtExpiry Loss = iota + 1
	// LossAtFault: the server forgets the lease when the fault fires (a
	// restart without persistence); where the lock keeps it anyway (a
	// quorum, a database) the lease survives.
	LossAtFault
	// LossResurrect: a renewal that reaches the server after the lease
	// expired must fail; one that succeeds brought the lease back.
	LossResurrect
	// LossSessionEnded: the fault ends the session every lease of the run
	// lives in (the zk lock keeps one session per process, as Curator's
	// one client), before the fault is recorded: a lease held then is
	// gone, and a write after it overran unless its holder was told.
	LossSessionEnded
)

// Case is one row of the matrix: a way renewal fails that users of the
// libraries reported, and the run that reproduces it.
type Case struct {
	// Name is what --cases takes.
	Name string
	// Title is the row's one-line description.
	Title string
	// Reproduces names the public reports the case comes from.
	Reproduces string
	// Advice is what a user should do about a failing cell.
	Advice string
	// NotMeasured, when set, says why the case has no run yet: its cells
	// read "not measured", never a pass.
	NotMeasured string
	// NotApplicable, when set, says why no lock on main can show the
	// hazard: its cells read "n/a".
	NotApplicable string
	// Loss is when the lease is lost, for the classification.
	Loss Loss
	// Faults are the fault firings of one run; each is a trial (see
	// trials). Zero: every lease lost on its own is a trial (a holder's
	// own stall).
	Faults int
	// recipe builds the run flags of one run on l.
	recipe func(l Lock) plan.Values
	// probe, when set, is one trial of a case that calls the lock
	// directly (no workload run): it has trials, but no runs.
	probe probeFunc
	// Words name the outcomes where the case's own words say them better
	// (a probe's correct answer is not a holder being told).
	Words map[Outcome]string
	// SessionNA, when set, says why the case has no analogue on a lock
	// whose lease is a session (zk); otherwise session is the analogue.
	SessionNA string
	// session is the case as a session shows the hazard (zk), when it
	// has an analogue.
	session *sessionForm
	// SelfExtendingNA, when set, says why the case has no form on a
	// self-extending lock (Lock.SelfExtending); otherwise selfExtending is
	// its form there.
	SelfExtendingNA string
	// selfExtending is the case on a self-extending lock, when it has one.
	selfExtending *sessionForm
}

// sessionForm is a case's run on a lock whose lease is a session: its own
// recipe, and when the lease is lost there.
type sessionForm struct {
	advice string
	loss   Loss
	faults int
	recipe func(l Lock) plan.Values
}

// on is c as it runs on l: on a session lock, its session analogue, or
// n/a with SessionNA's reason (a case n/a everywhere stays so).
func (c Case) on(l Lock) Case {
	if c.NotApplicable != "" {
		return c
	}
	if l.SelfExtending {
		return c.onSelfExtending()
	}
	if !l.session() {
		return c
	}
	if c.session == nil {
		c.NotApplicable, c.probe = c.SessionNA, nil
		return c
	}
	c.Loss, c.Faults, c.recipe, c.probe = c.session.loss, c.session.faults, c.session.recipe, nil
	if c.session.advice != "" {
		c.Advice = c.session.advice
	}
	return c
}

// onSelfExtending is c on a self-extending lock: its form there, or n/a
// with SelfExtendingNA's reason.
func (c Case) onSelfExtending() Case {
	if c.selfExtending == nil {
		c.NotApplicable, c.probe = c.SelfExtendingNA, nil
		if c.NotApplicable == "" {
			c.NotApplicable = selfExtendingUnseen
		}
		return c
	}
	c.Loss, c.Faults, c.recipe, c.probe = c.selfExtending.loss, c.selfExtending.faults, c.selfExtending.recipe, nil
	if c.selfExtending.advice != "" {
		c.Advice = c.selfExtending.advice
	}
	return c
}

// word names outcome o in c's cells.
func (c Case) word(o Outcome) string {
	if w, ok := c.Words[o]; ok {
		return w
	}
	return o.String()
}

// Applies says whether c has runs on l, and if not, why.
func (c Case) Applies(l Lock) (ok bool, why string) {
	c = c.on(l)
	switch {
	case l.Absent != "":
		return false, l.Absent
	case l.NoRenewal != "":
		return false, l.NoRenewal
	case c.NotApplicable != "":
		return false, c.NotApplicable
	case c.NotMeasured != "":
		return false, c.NotMeasured
	}
	return true, ""
}

// Flags are the run flags of one run of c on l; nil for a probe, which
// runs no workload (its calls go to the lock from this process).
func (c Case) Flags(l Lock) plan.Values {
	c = c.on(l)
	if c.recipe == nil {
		return nil
	}
	return c.recipe(l)
}

// ms renders a multiple of the TTL as a duration flag value.
func ms(ttl time.Duration, num, den int) string {
	return fmt.Sprintf("%dms", (ttl * time.Duration(num) / time.Duration(den)).Milliseconds())
}

// base are the flags every recipe shares: four workers on four keys, so
// that a lost key is taken by someone, renewal every third of the TTL
// (a session lock renews nothing), and acquisitions retried for a TTL.
func base(l Lock) plan.Values {
	v := plan.Values{"topology": {l.Topology}, "lock": {l.Name}, "ttl": {ms(l.TTL, 1, 1)},
		"keys": {"uniform:4"}, "concurrency": {"4"}, "retry": {"fixed:10ms"}, "warmup": {"0"}}
	if !l.session() {
		v.Set("renew-every", "ttl/3")
	}
	return v
}

// faultTimes are the firings of a fault recipe: the first after a TTL
// (every key held by then), then every spacing, so that holders are back
// inside before the next; the window ends a spacing after the last (a cut
// case ends it at the last heal: everyNode). Three TTLs leave a TTL after
// the longest fault (a cut of two TTLs) for holders to come back, and keep
// the whole matrix short (251 s and 246 s on a shared 2-core machine at
// load 0.9–3.8 with nine locks; etcd's runs at a 1 s lease, NATS's in
// whole seconds, are the longest).
func faultTimes(l Lock, n int) (at []time.Duration, window time.Duration) {
	spacing := 3 * l.TTL
	for i := range n {
		at = append(at, l.TTL+time.Duration(i)*spacing)
	}
	return at, l.TTL + time.Duration(n)*spacing
}

// everyNode is one fault spec per node of l at each firing, so a cut path
// reaches the lease wherever it lives (Redlock's quorum too), each for
// cut.
//
// The window ends when the last cut heals, not a spacing after it: a cut
// case judges only leases held when a cut began, by their own calls
// (atExpiry, resurrected), and the runner drains every critical section
// begun in the window, renewals and write included, with the heal on its
// own timer. What a longer window added was new holders, never judged,
// whose work (up to five TTLs) the drain then waited out.
func everyNode(l Lock, n int, kind string, cut time.Duration) plan.Values {
	v := base(l)
	at, _ := faultTimes(l, n)
	for _, t := range at {
		for node := range l.Nodes {
			v["fault"] = append(v["fault"], fmt.Sprintf("at=%dms %s node=%d for=%dms", t.Milliseconds(), kind, node, cut.Milliseconds()))
		}
	}
	v.Set("hold", workHold(l))
	v.Set("duration", fmt.Sprintf("%dms", (at[len(at)-1]+cut).Milliseconds()))
	return v
}

// workHold is the work time of the fault recipes: several renewals long,
// and spread, so that some holders finish between a renewal and the next
// (the window where only a check before the write would notice).
func workHold(l Lock) string { return "uniform:" + ms(l.TTL, 3, 1) + "," + ms(l.TTL, 5, 1) }

// faultsPerRun is how many firings one run of a fault case makes.
const faultsPerRun = 3

// All returns the cases in row order.
func All() []Case {
	return []Case{
		{
			Name: "starved-renewer", Title: "the renewal goroutine starved by a CPU-bound burst while the holder works",
			Reproduces: "redisson #5697, #5698 (watchdog starved: two holders)",
			Advice: "check the lease right before each write and fence the writes; keep GOMAXPROCS headroom for the " +
				"renewer, and a TTL well above the longest burst",
			SessionNA: "zk has no renewer to starve: the session's pings are the client library's, and a burst " +
				"that starves them past the timeout ends the session as renewal-failing's expire does",
			SelfExtendingNA: "the burst starves the library's extender with the holder, but " + selfExtendingUnseen +
				", and no burst inside one TTL outlasts it",
			Loss: LossAtExpiry,
			recipe: func(l Lock) plan.Values {
				// A renewer goroutine per lease; half the holders' work
				// starts with a burst of two TTLs on every CPU that the
				// scheduler cannot preempt (a window of five TTLs: the
				// whole matrix stays short). Every lease held meanwhile is lost at its
				// validity; after the burst its renewer finds it gone and
				// tells the holder, unless the holder's work ended first.
				v := base(l)
				v.Set("renewer", "goroutine")
				v.Set("burst-prob", "0.5")
				v.Set("burst", "const:"+ms(l.TTL, 2, 1))
				v.Set("hold", "uniform:"+ms(l.TTL, 2, 1)+","+ms(l.TTL, 3, 1))
				v.Set("duration", ms(l.TTL, 5, 1))
				return v
			},
		},
		{
			Name: "process-paused", Title: "the whole holder paused past its TTL (GC, SIGSTOP) after renewing, before its write",
			Reproduces: "redisson #5697 (pause longer than the lease); Kleppmann's GC-pause argument",
			Advice: "no renewal survives a paused process: use a fenced lock (fenced, etcd, pg-lease, nats-kv) and a resource that " +
				"checks the token, or a TTL above the longest pause",
			SessionNA: "the run's pause stalls the holder's goroutine, not the process: the zk client's pings go on " +
				"and keep the session (a real pause past the timeout ends it: renewal-failing's expire)",
			SelfExtendingNA: "the run's pause stalls the holder's goroutine, not the process: the library's extender goes on " +
				"and keeps the lease, as it would for a holder stuck in its own work",
			Loss: LossAtExpiry,
			recipe: func(l Lock) plan.Values {
				v := base(l)
				v.Set("hold", "const:"+ms(l.TTL, 1, 2))
				// Two keys for four workers: a stalled holder's key is taken
				// and written by the next, so the fence has a newer token
				// to reject the stale write by.
				v.Set("keys", "uniform:2")
				v.Set("pause-prob", "0.5")
				v.Set("pause", "const:"+ms(l.TTL, 2, 1))
				v.Set("duration", ms(l.TTL, 8, 1))
				return v
			},
		},
		{
			Name: "release-race", Title: "a renewal in flight while the holder releases",
			Reproduces:      "redis-semaphore PR #206 (refresh racing release)",
			Advice:          "stop the renewer and wait for it before releasing; release and renew by the same token, atomically",
			SessionNA:       "zk renews nothing: no renewal can race the release, which deletes the holder's own node",
			SelfExtendingNA: noRenewCall + "; its release (the context's cancel) stops the extender and waits for it",
			probe:           releaseRace, Words: map[Outcome]string{Caught: "deleted", Overran: "resurrected"},
		},
		{
			Name: "restart-empty", Title: "extension after a master restarted empty (no persistence)",
			Reproduces: "redsync PR #147, #149 (extend after a node restart)",
			Advice: "persistence (AOF fsync always) or a restart delay of a TTL, a quorum (redlock) or a store that keeps " +
				"leases (etcd, PostgreSQL); fencing for the writes between the restart and the next renewal",
			SessionNA: "zk extends nothing, and ZooKeeper restores sessions and nodes from its fsync'd log",
			selfExtending: &sessionForm{loss: LossAtFault, faults: faultsPerRun, recipe: restartUnderOneTTL,
				advice: "the library learns of the restart at its next extension (every half validity): check the lock's " +
					"context right before each write, and fence the writes; persistence or a restart delay of a TTL"},
			Loss: LossAtFault, Faults: faultsPerRun,
			recipe: func(l Lock) plan.Values {
				if l.RestartTTL > 0 {
					l.TTL = l.RestartTTL
				}
				// Master 0 only: the hazard is one server forgetting.
				v := base(l)
				at, window := faultTimes(l, faultsPerRun)
				for _, t := range at {
					v["fault"] = append(v["fault"], fmt.Sprintf("at=%dms restart node=0", t.Milliseconds()))
				}
				v.Set("hold", workHold(l))
				v.Set("duration", fmt.Sprintf("%dms", window.Milliseconds()))
				return v
			},
		},
		{
			Name: "expired-extend", Title: "extending a lease that already expired: must fail, not resurrect it",
			Reproduces: "node-redlock PR #167, #273, #283 (extension timed from the acquisition's start)",
			Advice: "a lock whose extend resurrects an expired key must not be renewed late: renew well inside the TTL, " +
				"and treat a late extension as lost",
			SessionNA: "zk has no extension: ZooKeeper never revives an expired session; its client must open another",
			SelfExtendingNA: "the extensions are the library's, on its own connections: none is the holder's to time late, " +
				"and " + selfExtendingUnseen,
			Loss: LossResurrect, Faults: faultsPerRun,
			// The path is cut for one TTL: every lease expires on the server
			// meanwhile, and the holder's next renewal arrives after.
			recipe: func(l Lock) plan.Values { return everyNode(l, faultsPerRun, l.cut(), l.TTL) },
		},
		{
			Name: "adds-or-resets", Title: "whether extend adds to the remaining time or resets it to the TTL",
			Reproduces:      "redis-py #629 (extend adds instead of resetting)",
			Advice:          "where extend adds, a crashed holder blocks the key for every extension it made: reset instead",
			SessionNA:       "zk has no TTL to extend: the session timeout is fixed when the session is established",
			SelfExtendingNA: noRenewCall,
			probe:           addsOrResets, Words: map[Outcome]string{Caught: "resets", Overran: "adds"},
		},
		{
			Name: "renew-after-unlock", Title: "a renewal after unlock must not recreate the key",
			Reproduces:      "redisson #7272 (renewal going on after unlock)",
			Advice:          "cancel the renewer before unlock; a renew script must check the token, never SET",
			SessionNA:       "zk renews nothing: no renewal runs after unlock, and nothing recreates the deleted node",
			SelfExtendingNA: noRenewCall,
			probe:           renewAfterUnlock, Words: map[Outcome]string{Caught: "refused", Overran: "recreated"},
		},
		{
			Name: "waiter-expired", Title: "a waiter whose own session or lease expired while it waited",
			Reproduces: "etcd #19597, PR #22387 (Lock returns after its session expired)",
			Advice:     "check the session is alive after a blocking lock returns (etcd: session.Done())",
			NotApplicable: "every lock here acquires in one attempt and retries: a waiter holds no session or lease " +
				"while it waits (zk with a wait, and a blocking etcd mutex, would; neither is a run flag)",
		},
		{
			Name: "renewal-failing", Title: "renewal failing while the holder works (the path cut for two TTLs)",
			Reproduces: "redisson #4698, PR #7254 (tell me when renewal fails)",
			Advice: "stop work when the lease's validity passes without a renewal, check it right before each write, " +
				"and fence the writes; a renewal interval of TTL/3 leaves two tries",
			SelfExtendingNA: "a cut fails the library's extensions, but " + selfExtendingUnseen +
				", which no cut can shorten: nothing would be exposed",
			Loss: LossAtExpiry, Faults: faultsPerRun,
			recipe: func(l Lock) plan.Values { return everyNode(l, faultsPerRun, l.cut(), 2*l.TTL) },
			session: &sessionForm{loss: LossSessionEnded, faults: faultsPerRun, recipe: expireHolders,
				advice: "watch the session (Curator's ConnectionStateListener: SUSPENDED means stop, LOST means the " +
					"lock is gone) and check it right before each write, and fence the writes by the node's czxid"},
		},
	}
}

// restartUnderOneTTL is restart-empty on a self-extending lock: master 0
// restarts empty three times a run while holders work, each for under one
// TTL (the history sees no extension, so a lease is judged by one TTL from
// its acquisition). The library extends every half validity; the question
// is whether it ends the lease (cancels its context) before another holder
// is granted the key on the empty server and the first holder writes.
func restartUnderOneTTL(l Lock) plan.Values {
	v := base(l)
	at, window := faultTimes(l, faultsPerRun)
	for _, t := range at {
		v["fault"] = append(v["fault"], fmt.Sprintf("at=%dms restart node=0", t.Milliseconds()))
	}
	v.Set("hold", "uniform:"+ms(l.TTL, 1, 4)+","+ms(l.TTL, 9, 10))
	v.Set("duration", fmt.Sprintf("%dms", window.Milliseconds()))
	return v
}

// expireHolders is renewal-failing on a session lock (zk): the ensemble
// ends a holder's session while it works, three times a run, as it does
// to a holder whose pings stopped (a pause, a cut path). The work is
// shorter than the session timeout, since the history bounds a zk lease
// by the timeout from its acquisition (nothing renews it): a write after
// that is late by the lease model whatever the ensemble did.
func expireHolders(l Lock) plan.Values {
	v := base(l)
	at, window := faultTimes(l, faultsPerRun)
	for _, t := range at {
		v["fault"] = append(v["fault"], fmt.Sprintf("at=%dms expire holder", t.Milliseconds()))
	}
	v.Set("hold", "uniform:"+ms(l.TTL, 1, 4)+","+ms(l.TTL, 1, 2))
	v.Set("duration", fmt.Sprintf("%dms", window.Milliseconds()))
	return v
}
