package sweep

import "github.com/lockbench/lockbench/compose"

// DefaultTTLs are the TTLs tune-ttl tries when --ttls is not given: on etcd
// (whole seconds, at least 2 s) the shortest of the usual ones cannot be
// granted, so the row starts at etcd's minimum.
func DefaultTTLs(topologies []string) string {
	for _, t := range topologies {
		if s, err := compose.ParseSpec(t); err == nil && s.Kind == compose.KindEtcd {
			return "2s,4s,8s"
		}
	}
	return "1s,2s,4s"
}
