package compose

import (
	"context"
	"fmt"
	"time"
)

// nodeProcess is the server process behind a node that lockbench runs, on
// this host or in a container: what the process faults act on.
type nodeProcess interface {
	// kill sends SIGKILL (docker kill); the process stays down.
	kill(ctx context.Context) error
	// pause stops the process (SIGSTOP, docker pause) and returns what
	// continues it.
	pause(ctx context.Context) (resume func() error, err error)
	// restart kills the process unless it is down already and returns
	// what starts it again on the same port.
	restart(ctx context.Context) (start func() error, err error)
}

// process is the process behind n that a process fault acts on: its
// container, its backend's local process, or its Server; nil for an
// external server.
func (t *Topology) process(n *Node) nodeProcess {
	if n.ctr != nil {
		if t.docker == nil {
			return nil
		}
		return containerProcess{d: t.docker, c: n.ctr, addr: n.Addr}
	}
	if n.payload != nil {
		if p := n.payload.process(); p != nil {
			return p
		}
	}
	if n.Server != nil {
		return localProcess{p: n.Server, start: n.Server.Start, startTimeout: 15 * time.Second}
	}
	return nil
}

// processMisfit says why n has no process for a fault of kind k, or "".
func (t *Topology) processMisfit(k FaultKind, n *Node) string {
	if t.process(n) == nil {
		return fmt.Sprintf("%s needs a local server, and %s (%s) is external", k, n.Name, n.Addr)
	}
	return ""
}

// osProcess is a server process lockbench started on this host (a Server,
// a PgServer with its backends, a ZooKeeper JVM, a nats-server).
type osProcess interface {
	Kill() error
	Pause() error
	Resume() error
	PID() int
}

// localProcess is a process on this host with how its backend starts it
// again and how long that may take.
type localProcess struct {
	p            osProcess
	start        func(context.Context) error
	startTimeout time.Duration
}

func (l localProcess) kill(context.Context) error { return l.p.Kill() }

func (l localProcess) pause(context.Context) (func() error, error) {
	if err := l.p.Pause(); err != nil {
		return nil, err
	}
	return l.p.Resume, nil
}

// restart kills the process now and returns the start that brings it back
// on the same port, which the schedule runs after the restart delay. A
// stopped schedule cuts the delay short but still starts it, so that
// stopping never leaves the topology with a node missing.
func (l localProcess) restart(ctx context.Context) (func() error, error) {
	if l.p.PID() != 0 {
		if err := l.p.Kill(); err != nil {
			return nil, err
		}
	}
	return func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.startTimeout)
		defer cancel()
		return l.start(sctx)
	}, nil
}

// processFits is the fit of the faults that act on a node's process: every
// kind from a provider that runs its servers, never external ones.
func processFits(k FaultKind, info KindInfo, provider string) string {
	if provider == ProviderExternal {
		return notTaken(k, info, provider)
	}
	return ""
}
