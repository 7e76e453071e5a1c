package plan

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// BenchmarkHistoryCost is what --history costs a run's throughput (issue 39
// bounds it at 10%): at -c 16 and -c 256, each iteration runs the same
// workload without a history and then with one (every operation written to
// a gzip'd file), one 3 s window each against a local redis-server started
// for the run. history-ratio is the runs' acquired/s with the history over
// without it, pooled over the iterations; on a busy machine use several
// (-benchtime 5x), since neighbours move either run by more than the cost.
//
//	go test ./bench/plan -run '^$' -bench HistoryCost -benchtime 5x
func BenchmarkHistoryCost(b *testing.B) {
	for _, workers := range []int{16, 256} {
		b.Run(fmt.Sprintf("c=%d", workers), func(b *testing.B) {
			dir := b.TempDir()
			var plans [2]Plan
			for i, history := range []string{HistoryOff, dir + "/"} {
				v := Values{"duration": {"3s"}, "warmup": {"500ms"}, "lock": {"single"}, "concurrency": {strconv.Itoa(workers)},
					"history": {history}, "out": {dir}}
				expanded, err := Expand(v)
				if err != nil {
					b.Fatal(err)
				}
				plans[i] = expanded[0]
			}
			var acquired, seconds [2]float64
			for b.Loop() {
				for i, pl := range plans {
					r, err := Execute(context.Background(), pl, Env{})
					if err != nil {
						b.Fatal(err)
					}
					acquired[i] += float64(r.Contention.Acquired)
					seconds[i] += r.DurationS
				}
			}
			without, with := acquired[0]/seconds[0], acquired[1]/seconds[1]
			b.ReportMetric(without, "acquired/s-without")
			b.ReportMetric(with, "acquired/s-with-history")
			b.ReportMetric(with/without, "history-ratio")
		})
	}
}
