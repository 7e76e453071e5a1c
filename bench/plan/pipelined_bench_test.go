package plan

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// BenchmarkGeneratorPipelinedCPURatio is issue 39's first figure for the
// whole generator, not the lock alone (BenchmarkPipelinedCPURatio in
// lockimpl): `lockbench run --pipeline auto -c 256` (plan.Execute: workers,
// recorder, lock's-calls ledger, in-process resource, meters) against a
// local redis-server for 3 s per iteration, then redis-benchmark's SET +
// EVALSHA pair at -P 16 -c 50 against the same server for as many pairs as
// the run acquired. client-cpu-µs/acquisition and server-share are the
// run's own figures; cpu-ratio is client CPU per acquisition over
// redis-benchmark's per pair, which the issue bounds at 1.5. Both sides'
// CPU is their own processes' (rusage): a busy machine moves both, but
// the proportions of a -cpuprofile hold. Skipped where redis-benchmark is
// not on PATH.
//
//	go test ./bench/plan -run '^$' -bench GeneratorPipelinedCPURatio -benchtime 1x -cpuprofile cpu.out
func BenchmarkGeneratorPipelinedCPURatio(b *testing.B) {
	server := composetest.Servers(b, 1)[0]
	admin := composetest.Client(b, server)
	sha, err := admin.ScriptLoad(context.Background(), lockimpl.ReleaseScript()).Result()
	if err != nil {
		b.Fatal(err)
	}
	v := Values{"duration": {"3s"}, "warmup": {"500ms"}, "lock": {"single"}, "pipeline": {"auto"},
		"concurrency": {"256"}, "redis": {"redis://" + server.Addr()}, "out": {b.TempDir()}}
	plans, err := Expand(v)
	if err != nil {
		b.Fatal(err)
	}
	var acquired, clientUS, serverUS, seconds float64
	var theirs time.Duration
	for b.Loop() {
		r, err := Execute(context.Background(), plans[0], Env{})
		if err != nil {
			b.Fatal(err)
		}
		if !r.Client.Measured() || r.Servers == nil || r.Servers.CPUUSPerAcquire == nil || r.Contention.Acquired == 0 {
			b.Fatalf("run measured no client or server CPU per acquisition: %+v %+v", r.Client, r.Servers)
		}
		n := r.Contention.Acquired
		acquired += float64(n)
		seconds += r.DurationS
		clientUS += r.Client.CPUUS
		serverUS += *r.Servers.CPUUSPerAcquire * float64(n)
		b.StopTimer()
		theirs += composetest.RedisBenchmarkPairsCPU(b, server.Port(), sha, int(n))
		b.StartTimer()
	}
	perAcq := clientUS / acquired
	b.ReportMetric(acquired/seconds, "acquired/s")
	b.ReportMetric(perAcq, "client-cpu-µs/acquisition")
	b.ReportMetric(serverUS/seconds/1e6, "server-share")
	b.ReportMetric(float64(theirs.Microseconds())/acquired, "redis-benchmark-cpu-µs/pair")
	b.ReportMetric(perAcq/(float64(theirs.Microseconds())/acquired), "cpu-ratio")
}
