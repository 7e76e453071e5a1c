package compose

import (
	"context"
	"fmt"
)

// Backend is everything compose knows of one server program its kinds run
// (redis-server, etcd, postgres), apart from the kinds' shapes: the flag
// naming its external servers and how a value of it is checked, the fault
// targets only its topologies have and how they resolve, and what it keeps
// on each node (nodePayload). Each backend is one type in backend_NAME.go
// and one line in backends (backends.go); shared code (apply.go, fault
// checks, plan's URL checks) asks it rather than naming a backend.
type Backend interface {
	// Info is the backend's static description.
	Info() BackendInfo
	// CheckURL checks one value of the backend's URL flag; the error names
	// the flag first ("--etcd …"), as a refusal line wants it.
	CheckURL(raw string) error
	// target resolves a fault target of its own (BackendInfo.Targets) on a
	// started topology.
	target(ctx context.Context, t *Topology, f FaultSpec) (*Node, error)
}

// BackendInfo is what a Backend declares of itself.
type BackendInfo struct {
	// Name is the backend as the locks and kinds name it
	// (lockimpl.BackendRedis, …).
	Name string
	// URLFlag is the run flag naming its external servers; every kind of
	// the backend takes it.
	URLFlag string
	// URLUsage is the URL flag's one-line help.
	URLUsage string
	// URLDoc adds, in the README's flag table only, what URLUsage cannot say.
	URLDoc string
	// URLPerNode is true when the flag takes one URL per node (repeated);
	// false when one value names every server (a connect string, one
	// database).
	URLPerNode bool
	// Targets are the fault targets only its topologies have (etcd's
	// leader), each with what a topology without it lacks, for a refusal.
	Targets map[FaultTarget]string
	// Schemes are the URL schemes of its servers, the first the usual one
	// (plan picks the backend of a --resource URL by them).
	Schemes []string
	// SampleURL is a value of its URL flag that CheckURL accepts, for help
	// and for the test that walks the registry.
	SampleURL string
}

// nodePayload is what a backend keeps on each of its nodes beyond the
// fields every node has (an etcd member's URL and id, the PostgreSQL
// server), with the node rules that are the backend's own; nil on a node
// whose backend keeps nothing (Redis).
type nodePayload interface {
	// process is the local process of n that the process faults act on
	// when it is not the node's Server; nil when there is none (an
	// external server, or one the Server runs).
	process() nodeProcess
	// down reports whether a server of n lockbench started is not running.
	down() bool
}

// Backends lists every backend, in help order.
func Backends() []Backend { return backends() }

// LookupBackend finds a backend by name.
func LookupBackend(name string) (Backend, bool) {
	for _, b := range backends() {
		if b.Info().Name == name {
			return b, true
		}
	}
	return nil, false
}

// Backend is the backend the spec's kind runs; a kind whose backend is not
// registered gets one that refuses everything.
func (s Spec) Backend() Backend {
	if b, ok := LookupBackend(s.Info().Backend); ok {
		return b
	}
	return unknownBackend{name: s.Info().Backend}
}

// ownTarget reports whether t is a fault target some backend owns (not
// every topology has it), and what a topology without it lacks.
func ownTarget(t FaultTarget) (lacks string, owned bool) {
	for _, b := range backends() {
		if lacks, ok := b.Info().Targets[t]; ok {
			return lacks, true
		}
	}
	return "", false
}

// unknownBackend is the backend of a kind whose backend is not registered.
type unknownBackend struct{ name string }

func (u unknownBackend) Info() BackendInfo { return BackendInfo{Name: u.name} }
func (u unknownBackend) CheckURL(string) error {
	return fmt.Errorf("backend %q is not registered", u.name)
}
func (u unknownBackend) target(context.Context, *Topology, FaultSpec) (*Node, error) {
	return nil, fmt.Errorf("backend %q is not registered", u.name)
}
