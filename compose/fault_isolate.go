package compose

import (
	"context"
	"fmt"
	"slices"
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

// TargetMinority and TargetRing are isolate's targets of several nodes: a
// minority that holds the leader cut off from the majority, and a ring in
// which each node still reaches a majority (itself and its nearest
// neighbours) but no two nodes the same one.
const (
	TargetMinority FaultTarget = "minority"
	TargetRing     FaultTarget = "ring"
)

// groupTarget reports whether t names several nodes, which only isolate
// takes.
func groupTarget(t FaultTarget) bool { return t == TargetMinority || t == TargetRing }

func (isolateFault) Info() FaultInfo {
	return FaultInfo{Kind: FaultIsolate, Form: "isolate TARGET for=DURATION", For: forNeeded, Groups: true}
}

// pairCutter is the backend state of a topology whose peer links can be
// cut pair by pair (minority, ring), not only around one node.
type pairCutter interface {
	cutApart(apart func(i, j int) bool) (func() error, error)
}

// fitSpec: a minority needs three members to be one or more of them, and
// a ring members enough that a neighbour's majority is not everyone's.
func (isolateFault) fitSpec(f FaultSpec, s Spec) string {
	n := s.Shape().DataNodes(s)
	if f.Target == TargetMinority && n > 0 && n < 3 {
		return fmt.Sprintf("isolate minority needs at least 3 members, so that the leader's side is a minority of one or more; %s has %d", s, n)
	}
	if f.Target == TargetRing && n > 0 && n < 4 {
		return fmt.Sprintf("isolate ring needs at least 4 members, so that each keeps a majority of its own; %s has %d", s, n)
	}
	if n == 1 {
		return fmt.Sprintf("isolate cuts a node from its peers, and %s has none; use 3 or more members", s)
	}
	return ""
}

// ringReach is how many neighbours on each side a member of a ring of n
// keeps: the fewest that make it and them a majority.
func ringReach(n int) int { return (n/2)/2 + (n/2)%2 }

// apart says which pairs of the n members a group target cuts: the
// minority holding member lead (the lead and the members after it, a
// minority in all) from the rest, or in a ring the members further apart
// than ringReach.
func apart(t FaultTarget, n, lead int) func(i, j int) bool {
	if t == TargetRing {
		k := ringReach(n)
		return func(i, j int) bool {
			d := (i - j + n) % n
			return min(d, n-d) > k
		}
	}
	size := (n - 1) / 2
	in := func(i int) bool { return (i-lead+n)%n < size }
	return func(i, j int) bool { return in(i) != in(j) }
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

func (isolateFault) apply(ctx context.Context, t *Topology, f FaultSpec, n *Node) (func() error, error) {
	if !groupTarget(f.Target) {
		return t.backendState.(peerCutter).isolate(ctx, t, n)
	}
	pc, ok := t.backendState.(pairCutter)
	if !ok {
		return nil, fmt.Errorf("the peer links of %s are cut around one member only: isolate node=N or leader", t.Spec)
	}
	data := t.DataNodes()
	return pc.cutApart(apart(f.Target, len(data), slices.Index(data, n)))
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
