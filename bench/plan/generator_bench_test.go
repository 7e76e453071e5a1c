package plan

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkGenerator runs what one lock-cost cell runs (plan.Execute: local
// servers, the lock over lockbench's clients, the workers, the recorder, the
// in-process resource, the meters) for one short window per iteration, so
// that `go test -cpuprofile` shows where the generator's own time goes for
// each lock, and reports the figures lock-cost compares. Run one lock at a
// time for a profile of its path alone:
//
//	go test ./bench/plan -run '^$' -bench 'Generator/redlock@redlock:5/c=1$' -benchtime 1x -cpuprofile cpu.out
func BenchmarkGenerator(b *testing.B) {
	for _, lock := range []struct{ name, topology string }{
		{"single", "single"}, {"redislock", "single"}, {"redlock", "redlock:5"}, {"redsync", "redlock:5"},
	} {
		for _, c := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s@%s/c=%d", lock.name, lock.topology, c), func(b *testing.B) {
				v := Values{"duration": {"3s"}, "warmup": {"500ms"}, "lock": {lock.name}, "topology": {lock.topology},
					"concurrency": {fmt.Sprint(c)}}
				plans, err := Expand(v)
				if err != nil {
					b.Fatal(err)
				}
				var acquired, seconds, cpuShare float64
				for b.Loop() {
					r, err := Execute(context.Background(), plans[0], Env{})
					if err != nil {
						b.Fatal(err)
					}
					acquired += float64(r.Contention.Acquired)
					seconds += r.DurationS
					if r.Client != nil {
						cpuShare += r.Client.CPUShare
					}
				}
				b.ReportMetric(acquired/seconds, "acquired/s")
				b.ReportMetric(cpuShare/float64(b.N), "client-cpu-share")
			})
		}
	}
}
