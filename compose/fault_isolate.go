package compose

import (
	"context"
	"fmt"
	"strings"
)

// FaultIsolate cuts a node off from its peers (replication, quorum) until
// for= ends, while its clients still reach it: a leader that can no longer
// reach its followers, which its clients do not see.
const FaultIsolate FaultKind = "isolate"

// isolateFault cuts the target's links to the other servers through the
// proxies on them (UpOptions.PeerProxy), on kinds whose local servers'
// peer links can run through one (KindInfo.PeerProxy).
type isolateFault struct{ faultBase }

func (isolateFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultIsolate, Form: "isolate TARGET for=DURATION", For: forNeeded}
}

// peerCutter is the backend state of a topology whose servers' peer links
// run through proxies lockbench controls.
type peerCutter interface {
	// peerCuts reports whether the proxies were started.
	peerCuts() bool
	// isolate cuts n off from its peers and returns the undo.
	isolate(ctx context.Context, t *Topology, n *Node) (func() error, error)
}

// fits: local servers of a kind whose peer links can run through proxies.
func (isolateFault) fits(k KindInfo, provider string) string {
	switch {
	case !k.PeerProxy:
		return fmt.Sprintf("isolate cuts a node's links to its peers through proxies on them, which %s's servers do not run through (isolate is on %s)",
			k.Kind, strings.Join(kindsWithPeerProxy(), ", "))
	case provider != ProviderLocal:
		return notTaken(FaultIsolate, k, provider)
	}
	return ""
}

func (isolateFault) arm(o *UpOptions) { o.PeerProxy = true }

func (isolateFault) misfit(t *Topology, n *Node) string {
	if pc, ok := t.backendState.(peerCutter); !ok || !pc.peerCuts() {
		return fmt.Sprintf("%s needs the servers started with proxies on their peer links (UpOptions.PeerProxy)", FaultIsolate)
	}
	return ""
}

func (isolateFault) apply(ctx context.Context, t *Topology, _ FaultSpec, n *Node) (func() error, error) {
	return t.backendState.(peerCutter).isolate(ctx, t, n)
}

func (isolateFault) effect(FaultSpec) string {
	return "a server is cut off from its peers while its clients still reach it"
}

// kindsWithPeerProxy lists the examples of the kinds whose peer links can
// run through proxies.
func kindsWithPeerProxy() []string {
	var out []string
	for _, sh := range shapes() {
		if info := sh.Info(); info.PeerProxy {
			out = append(out, info.Example)
		}
	}
	return out
}
