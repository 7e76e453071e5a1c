package compose

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// zkRequestCounter is the mntr counter lockbench reads as a member's
// commands: the packets it received from clients (every request and ping
// of a session; the quorum's own traffic is not in it). The mntr that
// reads it adds one.
const zkRequestCounter = "zk_packets_received"

// ReadZkStats reads member i's mntr four-letter word (direct, not through
// its proxy: a fault on the lock's path must not hide the reading) for its
// request counter, and a local member's CPU time from /proc. An external
// member's CPU cannot be read from here, and a member whose ensemble does
// not allow mntr cannot be read at all: the error says which, and the
// caller records it.
func (t *Topology) ReadZkStats(ctx context.Context, i int) (ServerStats, error) {
	n := t.DataNodes()[i]
	z := n.zkMemberOf()
	if z == nil {
		return ServerStats{}, fmt.Errorf("%s is not a ZooKeeper member", n.Name)
	}
	if z.member == nil {
		return ServerStats{}, errors.New("an external member's CPU time cannot be read from this host")
	}
	out, err := zkFourLetter(ctx, n.Addr, "mntr")
	if err != nil {
		return ServerStats{}, fmt.Errorf("mntr on %s: %w", n.Addr, err)
	}
	received, err := parseZkMntr(out, zkRequestCounter)
	if err != nil {
		return ServerStats{}, err
	}
	cpu, err := localProcCPU(&z.member.localProc)
	if err != nil {
		return ServerStats{}, err
	}
	return ServerStats{Calls: map[string]int64{"packets_received": received}, CPUSeconds: cpu}, nil
}

// parseZkMntr reads the counter name from mntr's "name<TAB>value" lines. A
// member that refuses mntr (4lw.commands.whitelist) answers with a sentence
// instead, which is the error.
func parseZkMntr(out, name string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok || k != name {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("mntr: %s %q is not a count", name, shorten(v))
		}
		return n, nil
	}
	return 0, fmt.Errorf("mntr: no %s in %q (is mntr in 4lw.commands.whitelist?)", name, shorten(out))
}
