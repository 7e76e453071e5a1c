package sweep

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// DefaultTTLs are the TTLs tune-ttl tries when --ttls is not given, a
// doubling row of three from 1s: where a topology's lock cannot be granted
// that (etcd's local clusters grant 2s at least, lockimpl.Descriptor), the
// row starts at the lock's shortest, on its grain; etcd:1, which grants
// 1s, starts at 2s too, so that every etcd:N tunes the same row.
func DefaultTTLs(topologies []string) string {
	first := time.Second
	for _, t := range topologies {
		if s, err := compose.ParseSpec(t); err == nil {
			d, _ := lockimpl.Describe(s.DefaultLock())
			first = max(first, d.FitTTL(first))
		}
	}
	return fmt.Sprintf("%v,%v,%v", first, 2*first, 4*first)
}
