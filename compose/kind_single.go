package compose

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindSingle is one master.
const KindSingle Kind = "single"

// singleShape is one Redis master: the single-instance locks' home, and
// Redlock with N = 1.
type singleShape struct{}

// Info describes single.
func (singleShape) Info() KindInfo {
	return KindInfo{
		Kind: KindSingle, Syntax: "single", Example: "single", Sample: "single", CanonicalFaultText: "a pause past the ttl", Backend: lockimpl.BackendRedis, Program: "redis-server", Node: "master",
		Drivers:     true,
		ScriptLocks: true,
		Locks:       append(singleInstanceLocks(), lockimpl.LockRedlock, lockimpl.LockRedsync, lockimpl.LockRedislock, lockimpl.LockRueidislock, lockimpl.LockValkeylock),
		Providers:   []string{ProviderLocal, ProviderDocker, ProviderExternal},
		StartUp:     300 * time.Millisecond,
		RunFlags:    redisFlags(),
		Targets:     []FaultTarget{TargetNode, TargetPrimary},
		ClockShim:   true,
	}
}

// Parse reads single, which takes no count.
func (singleShape) Parse(in, _ string, hasArg bool) (Spec, error) {
	if hasArg {
		return Spec{}, fmt.Errorf("topology %q: single takes no count; want single", in)
	}
	return Spec{Kind: KindSingle, Masters: 1}, nil
}

// Format is "single".
func (singleShape) Format(Spec) string { return string(KindSingle) }

// DataNodes is the one master.
func (singleShape) DataNodes(Spec) int { return 1 }

// Replicas: a single master has none.
func (singleShape) Replicas(Spec) int { return 0 }

// URLs: one server.
func (singleShape) URLs(Spec) int { return 1 }

// CanonicalFault on one server is a pause past the TTL (ttl + 10%) in the
// middle of a window lengthened by the pause, so the run shows the stall,
// the server coming back with every lease expired, and the recovery.
func (singleShape) CanonicalFault(ttl, window time.Duration) (FaultSpec, time.Duration) {
	pause := (ttl + ttl/10).Round(time.Millisecond)
	return canonical((window / 2).Round(time.Millisecond), "pause node=0 for="+pause.String()), window + pause
}

func (singleShape) up(ctx context.Context, t *Topology, provider string) error {
	return t.upMastersFrom(ctx, provider)
}
