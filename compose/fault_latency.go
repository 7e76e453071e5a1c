package compose

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// FaultLatency delays every reply from the node through its proxy.
const FaultLatency FaultKind = "latency"

// maxLatency bounds latency's delay.
const maxLatency = time.Minute

// latencyFault delays the replies of the target through the proxy in front
// of it, on every kind and provider (a container's too: the proxy is in
// front of its published port).
type latencyFault struct{ faultBase }

func (latencyFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultLatency, Form: "latency TARGET DELAY for=DURATION", For: forNeeded, Amount: "DELAY"}
}

func (latencyFault) arm(o *UpOptions) { o.Proxy = true }

func (latencyFault) misfit(_ *Topology, n *Node) string {
	if n.proxy == nil {
		return fmt.Sprintf("%s needs a proxy in front of %s (UpOptions.Proxy)", FaultLatency, n.Name)
	}
	return ""
}

func (latencyFault) apply(_ context.Context, _ *Topology, f FaultSpec, n *Node) (func() error, error) {
	return n.proxy.addLatency(f.Latency)
}

func (latencyFault) parseAmount(f *FaultSpec, word string) string {
	d, err := time.ParseDuration(word)
	if err != nil || d < time.Millisecond || d > maxLatency || d%time.Millisecond != 0 {
		return fmt.Sprintf("latency %q must be whole milliseconds from 1ms to %s", word, maxLatency)
	}
	f.Latency = d
	return ""
}

func (latencyFault) formatAmount(f FaultSpec) string { return f.Latency.String() }

// drawAmount: 50ms to 1s in steps of 50ms, from a slow link to one slower
// than most lock clients' timeouts.
func (latencyFault) drawAmount(f *FaultSpec, r *rand.Rand) {
	f.Latency = time.Duration(1+r.IntN(20)) * 50 * time.Millisecond
}
