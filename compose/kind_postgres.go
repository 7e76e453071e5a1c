package compose

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindPostgres is one PostgreSQL server (compose/postgres.go): advisory
// locks, a lease table and optimistic concurrency, and the protected
// resource in the same database.
const KindPostgres Kind = "postgres"

// RolePostgres is the server of a postgres topology.
const RolePostgres = "postgres"

// postgresShape is one PostgreSQL server, local (initdb into a temporary
// directory) or external (--postgres URL).
type postgresShape struct{}

// pgLocks are the locks that run on PostgreSQL, the default first: every
// lock the registry has on that backend.
func pgLocks() []string { return lockimpl.LocksOn(lockimpl.BackendPostgres) }

// Info describes postgres.
func (postgresShape) Info() KindInfo {
	return KindInfo{
		Kind: KindPostgres, Syntax: "postgres", Example: "postgres", Sample: "postgres", CanonicalFaultText: "a lock holder's session terminated", Backend: lockimpl.BackendPostgres, Program: "postgres",
		Locks:     pgLocks(),
		Providers: []string{ProviderLocal, ProviderExternal},
		StartUp:   1500 * time.Millisecond,
		RunFlags:  []string{"postgres", "pool-size"},
		Targets:   []FaultTarget{TargetNode, TargetHolder},
		ClockNote: "the clock shim is for redis-server; PostgreSQL's clock is not moved",
	}
}

// Parse reads postgres, which takes no count.
func (postgresShape) Parse(in, _ string, hasArg bool) (Spec, error) {
	if hasArg {
		return Spec{}, fmt.Errorf("topology %q: postgres takes no count; want postgres", in)
	}
	return Spec{Kind: KindPostgres, Masters: 1}, nil
}

// Format is "postgres".
func (postgresShape) Format(Spec) string { return string(KindPostgres) }

// DataNodes is the one server.
func (postgresShape) DataNodes(Spec) int { return 1 }

// Replicas: none that WAIT could count.
func (postgresShape) Replicas(Spec) int { return 0 }

// URLs: one server.
func (postgresShape) URLs(Spec) int { return 1 }

// CanonicalFault ends one lock holder's session in the middle of the
// window: the advisory locks' analogue of a lease expiring during work.
func (postgresShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical((window / 2).Round(time.Millisecond), "terminate holder"), window
}

func (postgresShape) up(ctx context.Context, t *Topology, provider string) error {
	if provider == ProviderExternal {
		return t.upPostgresExternal()
	}
	return t.upPostgres(ctx)
}
