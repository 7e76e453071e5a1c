package compose

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results/suggest"
)

// FaultKind names what a fault does to its target.
type FaultKind string

const (
	// FaultKill sends SIGKILL: a crash, nothing flushed, the node stays down.
	FaultKill FaultKind = "kill"
	// FaultRestart kills the node and starts it again on the same port with
	// the topology's persistence, after UpOptions.RestartDelay.
	FaultRestart FaultKind = "restart"
	// FaultPause stops the process with SIGSTOP and continues it after for=.
	FaultPause FaultKind = "pause"
	// FaultLatency delays every reply from the node through its proxy.
	FaultLatency FaultKind = "latency"
	// FaultPartition cuts the link between the clients and the node until
	// for= ends: its proxy closes every connection and refuses new ones, so
	// clients fail at once rather than wait for a timeout as they would if
	// packets were silently dropped.
	FaultPartition FaultKind = "partition"
	// FaultClockJump moves the node's wall clock by a signed amount at once.
	FaultClockJump FaultKind = "clock-jump"
	// FaultClockSpeed makes the node's wall clock run at a factor of real time.
	FaultClockSpeed FaultKind = "clock-speed"
	// FaultLagReplica holds the replication stream on the replica (CLIENT
	// PAUSE WRITE) so writes acknowledged by the primary are not there yet.
	// While it lasts the sentinels cannot promote the replica: their hello
	// PUBLISH counts as a write, blocks, and stalls their PINGs and INFO on
	// that link, so the replica looks down. To lose a write in a failover,
	// end the lag shortly after killing the primary: the replica drops the
	// stream it held when its primary's link breaks, and is promoted once the
	// pause is over.
	FaultLagReplica FaultKind = "lag-replica"
	// FaultTerminate ends a lock holder's PostgreSQL session
	// (pg_terminate_backend): the server stays up, the holder's session and
	// every lock it held are gone, and the holder may not know.
	FaultTerminate FaultKind = "terminate"
	// FaultExpire has the ZooKeeper ensemble end a lock holder's session
	// (Curator's KillSession): its ephemeral nodes go, the next waiter is
	// granted, and the holder learns of it only on its next request.
	FaultExpire FaultKind = "expire"
	// FaultFailover runs CLUSTER FAILOVER on a replica of a cluster shard: a
	// graceful, coordinated promotion (no write is lost).
	FaultFailover FaultKind = "failover"
)

// FaultTarget says how a fault picks its node.
type FaultTarget string

const (
	// TargetNode is a data node by index (node=N).
	TargetNode FaultTarget = "node"
	// TargetPrimary is the current primary, resolved when the fault applies.
	TargetPrimary FaultTarget = "primary"
	// TargetReplica is the current replica, resolved when the fault applies.
	TargetReplica FaultTarget = "replica"
	// TargetMaster is the current master of cluster shard S (master=S).
	TargetMaster FaultTarget = "master"
	// TargetShard is a replica of cluster shard S (shard=S), for failover
	// and lag-replica.
	TargetShard FaultTarget = "shard"
	// TargetHolder is a session holding a lock (on postgres or
	// zookeeper:N), picked when the fault applies (terminate's and
	// expire's target).
	TargetHolder FaultTarget = "holder"
)

// FaultHelp lists the accepted fault specs, for error messages and --help.
const FaultHelp = "at=DURATION then one of: kill TARGET · restart TARGET · pause TARGET for=DURATION · " +
	"latency TARGET DELAY for=DURATION · partition TARGET for=DURATION · clock-jump TARGET ±DURATION [for=DURATION] · " +
	"clock-speed TARGET FACTOR for=DURATION · lag-replica [shard=S] for=DURATION · failover shard=S · terminate holder · expire holder; " +
	"TARGET is node=N, primary, replica, master=S (cluster shard S), or on etcd:N leader"

// faultFormHint ends a refusal of a fault spec: FaultHelp, every form, is
// too long for one line after the spec and the reason.
const faultFormHint = "see the forms in lockbench run --help"

// Bounds that keep a spec sensible and its arithmetic far from overflow.
const (
	maxFaultTime  = 24 * time.Hour
	maxLatency    = time.Minute
	maxClockSpeed = 1000
	maxNodeIndex  = 1000
)

// FaultSpec is one parsed --fault value.
type FaultSpec struct {
	// At is when the fault applies, from the start of the measured window.
	At time.Duration
	// Kind is what it does.
	Kind FaultKind
	// Target picks the node; lag-replica always targets the replica.
	Target FaultTarget
	// Node is the data node index when Target is TargetNode.
	Node int
	// Shard is the cluster shard when Target is TargetMaster or TargetShard.
	Shard int
	// For is how long the fault lasts before it is undone; 0 for kill and
	// restart, and for a clock-jump that stays.
	For time.Duration
	// Latency is the delay a latency fault adds to each reply.
	Latency time.Duration
	// Jump is the signed amount a clock-jump moves the clock.
	Jump time.Duration
	// Speed is the clock-speed factor (2.0 runs twice as fast).
	Speed float64
}

// ParseFault parses a --fault value such as "at=3s kill primary",
// "at=2s pause node=2 for=1500ms" or "at=1s latency node=0 300ms for=2s".
// Words may come in any order after at=; its errors are one line naming the
// spec and what is accepted.
func ParseFault(spec string) (FaultSpec, error) {
	bad := func(format string, args ...any) (FaultSpec, error) {
		return FaultSpec{}, fmt.Errorf("fault %q: %s; %s", spec, fmt.Sprintf(format, args...), faultFormHint)
	}
	var f FaultSpec
	var haveAt, haveFor bool
	var positional []string
	for _, tok := range strings.Fields(spec) {
		key, val, isKV := strings.Cut(tok, "=")
		if isKV {
			switch key {
			case "at", "for":
				d, err := time.ParseDuration(val)
				if err != nil {
					return bad("%s=%q is not a duration (e.g. 1500ms, 2s)", key, val)
				}
				if d > maxFaultTime {
					return bad("%s=%s is more than %s", key, val, maxFaultTime)
				}
				if key == "at" {
					if haveAt {
						return bad("at= given twice")
					}
					if d < 0 {
						return bad("at=%s is negative", val)
					}
					f.At, haveAt = d, true
				} else {
					if haveFor {
						return bad("for= given twice")
					}
					if d <= 0 {
						return bad("for=%s must be positive", val)
					}
					f.For, haveFor = d, true
				}
			case "node":
				if f.Target != "" {
					return bad("more than one target")
				}
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 || n > maxNodeIndex {
					return bad("node=%q is not a data node index (0, 1, …)", val)
				}
				f.Target, f.Node = TargetNode, n
			case "master", "shard":
				if f.Target != "" {
					return bad("more than one target")
				}
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 || n >= MaxMasters {
					return bad("%s=%q is not a cluster shard index (0 to %d)", key, val, MaxMasters-1)
				}
				f.Target, f.Shard = FaultTarget(key), n
			default:
				return bad("unknown key %q", key)
			}
			continue
		}
		switch {
		case tok == string(TargetPrimary) || tok == string(TargetReplica) || tok == string(TargetLeader) || tok == string(TargetHolder):
			if f.Target != "" {
				return bad("more than one target")
			}
			f.Target = FaultTarget(tok)
		case f.Kind == "":
			if !knownFaultKind(FaultKind(tok)) {
				return FaultSpec{}, fmt.Errorf("unknown fault %q; %s", tok, suggest.Unknown(tok, faultKindNames()))
			}
			f.Kind = FaultKind(tok)
		default:
			positional = append(positional, tok)
		}
	}
	if !haveAt {
		return bad("missing at=DURATION")
	}
	if f.Kind == "" {
		return bad("missing the fault kind")
	}
	wantArg := f.Kind == FaultLatency || f.Kind == FaultClockJump || f.Kind == FaultClockSpeed
	switch {
	case wantArg && len(positional) == 0:
		return bad("%s needs its amount", f.Kind)
	case wantArg && len(positional) > 1, !wantArg && len(positional) > 0:
		return bad("unexpected %q", strings.Join(positional, " "))
	}
	switch f.Kind {
	case FaultLagReplica:
		if f.Target != "" && f.Target != TargetReplica && f.Target != TargetShard {
			return bad("lag-replica always acts on a replica; drop the target, or name a cluster shard with shard=S")
		}
		if f.Target == "" {
			f.Target = TargetReplica
		}
	case FaultFailover:
		if f.Target != TargetShard {
			return bad("failover needs shard=S (the cluster shard whose replica takes over)")
		}
	case FaultTerminate, FaultExpire:
		if f.Target != TargetHolder {
			return bad("%s ends a lock holder's session: its target is holder", f.Kind)
		}
	default:
		if f.Target == "" {
			return bad("%s needs a target", f.Kind)
		}
		if f.Target == TargetShard {
			return bad("shard=S names a replica for failover and lag-replica; %s takes master=S or node=N", f.Kind)
		}
	}
	switch f.Kind {
	case FaultKill, FaultRestart:
		if haveFor {
			return bad("%s takes no for=; a killed node stays down, restart brings it back", f.Kind)
		}
	case FaultTerminate:
		if haveFor {
			return bad("terminate takes no for=; the session is gone, the pool opens a new one")
		}
	case FaultExpire:
		if haveFor {
			return bad("expire takes no for=; the session is gone, the client starts a new one")
		}
	case FaultFailover:
		if haveFor {
			return bad("failover takes no for=; the promoted replica stays master")
		}
	case FaultClockJump:
	default:
		if !haveFor {
			return bad("%s needs for=DURATION", f.Kind)
		}
	}
	switch f.Kind {
	case FaultLatency:
		d, err := time.ParseDuration(positional[0])
		if err != nil || d < time.Millisecond || d > maxLatency || d%time.Millisecond != 0 {
			return bad("latency %q must be whole milliseconds from 1ms to %s", positional[0], maxLatency)
		}
		f.Latency = d
	case FaultClockJump:
		d, err := time.ParseDuration(positional[0])
		if err != nil || d == 0 || d > maxFaultTime || d < -maxFaultTime {
			return bad("clock jump %q must be a non-zero duration such as +9s or -2s, at most %s", positional[0], maxFaultTime)
		}
		f.Jump = d
	case FaultClockSpeed:
		s, err := strconv.ParseFloat(positional[0], 64)
		if err != nil || math.IsNaN(s) || s <= 0 || s > maxClockSpeed {
			return bad("clock speed %q must be a factor above 0 and at most %d, such as 2.0 or 0.5", positional[0], maxClockSpeed)
		}
		f.Speed = s
	}
	return f, nil
}

// faultKindNames lists the fault kinds, for suggestions.
func faultKindNames() []string {
	var out []string
	for _, k := range []FaultKind{FaultKill, FaultRestart, FaultPause, FaultLatency, FaultPartition, FaultClockJump,
		FaultClockSpeed, FaultLagReplica, FaultFailover, FaultTerminate, FaultExpire} {
		out = append(out, string(k))
	}
	return out
}

func knownFaultKind(k FaultKind) bool {
	switch k {
	case FaultKill, FaultRestart, FaultPause, FaultLatency, FaultPartition, FaultClockJump, FaultClockSpeed, FaultLagReplica,
		FaultFailover, FaultTerminate, FaultExpire:
		return true
	}
	return false
}

// String renders the spec in --fault form; ParseFault reads it back to the
// same spec.
func (f FaultSpec) String() string {
	parts := []string{"at=" + f.At.String(), string(f.Kind)}
	if f.Kind != FaultLagReplica || f.Target != TargetReplica {
		parts = append(parts, f.TargetString())
	}
	switch f.Kind {
	case FaultLatency:
		parts = append(parts, f.Latency.String())
	case FaultClockJump:
		j := f.Jump.String()
		if f.Jump > 0 {
			j = "+" + j
		}
		parts = append(parts, j)
	case FaultClockSpeed:
		parts = append(parts, strconv.FormatFloat(f.Speed, 'g', -1, 64))
	}
	if f.For > 0 {
		parts = append(parts, "for="+f.For.String())
	}
	return strings.Join(parts, " ")
}

// TargetString renders the target: node=N, primary, replica, master=S or
// shard=S.
func (f FaultSpec) TargetString() string {
	switch f.Target {
	case TargetNode:
		return "node=" + strconv.Itoa(f.Node)
	case TargetMaster, TargetShard:
		return string(f.Target) + "=" + strconv.Itoa(f.Shard)
	}
	return string(f.Target)
}
