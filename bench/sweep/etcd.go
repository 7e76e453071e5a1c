package sweep

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// DefaultTTLs are the TTLs tune-ttl tries when --ttls is not given, a
// doubling row of three: on etcd (whole seconds, at least plan.EtcdMinTTL)
// the shortest of the usual ones cannot be granted, so the row starts at
// etcd's minimum.
func DefaultTTLs(topologies []string) string {
	first := time.Second
	for _, t := range topologies {
		if s, err := compose.ParseSpec(t); err == nil && s.DefaultLock() == lockimpl.LockEtcd {
			first = plan.EtcdMinTTL
		}
	}
	return fmt.Sprintf("%v,%v,%v", first, 2*first, 4*first)
}
