package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// natsVarz is the part of /varz lockbench reads: messages the server
// received from clients (in_client_msgs; routed copies between servers are
// not in it) and, for a server without that counter, from anyone (in_msgs,
// which on a cluster counts routed copies too).
type natsVarz struct {
	InClientMsgs *int64 `json:"in_client_msgs"`
	InMsgs       *int64 `json:"in_msgs"`
}

// ReadNatsStats reads a local server's /varz for the messages its clients
// sent it, and its CPU time from /proc (varz's cpu is a share at this
// instant, not a sum over the window). An external server's monitoring
// port is not known: the error says so, and the caller records it.
func (t *Topology) ReadNatsStats(ctx context.Context, i int) (ServerStats, error) {
	n := t.DataNodes()[i]
	p := n.natsServerOf()
	if p == nil {
		return ServerStats{}, fmt.Errorf("%s is not a NATS server", n.Name)
	}
	if p.server == nil {
		return ServerStats{}, errors.New("an external server's monitoring port and CPU time are not known here")
	}
	body, err := p.server.monitor(ctx, "/varz", 1<<20)
	if err != nil {
		return ServerStats{}, fmt.Errorf("/varz of %s: %w", p.server.Name, err)
	}
	name, msgs, err := parseNatsVarz(body)
	if err != nil {
		return ServerStats{}, fmt.Errorf("/varz of %s: %w", p.server.Name, err)
	}
	cpu, err := localProcCPU(&p.server.localProc)
	if err != nil {
		return ServerStats{}, err
	}
	return ServerStats{Calls: map[string]int64{name: msgs}, CPUSeconds: cpu}, nil
}

// parseNatsVarz returns the client message counter of a /varz answer and
// its name: in_client_msgs where the server has it, in_msgs otherwise.
func parseNatsVarz(body []byte) (name string, msgs int64, err error) {
	var v natsVarz
	if err := json.Unmarshal(body, &v); err != nil {
		return "", 0, fmt.Errorf("not the JSON /varz answers: %w", err)
	}
	switch {
	case v.InClientMsgs != nil && *v.InClientMsgs >= 0:
		return "in_client_msgs", *v.InClientMsgs, nil
	case v.InClientMsgs == nil && v.InMsgs != nil && *v.InMsgs >= 0:
		return "in_msgs", *v.InMsgs, nil
	}
	return "", 0, errors.New("no message counts (in_client_msgs, in_msgs) in it")
}
