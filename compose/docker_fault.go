package compose

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moby/moby/client"
)

// Faults on the docker provider's containers act on the container itself,
// through the engine: kill is docker kill (SIGKILL), restart a docker kill
// followed by docker start after the restart delay (the container keeps its
// file system, so aof-always data survives and nothing else does), pause is
// docker pause (the cgroup freezer: the server gets no CPU at all, its
// sockets stay open), and partition is docker network disconnect of the
// container from the run's network, undone by docker network connect: the
// node loses every link at once, to the clients (its published port goes
// with the network's endpoint) and to the other nodes (a replica to its
// primary, the sentinels).

// containerProcess is a node's container, which the process faults act
// on through the engine.
type containerProcess struct {
	d    *dockerRun
	c    *dockerNode
	addr string
}

func (p containerProcess) kill(ctx context.Context) error { return p.d.kill(ctx, p.c) }

func (p containerProcess) pause(ctx context.Context) (func() error, error) {
	d, c := p.d, p.c
	if _, err := d.cli.ContainerPause(ctx, c.id, client.ContainerPauseOptions{}); err != nil {
		return nil, fmt.Errorf("docker pause %s: %w", c.name, err)
	}
	return func() error {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if _, err := d.cli.ContainerUnpause(uctx, c.id, client.ContainerUnpauseOptions{}); err != nil {
			return fmt.Errorf("docker unpause %s: %w", c.name, err)
		}
		return nil
	}, nil
}

func (p containerProcess) restart(ctx context.Context) (func() error, error) {
	d, c := p.d, p.c
	if !d.fixedPorts {
		return nil, errors.New("restart needs a local Docker engine: on a remote one the container may come back on another host port")
	}
	if !c.isKilled() {
		if err := d.kill(ctx, c); err != nil {
			return nil, err
		}
	}
	return func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := d.cli.ContainerStart(sctx, c.id, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("docker start %s: %w", c.name, err)
		}
		c.setKilled(false)
		if err := waitPing(sctx, p.addr, 20*time.Second); err != nil {
			return fmt.Errorf("%s after docker start: %w", c.name, err)
		}
		return nil
	}, nil
}

// disconnect takes the container off the run's network until the undo
// connects it again.
func (d *dockerRun) disconnect(ctx context.Context, c *dockerNode) (func() error, error) {
	if _, err := d.cli.NetworkDisconnect(ctx, d.netID, client.NetworkDisconnectOptions{Container: c.id, Force: true}); err != nil {
		return nil, fmt.Errorf("docker network disconnect %s %s: %w", d.net, c.name, err)
	}
	return func() error {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if _, err := d.cli.NetworkConnect(uctx, d.netID, client.NetworkConnectOptions{Container: c.id}); err != nil {
			return fmt.Errorf("docker network connect %s %s: %w", d.net, c.name, err)
		}
		return nil
	}, nil
}

// kill is docker kill: SIGKILL, the container stays stopped.
func (d *dockerRun) kill(ctx context.Context, c *dockerNode) error {
	if _, err := d.cli.ContainerKill(ctx, c.id, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		return fmt.Errorf("docker kill %s: %w", c.name, err)
	}
	c.setKilled(true)
	return nil
}
