package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/workloads"
)

// BenchmarkRunMemoryPerWorker is what one worker of a whole run costs at
// the run's peak, in B/worker: a one-second run with --pipeline auto's lock
// against a local redis-server at 1000 and 10000 workers, its peak heap
// and stacks in use (sampled every 50 ms) less what was in use before,
// over the workers. Unlike BenchmarkMemoryPerWorker it counts the
// goroutine stacks and everything a worker allocates, so a change that
// grows a worker shows here. acquired/s says the run served its workers.
func BenchmarkRunMemoryPerWorker(b *testing.B) {
	server := composetest.Servers(b, 1)[0]
	for _, workers := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			l := lockimpl.NewPipelined(composetest.Client(b, server), false, lockimpl.PipeOptions{})
			defer func() { _ = l.Close() }()
			wl := withDefaults(workloads.Workload{Keys: mustKeys(b, "unique"), TTL: 10 * time.Second})
			var perWorker, peakMB, rate float64
			for i := 0; b.Loop(); i++ {
				runtime.GC()
				base := memoryInUse()
				peak := sampleMemoryPeak(50 * time.Millisecond)
				m, err := Run(context.Background(), l, wl, Options{Concurrency: workers, Duration: time.Second,
					KeyPrefix: fmt.Sprintf("memory-per-worker:%d:", i)})
				top := peak()
				if err != nil {
					b.Fatal(err)
				}
				perWorker = float64(top-base) / float64(workers)
				peakMB = float64(top) / (1 << 20)
				rate = float64(m.counters.Contention.Acquired) / m.Elapsed.Seconds()
			}
			b.ReportMetric(perWorker, "B/worker")
			b.ReportMetric(peakMB, "peak-MB")
			b.ReportMetric(rate, "acquired/s")
		})
	}
}

// memoryInUse is the heap and the goroutine stacks in use now.
func memoryInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// sampleMemoryPeak samples memoryInUse every interval until the function
// it returns is called, which returns the highest sample.
func sampleMemoryPeak(interval time.Duration) func() uint64 {
	var (
		mu   sync.Mutex
		peak = memoryInUse()
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				v := memoryInUse()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return max(peak, memoryInUse())
	}
}
