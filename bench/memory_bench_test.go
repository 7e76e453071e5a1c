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
	"github.com/redis/go-redis/v9"
)

// BenchmarkRunMemoryPerWorker is what one worker of a whole run costs at
// the run's peak, in B/worker: a one-second run against a local
// redis-server at 1000 and 10000 workers, with --pipeline auto's lock and
// with default mode's (the single lock on its raw connections, a pool of
// MaxAutoPool's 1024), its peak heap and stacks in use (sampled every 50 ms)
// less what was in use before, over the workers. Unlike
// BenchmarkMemoryPerWorker it counts the goroutine stacks and everything a
// worker allocates, so a change that grows a worker shows here;
// stack-B/worker is the stacks' part alone (a worker whose path outgrows
// a 4 KB stack holds 8 KB). acquired/s says the run served its workers.
func BenchmarkRunMemoryPerWorker(b *testing.B) {
	server := composetest.Servers(b, 1)[0]
	locks := []struct {
		name string
		make func(b *testing.B) lockimpl.Locker
	}{
		{"pipeline=auto", func(b *testing.B) lockimpl.Locker {
			return lockimpl.NewPipelined(composetest.Client(b, server), false, lockimpl.PipeOptions{})
		}},
		{"pipeline=off", func(b *testing.B) lockimpl.Locker {
			c := redis.NewClient(&redis.Options{Addr: server.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
				DisableIdentity: true, PoolSize: 1024})
			b.Cleanup(func() { _ = c.Close() })
			l, err := lockimpl.New(lockimpl.LockSingle, []redis.Cmdable{c}, lockimpl.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return l
		}},
	}
	for _, lock := range locks {
		for _, workers := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%s/workers=%d", lock.name, workers), func(b *testing.B) {
				runMemoryPerWorker(b, lock.make(b), workers)
			})
		}
	}
}

// runMemoryPerWorker runs BenchmarkRunMemoryPerWorker's run on l with
// workers workers and reports its figures.
func runMemoryPerWorker(b *testing.B, l lockimpl.Locker, workers int) {
	if c, ok := l.(interface{ Close() error }); ok {
		defer func() { _ = c.Close() }()
	}
	wl := withDefaults(workloads.Workload{Keys: mustKeys(b, "unique"), TTL: 10 * time.Second})
	var perWorker, stackPerWorker, peakMB, rate float64
	for i := 0; b.Loop(); i++ {
		runtime.GC()
		base, baseStacks := memoryInUse(), stacksInUse()
		peak := sampleMemoryPeak(50 * time.Millisecond)
		m, err := Run(context.Background(), l, wl, Options{Concurrency: workers, Duration: time.Second,
			KeyPrefix: fmt.Sprintf("memory-per-worker:%d:", i)})
		top, topStacks := peak()
		if err != nil {
			b.Fatal(err)
		}
		perWorker = float64(top-base) / float64(workers)
		stackPerWorker = float64(topStacks-baseStacks) / float64(workers)
		peakMB = float64(top) / (1 << 20)
		rate = float64(m.counters.Contention.Acquired) / m.Elapsed.Seconds()
	}
	b.ReportMetric(perWorker, "B/worker")
	b.ReportMetric(stackPerWorker, "stack-B/worker")
	b.ReportMetric(peakMB, "peak-MB")
	b.ReportMetric(rate, "acquired/s")
}

// memoryInUse is the heap and the goroutine stacks in use now.
func memoryInUse() uint64 {
	heapAndStacks, _ := readMemoryInUse()
	return heapAndStacks
}

// stacksInUse is the goroutine stacks in use now.
func stacksInUse() uint64 {
	_, stacks := readMemoryInUse()
	return stacks
}

// readMemoryInUse reads the heap and stacks in use together, and the
// stacks alone, from one MemStats.
func readMemoryInUse() (heapAndStacks, stacks uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, m.StackInuse
}

// sampleMemoryPeak samples the heap and stacks in use every interval until
// the function it returns is called, which returns the highest samples of
// both together and of the stacks alone.
func sampleMemoryPeak(interval time.Duration) func() (heapAndStacks, stacks uint64) {
	var (
		mu               sync.Mutex
		peak, peakStacks = readMemoryInUse()
	)
	sample := func() {
		v, st := readMemoryInUse()
		mu.Lock()
		peak, peakStacks = max(peak, v), max(peakStacks, st)
		mu.Unlock()
	}
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
				sample()
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak, peakStacks
	}
}
