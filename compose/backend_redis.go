package compose

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/lockimpl"
)

// redisBackend is redis-server: single, redlock, replicated and cluster.
// Its nodes carry no payload; its kinds' own state (sentinels, cluster
// shards) lives with those kinds.
type redisBackend struct{}

// Info describes the Redis backend.
func (redisBackend) Info() BackendInfo {
	return BackendInfo{Name: lockimpl.BackendRedis, URLFlag: "redis",
		URLUsage:   "external server URL redis://[user:pass@]host:port[/db] or rediss://; one per master (default: start local redis-server processes)",
		URLDoc:     "With `--topology cluster`, any node(s) of the cluster: the rest is discovered. The password never appears in output or results",
		URLPerNode: true, Schemes: []string{"redis", "rediss"}, SampleURL: "redis://127.0.0.1:6379"}
}

// CheckURL checks a --redis URL.
func (redisBackend) CheckURL(raw string) error {
	_, err := ParseRedisURL(raw)
	return err
}

// target: Redis has no target of its own (primary, replica and the
// cluster's shards are resolved by apply.go for every kind).
func (redisBackend) target(_ context.Context, t *Topology, f FaultSpec) (*Node, error) {
	return nil, fmt.Errorf("topology %s has no %s", t.Spec, f.Target)
}
