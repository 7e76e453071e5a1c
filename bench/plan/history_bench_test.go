package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkHistoryCost is what --history costs a run's throughput (issue 39
// bounds it at 10%): at -c 16 and -c 256, each iteration runs the same
// workload without a history, then with every operation written to a
// gzip'd file (FILE.gz), then to a plain one, one 3 s window each against a
// local redis-server started for the run. gzip-ratio and plain-ratio are
// the runs' acquired/s with each history over without one, pooled over the
// iterations; on a busy machine use several (-benchtime 5x), since
// neighbours move either run by more than the cost.
//
//	go test ./bench/plan -run '^$' -bench HistoryCost -benchtime 5x
func BenchmarkHistoryCost(b *testing.B) {
	histories := []struct{ name, path string }{{"without", HistoryOff}, {"gzip", "{id}.jsonl.gz"}, {"plain", "{id}.jsonl"}}
	for _, workers := range []int{16, 256} {
		b.Run(fmt.Sprintf("c=%d", workers), func(b *testing.B) {
			dir := b.TempDir()
			plans := make([]Plan, len(histories))
			for i, h := range histories {
				path := h.path
				if path != HistoryOff {
					path = filepath.Join(dir, path)
				}
				v := Values{"duration": {"3s"}, "warmup": {"500ms"}, "lock": {"single"}, "concurrency": {strconv.Itoa(workers)},
					"history": {path}, "out": {dir}}
				expanded, err := Expand(v)
				if err != nil {
					b.Fatal(err)
				}
				plans[i] = expanded[0]
			}
			acquired, seconds := make([]float64, len(plans)), make([]float64, len(plans))
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
			without := acquired[0] / seconds[0]
			b.ReportMetric(without, "acquired/s-without")
			for i, h := range histories[1:] {
				b.ReportMetric(acquired[i+1]/seconds[i+1]/without, h.name+"-ratio")
			}
		})
	}
}
