package plan

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// BenchmarkRunPeakRSS is issue 39's memory figure as the issue measures it:
// the peak resident set of the process over a whole run (plan.Execute, as
// `lockbench run` does, local redis-server included as another process) at
// 10,000 workers, in default mode (every worker through the lock's
// connection pool of up to MaxAutoPool) and with --pipeline auto. peak-MB
// is the process's VmHWM after the run, reset before it (/proc/self/clear_refs);
// B/worker is that peak less the resident set before the run, over the
// workers, so a change that grows a worker shows in review; acquired/s and
// starved say whether the run served its workers. A later sub-benchmark's
// peak-MB includes what earlier ones left resident: run one alone for its
// absolute peak (-bench 'RunPeakRSS/pipeline=off'). Skipped where the peak
// cannot be reset (not Linux).
//
//	go test ./bench/plan -run '^$' -bench RunPeakRSS -benchtime 1x
func BenchmarkRunPeakRSS(b *testing.B) {
	if err := resetPeakRSS(); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	for _, mode := range []string{"off", "auto"} {
		for _, workers := range []int{10000} {
			b.Run(fmt.Sprintf("pipeline=%s/c=%d", mode, workers), func(b *testing.B) {
				v := Values{"duration": {"2s"}, "warmup": {"1s"}, "lock": {"single"}, "pipeline": {mode},
					"concurrency": {strconv.Itoa(workers)}, "out": {b.TempDir()}}
				plans, err := Expand(v)
				if err != nil {
					b.Fatal(err)
				}
				var peakMB, perWorker, rate, starved float64
				for b.Loop() {
					before := residentKB(b, "VmRSS")
					if err := resetPeakRSS(); err != nil {
						b.Fatal(err)
					}
					r, err := Execute(context.Background(), plans[0], Env{})
					if err != nil {
						b.Fatal(err)
					}
					peak := residentKB(b, "VmHWM")
					peakMB = float64(peak) / 1024
					perWorker = float64(peak-before) * 1024 / float64(workers)
					rate = float64(r.Contention.Acquired) / r.DurationS
					if r.Fairness != nil {
						starved = float64(r.Fairness.Starved)
					}
				}
				b.ReportMetric(peakMB, "peak-MB")
				b.ReportMetric(perWorker, "B/worker")
				b.ReportMetric(rate, "acquired/s")
				b.ReportMetric(starved, "starved")
			})
		}
	}
}

// resetPeakRSS sets the process's peak resident set (VmHWM) to its current one.
func resetPeakRSS() error { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// residentKB reads one of /proc/self/status's kB fields (VmRSS, VmHWM).
func residentKB(b *testing.B, field string) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			f := bytes.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				b.Fatalf("%s %q: %v", field, f[0], err)
			}
			return kb
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
