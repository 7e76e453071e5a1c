package lockimpl_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// BenchmarkAcquireRelease measures one acquire+release cycle at concurrency 1,
// single against Redlock over 1, 3 and 5 local masters: the ratio is what
// quorum acquisition costs, and a serial fan-out would show as ≥ N×. redsync
// over 1 and 5 is the same cycle through the library people deploy.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, tc := range []struct {
		name    string
		lock    string
		masters int
	}{{"single", "single", 1}, {"redlock-1", "redlock", 1}, {"redlock-3", "redlock", 3}, {"redlock-5", "redlock", 5},
		{"redsync-1", "redsync", 1}, {"redsync-5", "redsync", 5}} {
		b.Run(tc.name, func(b *testing.B) {
			clients := composetest.Clients(b, composetest.Servers(b, tc.masters))
			l, err := lockimpl.New(tc.lock, lockimpl.Nodes(clients...), lockimpl.Options{Redlock: lockimpl.RedlockOptions{NodeTimeout: time.Second}})
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

// BenchmarkFanOutFloor puts lockbench's Redlock beside the fastest fan-outs
// a client can do, taking turns in one run so that the machine's noise hits
// all of them alike; only the acquire of each acquire+release cycle is timed.
//
//   - raw-1, raw-5: SET NX PX written to every master's socket by hand, and
//     only then the replies read: no client library, no goroutines. Their
//     p50 ratio is the floor this machine puts under any Redlock client.
//     They release as lockbench does, by the compare-and-delete script
//     (EVALSHA), so that between two acquires the masters do the same work
//     for every variant, and the client CPU of a cycle counts the same
//     commands.
//   - raw-5-goroutines: the same bytes, one goroutine per master as
//     lockbench fans out; the step from raw-5 is what goroutines cost.
//   - single, redlock-5: lockbench through go-redis; the step from
//     raw-5-goroutines to redlock-5 is the client library's own cost.
//   - redsync-5: redsync's Mutex over five goredis pools, the Redlock
//     people deploy, on the same masters.
//
// Each variant also reports the client's CPU time per acquire+release cycle,
// which is where the library's cost shows most plainly.
func BenchmarkFanOutFloor(b *testing.B) {
	const masters = 5
	servers := composetest.Servers(b, masters)
	clients := composetest.Clients(b, servers)
	opts := lockimpl.Options{Redlock: lockimpl.RedlockOptions{NodeTimeout: time.Second}}
	single, err := lockimpl.New("single", lockimpl.Nodes(clients[:1]...), opts)
	if err != nil {
		b.Fatal(err)
	}
	redlock, err := lockimpl.New("redlock", lockimpl.Nodes(clients...), opts)
	if err != nil {
		b.Fatal(err)
	}
	redsync, err := lockimpl.New("redsync", lockimpl.Nodes(clients...), lockimpl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	raw := dialRaw(b, servers)
	ctx := context.Background()
	lockbenchCycle := func(l lockimpl.Locker) func() time.Duration {
		return func() time.Duration {
			start := time.Now()
			lease, out, err := l.Acquire(ctx, "floor", 10*time.Second)
			took := time.Since(start)
			if out != lockimpl.OK {
				b.Fatalf("acquire: %v %v", out, err)
			}
			if out, err := l.Release(ctx, lease); out != lockimpl.OK {
				b.Fatalf("release: %v %v", out, err)
			}
			return took
		}
	}
	variants := []struct {
		name  string
		cycle func() time.Duration
		hist  *hdrhistogram.Histogram
		// cpu and cycles give the client's CPU time per whole cycle.
		cpu    time.Duration
		cycles int
	}{
		{name: "single", cycle: lockbenchCycle(single)},
		{name: "redlock-5", cycle: lockbenchCycle(redlock)},
		{name: "redsync-5", cycle: lockbenchCycle(redsync)},
		{name: "raw-1", cycle: func() time.Duration { return raw.cycle(b, 1, raw.inline) }},
		{name: "raw-5", cycle: func() time.Duration { return raw.cycle(b, masters, raw.inline) }},
		{name: "raw-5-goroutines", cycle: func() time.Duration { return raw.cycle(b, masters, raw.parallel) }},
	}
	for i := range variants {
		variants[i].hist = hdrhistogram.New(1, int64(time.Second), 3)
	}
	// Variants take turns in blocks: long enough for each to reach its
	// steady state (a client and one server settle into a tight ping-pong
	// that interleaving single cycles would break), short enough that every
	// variant sees the same minutes of a noisy machine.
	const block = 500
	cycles := 0
	blockStart := processCPU(b)
	for b.Loop() {
		v := &variants[(cycles/block)%len(variants)]
		if err := v.hist.RecordValue(int64(v.cycle())); err != nil {
			b.Fatalf("%s: %v (a cycle over the histogram's 1 s range)", v.name, err)
		}
		v.cycles++
		cycles++
		if cycles%block == 0 {
			now := processCPU(b)
			v.cpu += now - blockStart
			blockStart = now
		}
	}
	p50 := make(map[string]float64, len(variants))
	cpu := make(map[string]float64, len(variants))
	for _, v := range variants {
		p50[v.name] = float64(v.hist.ValueAtQuantile(50))
		b.ReportMetric(p50[v.name]/1e3, v.name+"-p50-µs")
		if full := v.cycles / block * block; full > 0 {
			cpu[v.name] = float64(v.cpu.Microseconds()) / float64(full)
			b.ReportMetric(cpu[v.name], v.name+"-client-cpu-µs/cycle")
		}
	}
	// lockbench's Redlock against the floor: how far above a library-free,
	// goroutine-free fan-out it is, in latency and in client CPU.
	b.ReportMetric(p50["redlock-5"]/p50["raw-5"], "redlock-5/raw-5")
	if cpu["raw-5"] > 0 {
		b.ReportMetric(cpu["redlock-5"]/cpu["raw-5"], "redlock-5/raw-5-cpu")
	}
	b.ReportMetric(p50["redlock-5"]/p50["single"], "redlock-5/single")
	b.ReportMetric(p50["redsync-5"]/p50["single"], "redsync-5/single")
	b.ReportMetric(p50["raw-5"]/p50["raw-1"], "raw-5/raw-1")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The commands the raw client sends, as RESP: a lock of the same shape as
// lockbench's (32-hex-digit token, 10 s TTL) and its removal by lockbench's
// compare-and-delete script, run by its SHA-1 (loaded on every master first).
const (
	rawSet   = "*6\r\n$3\r\nSET\r\n$9\r\nfloor:raw\r\n$32\r\n0123456789abcdef0123456789abcdef\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n"
	rawToken = "0123456789abcdef0123456789abcdef"
)

// rawRelease is EVALSHA of the release script with the raw lock's key and
// token, as RESP.
func rawRelease(sha string) string {
	return fmt.Sprintf("*5\r\n$7\r\nEVALSHA\r\n$%d\r\n%s\r\n$1\r\n1\r\n$9\r\nfloor:raw\r\n$%d\r\n%s\r\n", len(sha), sha, len(rawToken), rawToken)
}

// rawMasters holds one plain TCP connection per master, spoken to in RESP
// by hand so that nothing but the sockets and the servers is measured, and
// one goroutine per master beyond the first for the parallel variant.
type rawMasters struct {
	conns    []net.Conn
	readers  []*bufio.Reader
	workers  []chan func()
	done     chan error
	set, del []byte
}

// fanOutFunc sends cmd to the first n masters and checks each reply is want.
type fanOutFunc func(n int, cmd []byte, want string) error

func dialRaw(b *testing.B, servers []*compose.Server) *rawMasters {
	b.Helper()
	ctx := context.Background()
	var sha string
	for _, c := range composetest.Clients(b, servers) {
		var err error
		if sha, err = c.ScriptLoad(ctx, lockimpl.ReleaseScript()).Result(); err != nil {
			b.Fatal(err)
		}
	}
	r := &rawMasters{set: []byte(rawSet), del: []byte(rawRelease(sha)), done: make(chan error, len(servers))}
	for i, s := range servers {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		r.conns = append(r.conns, c)
		r.readers = append(r.readers, bufio.NewReader(c))
		work := make(chan func())
		r.workers = append(r.workers, work)
		if i > 0 {
			go func() {
				for f := range work {
					f()
				}
			}()
		}
		b.Cleanup(func() { close(work) })
	}
	return r
}

// cycle sets the key on the first n masters and deletes it again, both with
// fanOut, and returns how long the SET took.
func (r *rawMasters) cycle(b *testing.B, n int, fanOut fanOutFunc) time.Duration {
	start := time.Now()
	err := fanOut(n, r.set, "+OK\r\n")
	took := time.Since(start)
	if err == nil {
		err = fanOut(n, r.del, ":1\r\n")
	}
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// inline writes to every master before reading any reply.
func (r *rawMasters) inline(n int, cmd []byte, want string) error {
	for _, c := range r.conns[:n] {
		if _, err := c.Write(cmd); err != nil {
			return err
		}
	}
	for i := range n {
		if err := r.read(i, want); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs master 0 on the caller and the others on their goroutines,
// as lockimpl.Redlock does.
func (r *rawMasters) parallel(n int, cmd []byte, want string) error {
	for i := 1; i < n; i++ {
		r.workers[i] <- func() { r.done <- r.roundTrip(i, cmd, want) }
	}
	err := r.roundTrip(0, cmd, want)
	for i := 1; i < n; i++ {
		err = errors.Join(err, <-r.done)
	}
	return err
}

func (r *rawMasters) roundTrip(i int, cmd []byte, want string) error {
	if _, err := r.conns[i].Write(cmd); err != nil {
		return err
	}
	return r.read(i, want)
}

func (r *rawMasters) read(i int, want string) error {
	line, err := r.readers[i].ReadString('\n')
	if err != nil {
		return fmt.Errorf("master %d: %w", i, err)
	}
	if line != want {
		return fmt.Errorf("master %d replied %q, want %q", i, line, want)
	}
	return nil
}
