package compose

import (
	"context"
	"fmt"
)

// FaultPartition cuts the link between the clients and the node until
// for= ends: its proxy closes every connection and refuses new ones, so
// clients fail at once rather than wait for a timeout as they would if
// packets were silently dropped. A container is cut by its network
// instead, and loses its links to the other nodes with it.
const FaultPartition FaultKind = "partition"

// partitionFault cuts the target off through its proxy, or a container by
// docker network disconnect; on every kind and provider.
type partitionFault struct{ faultBase }

func (partitionFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultPartition, Form: "partition TARGET for=DURATION", For: forNeeded}
}

// arm: a container is partitioned by its network, not by a proxy.
func (partitionFault) arm(o *UpOptions) { o.Proxy = o.Proxy || o.Provider != ProviderDocker }

func (partitionFault) misfit(_ *Topology, n *Node) string {
	if n.proxy == nil && n.ctr == nil {
		return fmt.Sprintf("%s needs a proxy in front of %s (UpOptions.Proxy)", FaultPartition, n.Name)
	}
	return ""
}

func (partitionFault) apply(ctx context.Context, t *Topology, _ FaultSpec, n *Node) (func() error, error) {
	if n.ctr != nil && t.docker != nil {
		return t.docker.disconnect(ctx, n.ctr)
	}
	return n.proxy.partition()
}
