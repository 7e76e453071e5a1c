package swarm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
)

// ErrNoSwarm is wrapped by the error of an engine that cannot run Swarm
// services: no Swarm mode at all (Podman, say), an engine too old for
// replicated jobs, or a node that is not a manager.
var ErrNoSwarm = errors.New("the Docker engine cannot run Swarm jobs")

// minJobsAPI is the first Engine API with replicated jobs (Docker 20.10).
const minJobsAPI = "1.41"

// gwbridge is the bridge network Swarm creates on a node the first time a
// task joins an overlay network; `docker swarm leave` does not remove it.
const gwbridge = "docker_gwbridge"

// Membership is this engine's part in a Swarm for the length of a job:
// joined by lockbench (initialised here, to be left again) or found active.
type Membership struct {
	cli *client.Client
	// initialised: Swarm was inactive and lockbench initialised it.
	initialised bool
	// gwbridgeBefore: docker_gwbridge existed before lockbench initialised Swarm.
	gwbridgeBefore bool
}

// noSwarm is ErrNoSwarm with what the engine said and what to do, on one line.
func noSwarm(engine, why string) error {
	return fmt.Errorf("%w: %s (%s); lockbench swarm job needs Docker Engine 20.10 or later as a Swarm manager, or an inactive Swarm lockbench may initialise; on Kubernetes use lockbench k8s job", ErrNoSwarm, why, engine)
}

// Join makes sure the engine is a Swarm manager: an active manager is used
// as it is; an inactive engine is made a single-node Swarm, listening on
// loopback only, which leave undoes. Anything else is ErrNoSwarm.
func Join(ctx context.Context, cli *client.Client) (*Membership, error) {
	engine := cli.DaemonHost()
	info, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return nil, fmt.Errorf("docker info (%s): %w", engine, err)
	}
	// The version negotiated with the engine on that first request.
	initialise, err := needsInit(info.Info.Swarm, cli.ClientVersion(), engine)
	if err != nil {
		return nil, err
	}
	if !initialise {
		return &Membership{cli: cli}, nil
	}
	m := &Membership{cli: cli, initialised: true}
	m.gwbridgeBefore, err = networkExists(ctx, cli, gwbridge)
	if err != nil {
		return nil, err
	}
	if _, err := cli.SwarmInit(ctx, client.SwarmInitOptions{ListenAddr: "127.0.0.1:2377", AdvertiseAddr: "127.0.0.1"}); err != nil {
		if cerrdefs.IsNotFound(err) || cerrdefs.IsNotImplemented(err) {
			return nil, noSwarm(engine, "swarm init: "+oneLine(err))
		}
		return nil, fmt.Errorf("docker swarm init (%s): %w", engine, err)
	}
	return m, nil
}

// needsInit reads the engine's Swarm state: an active manager is used, an
// inactive engine is to be initialised, anything else cannot run the job.
func needsInit(st swarm.Info, apiVersion, engine string) (bool, error) {
	if versionLess(apiVersion, minJobsAPI) {
		return false, noSwarm(engine, "Engine API "+apiVersion+" has no replicated jobs (1.41 has)")
	}
	switch st.LocalNodeState {
	case swarm.LocalNodeStateActive:
		if !st.ControlAvailable {
			return false, noSwarm(engine, "this engine is a Swarm worker; services are created on a manager")
		}
		return false, nil
	case swarm.LocalNodeStateInactive:
		return true, nil
	case "":
		return false, noSwarm(engine, "the engine reports no Swarm state: it has no Swarm mode")
	}
	msg := "Swarm is " + string(st.LocalNodeState)
	if st.Error != "" {
		msg += ": " + st.Error
	}
	return false, noSwarm(engine, msg)
}

// Initialised reports whether Join initialised Swarm (and Leave leaves it).
func (m *Membership) Initialised() bool { return m.initialised }

// Leave undoes Join: when lockbench initialised Swarm, the engine leaves it
// (its ingress network goes with it) and the docker_gwbridge network it made
// is removed. A Swarm that was active is left as it was.
func (m *Membership) Leave(ctx context.Context) error {
	if !m.initialised {
		return nil
	}
	if _, err := m.cli.SwarmLeave(ctx, client.SwarmLeaveOptions{Force: true}); err != nil {
		return fmt.Errorf("docker swarm leave: %w", err)
	}
	if m.gwbridgeBefore {
		return nil
	}
	// The network goes once the last task's container has let go of it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		exists, err := networkExists(ctx, m.cli, gwbridge)
		if err != nil || !exists {
			return err
		}
		_, err = m.cli.NetworkRemove(ctx, gwbridge, client.NetworkRemoveOptions{})
		if err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove %s, which swarm init made: %w", gwbridge, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove %s: %w", gwbridge, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func networkExists(ctx context.Context, cli *client.Client, name string) (bool, error) {
	nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("name", name)})
	if err != nil {
		return false, fmt.Errorf("list networks: %w", err)
	}
	for _, n := range nets.Items {
		if n.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// versionLess compares Engine API versions (1.41 < 1.5 is false: each part is a number).
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			fmt.Sscan(pa[i], &x)
		}
		if i < len(pb) {
			fmt.Sscan(pb[i], &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
