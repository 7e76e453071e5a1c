package compose

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// KindRedlock is N independent masters.
const KindRedlock Kind = "redlock"

// MaxMasters bounds redlock:N.
const MaxMasters = 9

// defaultRedlockMasters is the master count of a bare "redlock" without
// --redis URLs.
const defaultRedlockMasters = 5

// redlockShape is N independent Redis masters: the quorum locks' home.
type redlockShape struct{}

// Info describes redlock:N.
func (redlockShape) Info() KindInfo {
	single := "needs one server; use --lock redlock or redsync, or --topology single"
	return KindInfo{
		Kind: KindRedlock, Syntax: fmt.Sprintf("redlock:N with 1 ≤ N ≤ %d", MaxMasters), Example: "redlock:N", Sample: "redlock:3", CanonicalFaultText: "one master killed",
		Backend: lockimpl.BackendRedis, Program: "redis-server", Node: "master",
		Drivers:           true,
		Locks:             []string{lockimpl.LockRedlock, lockimpl.LockRedsync},
		QuorumScriptLocks: true,
		LockNotes:         map[string]string{lockimpl.LockSingle: single, lockimpl.LockFenced: single, lockimpl.LockNaive: single, lockimpl.LockRedislock: single},
		Providers:         []string{ProviderLocal, ProviderDocker, ProviderExternal},
		StartUp:           500 * time.Millisecond,
		RunFlags:          redisFlags(),
		Targets:           []FaultTarget{TargetNode},
		ClockShim:         true,
	}
}

// Parse reads redlock (the count from --redis URLs, or 5) or redlock:N.
func (redlockShape) Parse(in, arg string, hasArg bool) (Spec, error) {
	if !hasArg {
		return Spec{Kind: KindRedlock}, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > MaxMasters {
		return Spec{}, fmt.Errorf("topology %q: master count must be a whole number from 1 to %d; want redlock:N", in, MaxMasters)
	}
	return Spec{Kind: KindRedlock, Masters: n}, nil
}

// Format is redlock:N.
func (redlockShape) Format(s Spec) string { return fmt.Sprintf("%s:%d", KindRedlock, s.Masters) }

// DataNodes are the masters (0 until counted from --redis URLs).
func (redlockShape) DataNodes(s Spec) int { return s.Masters }

// Replicas: independent masters have none.
func (redlockShape) Replicas(Spec) int { return 0 }

// URLs: one per master, or any number for a bare redlock.
func (redlockShape) URLs(s Spec) int { return s.Masters }

// resolve gives a bare redlock its count: the URLs', or 5 local masters.
func (redlockShape) resolve(s Spec, urls int) Spec {
	if s.Masters == 0 && urls == 0 {
		s.Masters = defaultRedlockMasters
	}
	return s
}

// CanonicalFault on N masters is one killed for the whole window: what a
// quorum buys.
func (redlockShape) CanonicalFault(_, window time.Duration) (FaultSpec, time.Duration) {
	return canonical(0, "kill node=0"), window
}

func (redlockShape) up(ctx context.Context, t *Topology, provider string) error {
	return t.upMastersFrom(ctx, provider)
}
