package lockimpl_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// BenchmarkAcquireRelease measures one acquire+release cycle at concurrency 1,
// single against Redlock over 1, 3 and 5 local masters: the ratio is what
// quorum acquisition costs, and a serial fan-out would show as ≥ N×.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, tc := range []struct {
		name    string
		lock    string
		masters int
	}{{"single", "single", 1}, {"redlock-1", "redlock", 1}, {"redlock-3", "redlock", 3}, {"redlock-5", "redlock", 5}} {
		b.Run(tc.name, func(b *testing.B) {
			clients := composetest.Clients(b, composetest.Servers(b, tc.masters))
			l, err := lockimpl.New(tc.lock, clients, lockimpl.Options{Redlock: lockimpl.RedlockOptions{NodeTimeout: time.Second}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				lease, out, err := l.Acquire(ctx, "bench", 10*time.Second)
				if out != lockimpl.OK {
					b.Fatalf("acquire: %v %v", out, err)
				}
				if out, err := l.Release(ctx, lease); out != lockimpl.OK {
					b.Fatalf("release: %v %v", out, err)
				}
			}
		})
	}
}
