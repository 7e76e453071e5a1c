package compose

import (
	"context"

	"github.com/lockbench/lockbench/lockimpl"
)

// FaultExpire has the ZooKeeper ensemble end a lock holder's session
// (Curator's KillSession): its ephemeral nodes go, the next waiter is
// granted, and the holder learns of it only on its next request.
const FaultExpire FaultKind = "expire"

// expireFault ends a ZooKeeper lock holder's session through the client
// protocol, on local or external members (the file is ZooKeeper's as well
// as the fault's; the mechanism is in zk_expire.go).
type expireFault struct{ faultBase }

func (expireFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultExpire, Form: "expire holder", Targets: []FaultTarget{TargetHolder},
		TargetRule: "expire ends a lock holder's session: its target is holder",
		For:        forNone, NoFor: "the session is gone, the client starts a new one"}
}

// fits: ZooKeeper, whose sessions the ensemble expires.
func (expireFault) fits(k KindInfo, provider string) string {
	return backendFits(FaultExpire, k, provider, lockimpl.BackendZookeeper)
}

func (expireFault) apply(ctx context.Context, t *Topology, _ FaultSpec, _ *Node) (func() error, error) {
	_, err := t.expireZkHolder(ctx)
	return nil, err
}
