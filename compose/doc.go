// Package compose brings up the topologies a run measures (local server
// processes, docker containers or external servers) and the fault handles
// on them.
//
// # Backends, kinds, fault kinds and locks: four registries
//
// A backend is a server program (redis-server, etcd, postgres); a kind is a
// shape of topology of one backend (single, redlock:N, replicated,
// cluster:M[,R] are Redis's; etcd:N; postgres); a lock speaks one backend.
// Each is registered once, and shared code asks the registries, never a
// name:
//
//   - backends: one type implementing Backend in backend_NAME.go
//     (backend_redis.go, backend_etcd.go, backend_postgres.go), one line in
//     backends (backends.go). It owns its URL flag and how a value is
//     checked (BackendInfo.URLFlag, Backend.CheckURL: plan's URL checks,
//     every kind's KindInfo.URLFlag), its URL schemes (BackendInfo.Schemes:
//     plan picks the backend of a --resource URL by them), the fault targets only its
//     topologies have and how they resolve (BackendInfo.Targets: etcd's
//     leader, PostgreSQL's holder), and what it keeps on each node (a
//     nodePayload: the local process the process faults act on, whether its
//     server is down), so the faults ask the node's payload and never the
//     backend's fields; a server program other than redis-server runs
//     through Server with a serverProgram (etcd's members);
//   - kinds: one type implementing Shape in kind_NAME.go, one line in
//     shapes (backends.go);
//   - fault kinds: one type implementing Fault in fault_NAME.go
//     (fault_kill.go, fault_clock_jump.go; fault_terminate_pg.go and
//     fault_expire_zk.go are their backend's too), one line in faults
//     (faults.go). It owns its constant, its --fault form, the targets it
//     takes, which kinds and providers it fits and why not in one line
//     (Fault.fits, from what the kind declares of itself: its targets, its
//     backend, KindInfo.ClockShim), what it needs the servers started with
//     (a proxy, the clock shim: UpOptions.ArmFaults), what a live node must
//     have, its apply and undo, when it is undone, and what the schedule
//     records of it (FaultInfo.Promotes). KindInfo.Faults is derived from
//     it; a kind, a recipe or a plan that picks a fault writes it as
//     --fault reads it (canonical). TestNoSharedFileNamesAFault (bench/plan)
//     fails a shared file that names a fault kind's constant;
//   - locks: one Descriptor each in lockimpl's registry (lockimpl/locks.go):
//     the backend it speaks, lease, renewal, fencing, quorum, pipelining,
//     the run flags it takes, the grain its server counts a TTL in
//     (TTLGrain, LocalMinTTL). A kind lists, of its backend's locks, those
//     that run on it (KindInfo.Locks); TestEveryKindIsWhole holds each to
//     the lock registry.
//
// # Kinds of topology
//
// Each kind of topology is one type implementing Shape, in a file of its
// own (kind_single.go, kind_redlock.go, kind_replicated.go,
// kind_cluster.go, kind_etcd.go, kind_postgres.go), registered by one line
// in shapes (backends.go). Everything lockbench knows of a kind is asked of
// its Shape, never by naming the kind elsewhere:
//
//   - ParseSpec and Spec.String: its --topology syntax (Shape.Parse,
//     Shape.Format, KindInfo.Syntax for help);
//   - the locks that run on it and its default (KindInfo.Locks, the first),
//     and why another does not (KindInfo.LockNotes): plan's --lock check;
//   - where its servers come from (KindInfo.Providers) and, from its
//     backend, which run flag names external ones (KindInfo.URLFlag;
//     Shape.URLs for how many);
//   - the kind-scoped run flags it takes (KindInfo.RunFlags): plan's flag
//     table marks a flag ByKind, and the flag then applies only to the kinds
//     listing it, so help, the README and refusals follow;
//   - its fault targets (KindInfo.Targets), the faults it takes from each
//     provider (KindInfo.Faults, as each fault kind says), its data nodes
//     (Shape.DataNodes) and any rule of its own (an optional fitFault): one rule, FitFault, used by
//     plan before anything starts and by Topology.CheckFault once the
//     servers are up (which adds only what needs them: a node index past
//     the nodes there are, a missing proxy or clock shim);
//   - its canonical fault for lock-cost --with-fault, as a FaultSpec
//     written as --fault reads it (Shape.CanonicalFault) and in words for the flag's help
//     (KindInfo.CanonicalFaultText). It is the kind's, not the lock's: one
//     lock (redlock) gets a pause on single and a master killed on
//     redlock:N, and its targets (master, leader, holder) are the topology's;
//   - its backend (KindInfo.Backend, Spec.Backend), which picks how plan
//     arms the lock, checks a plan and keeps a --resource there
//     (planBackends, bench/plan/backends.go) and how it comes up (Shape.up).
//
// # Adding a kind of an existing backend
//
//  1. Write kind_NAME.go: the Kind constant, a type implementing Shape
//     (Info, Parse, Format, DataNodes, Replicas, URLs, CanonicalFault, up)
//     and whatever bring-up it needs (a Topology method it calls from up).
//  2. Add one line to shapes in backends.go.
//  3. If it takes run flags of its own, add them to plan's flag table with
//     Scope{ByKind: true} and list them in KindInfo.RunFlags.
//
// # Adding a backend
//
// The existing files it touches are its registry lines, one each:
// compose/backends.go (backends, and shapes for its kinds),
// lockimpl/locks.go (lockBackends, and descriptors for its locks) and
// bench/plan/backends.go (planBackends). Everything else is new files:
//
//  1. compose/backend_NAME.go: a type implementing Backend (Info with its
//     name, its URL flag (name, help, README note, one URL per node or
//     one for all; plan builds the run flag from it, scoped to its kinds),
//     schemes, sample URL and own targets; CheckURL, which parses the
//     flag's value; target) and, if its nodes need more than an address
//     and a Server, a nodePayload type; the line in backends.
//  2. Its kinds (above) with KindInfo.Backend naming it, and its bring-up
//     (compose/NAME.go).
//  3. lockimpl: the backend's name constant and its line in lockBackends
//     (its builder's name and its client errors' classifier, which
//     ErrorKind asks; New refuses its locks on Redis by the descriptors),
//     its locks' descriptors, the locks and the classifier in files of
//     their own (lockimpl/NAME.go).
//  4. bench/plan/NAME.go: its arm function (and any checks of a plan its
//     locks need, and an opener if it keeps the protected resource, whose
//     implementation goes in bench/resource/NAME.go), and its line in
//     planBackends.
//
// TestNoSharedFileNamesABackend (bench/plan) fails a shared file that
// names a backend by its constants or names, outside the backend's own
// files (named after it, its kinds or its locks) and the registry files.
//
// # Adding a fault kind
//
// A new compose/fault_NAME.go: its FaultKind constant and a type
// implementing Fault (embedding faultBase for the defaults), and its line
// in faults (faults.go). FaultHelp, ParseFault and String, FitFault and
// every kind's KindInfo.Faults, CheckFault, Apply and the schedule, plan's
// start-up options and flag scopes (FaultInfo.RunFlags) then follow from
// it. A fault kind that acts through one backend's own means names the
// backend in its file's name too (fault_expire_zk.go).
//
// # Adding a lock
//
// Its code in lockimpl (a file of its own, built by its backend's builder),
// one Descriptor in lockimpl/locks.go, and its name in KindInfo.Locks of the
// kinds it runs on. Flags scoped to locks (plan's flag table) read the
// descriptors, so a lock that takes such a flag lists it in RunFlags.
//
// The tests that walk the registries (TestEveryBackendIsWhole,
// TestEveryKindIsWhole, TestEveryLockIsWhole, TestEveryBackendIsArmed,
// TestLockScopedFlagsFollowTheRegistry, TestEveryBackendDeclaresItsURLFlag,
// TestEveryLockBackendIsRegistered) then check the new entry against
// the others, and the README's flag tables are regenerated from help.
package compose
