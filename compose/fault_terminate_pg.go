package compose

import (
	"context"

	"github.com/lockbench/lockbench/lockimpl"
)

// FaultTerminate ends a lock holder's PostgreSQL session
// (pg_terminate_backend): the server stays up, the holder's session and
// every lock it held are gone, and the holder may not know.
const FaultTerminate FaultKind = "terminate"

// terminateFault ends a PostgreSQL lock holder's backend, on a local or an
// external server (the file is PostgreSQL's as well as the fault's).
type terminateFault struct{ faultBase }

func (terminateFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultTerminate, Form: "terminate holder", Targets: []FaultTarget{TargetHolder},
		TargetRule: "terminate ends a lock holder's session: its target is holder",
		For:        forNone, NoFor: "the session is gone, the pool opens a new one"}
}

// fits: PostgreSQL, whose sessions pg_terminate_backend ends.
func (terminateFault) fits(k KindInfo, provider string) string {
	return backendFits(FaultTerminate, k, provider, lockimpl.BackendPostgres)
}

func (terminateFault) apply(ctx context.Context, t *Topology, _ FaultSpec, _ *Node) (func() error, error) {
	_, err := t.terminateHolder(ctx)
	return nil, err
}

func (terminateFault) effect(FaultSpec) string { return "a lock holder's session is ended" }
