// Package compose brings up the topologies a run measures (local server
// processes, docker containers or external servers) and the fault handles
// on them.
//
// # Kinds of topology
//
// Each kind of topology (single, redlock:N, replicated, cluster:M[,R],
// etcd:N, postgres) is one type implementing Shape, in a file of its own
// (kind_single.go, kind_redlock.go, kind_replicated.go, kind_cluster.go,
// kind_etcd.go, kind_postgres.go), registered by one line in shapes (kind.go). Everything
// lockbench knows of a kind is asked of its Shape, never by naming the kind
// elsewhere:
//
//   - ParseSpec and Spec.String: its --topology syntax (Shape.Parse,
//     Shape.Format, KindInfo.Syntax for help);
//   - the locks that run on it and its default (KindInfo.Locks, the first),
//     and why another does not (KindInfo.LockNotes): plan's --lock check;
//   - where its servers come from (KindInfo.Providers) and which run flag
//     names external ones (KindInfo.URLFlag, Shape.URLs for how many);
//   - the kind-scoped run flags it takes (KindInfo.RunFlags): plan's flag
//     table marks a flag ByKind, and the flag then applies only to the kinds
//     listing it, so help, the README and refusals follow;
//   - its fault targets (KindInfo.Targets), the faults it takes from each
//     provider (KindInfo.Faults), its data nodes (Shape.DataNodes) and any
//     rule of its own (an optional fitFault): one rule, FitFault, used by
//     plan before anything starts and by Topology.CheckFault once the
//     servers are up (which adds only what needs them: a node index past
//     the nodes there are, a missing proxy or clock shim);
//   - its canonical fault for lock-cost --with-fault, as a typed FaultSpec
//     (Shape.CanonicalFault);
//   - its backend (KindInfo.Backend), which picks how plan arms the lock
//     and reads server cost, and how it comes up (Shape.up).
//
// # Adding a kind
//
//  1. Write kind_NAME.go: the Kind constant, a type implementing Shape
//     (Info, Parse, Format, DataNodes, Replicas, URLs, CanonicalFault, up)
//     and whatever bring-up it needs (a Topology method it calls from up).
//  2. Add one line to shapes in kind.go.
//  3. If it runs a new backend, add its arm function to plan's armers; if
//     it takes run flags of its own, add them to plan's flag table with
//     Scope{ByKind: true} and list them in KindInfo.RunFlags.
//
// The test that walks plan's flag table then checks every flag against the
// new kind, and the README's flag tables are regenerated from help.
package compose
