package lockimpl_test

import (
	"context"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// BenchmarkBackends puts one acquire+release cycle of the zk and nats-kv
// locks beside the single Redis lock, each on one local server started the
// same way (a free loopback port, its own directory), in one run so that
// the machine's noise hits all of them alike. Acquire and release are
// timed apart; each reports its p50 and p99 in microseconds. zk's acquire
// is three round trips (create, list, the node's czxid), nats-kv's one,
// single's one.
func BenchmarkBackends(b *testing.B) {
	ctx := context.Background()
	redis := lockimpl.Nodes(composetest.Clients(b, composetest.Servers(b, 1))...)
	single, err := lockimpl.New("single", redis, lockimpl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	zk := newZk(b, composetest.ZkEnsemble(b, 1).Addrs(), lockimpl.ZkOptions{SessionTimeout: 10 * time.Second})
	natsKV := newNatsKV(b, composetest.NatsCluster(b, 1).URLs(), lockimpl.NatsKVOptions{})
	for _, tc := range []struct {
		name string
		lock lockimpl.Locker
	}{{"single", single}, {"zk", zk}, {"nats-kv", natsKV}} {
		b.Run(tc.name, func(b *testing.B) {
			acquire := hdrhistogram.New(1, 10_000_000, 3)
			release := hdrhistogram.New(1, 10_000_000, 3)
			for b.Loop() {
				t0 := time.Now()
				lease, out, err := tc.lock.Acquire(ctx, "lockbench:bench:backends", 10*time.Second)
				t1 := time.Now()
				if out != lockimpl.OK {
					b.Fatalf("acquire: %v %v", out, err)
				}
				if out, err := tc.lock.Release(ctx, lease); out != lockimpl.OK {
					b.Fatalf("release: %v %v", out, err)
				}
				_ = acquire.RecordValue(t1.Sub(t0).Microseconds())
				_ = release.RecordValue(time.Since(t1).Microseconds())
			}
			b.ReportMetric(float64(acquire.ValueAtQuantile(50)), "acquire-p50-µs")
			b.ReportMetric(float64(acquire.ValueAtQuantile(99)), "acquire-p99-µs")
			b.ReportMetric(float64(release.ValueAtQuantile(50)), "release-p50-µs")
			b.ReportMetric(float64(release.ValueAtQuantile(99)), "release-p99-µs")
		})
	}
}
