package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

func newRedlock(t *testing.T, clients []*redis.Client, opts lockimpl.RedlockOptions) *lockimpl.Redlock {
	t.Helper()
	rl, err := lockimpl.NewRedlock(lockimpl.Nodes(clients...), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.Wait)
	return rl
}

// throughProxy returns clients for servers with lockbench's settings, the
// ones listed in slow reached through the address proxy makes for them.
func throughProxy(t *testing.T, servers []*compose.Server, slow []int, proxy func(addr string) string) []*redis.Client {
	t.Helper()
	var clients []*redis.Client
	for i, s := range servers {
		addr := s.Addr()
		if slices.Contains(slow, i) {
			addr = proxy(addr)
		}
		clients = append(clients, composetest.ClientAt(t, addr))
	}
	return clients
}

// keysLeft counts lockbench test keys on the live masters.
func keysLeft(t *testing.T, clients []*redis.Client, live []bool, key string) int {
	t.Helper()
	n := 0
	for i, c := range clients {
		if live[i] && c.Exists(context.Background(), key).Val() > 0 {
			n++
		}
	}
	return n
}

func TestRedlockSurvivesOneMasterDown(t *testing.T) {
	servers := composetest.Servers(t, 5)
	clients := composetest.Clients(t, servers)
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 200 * time.Millisecond})
	if err := servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 10 {
		lease, out, err := rl.Acquire(ctx, "k", 10*time.Second)
		if out != lockimpl.OK {
			t.Fatalf("acquire %d with 4 of 5 masters up: %v %v", i, out, err)
		}
		if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
			t.Fatalf("release: %v %v", out, err)
		}
	}
	counts := rl.NodeCounts()
	if counts[0].Errors+counts[0].Timeouts != 10 || counts[1].Acquired != 10 {
		t.Fatalf("per-node counts %+v: want master 0 failing every time, master 1 acquiring", counts)
	}
}

func TestRedlockNoQuorumIsAnErrorNotContention(t *testing.T) {
	servers := composetest.Servers(t, 5)
	clients := composetest.Clients(t, servers)
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 200 * time.Millisecond})
	live := []bool{true, true, true, true, true}
	for _, i := range []int{0, 2, 4} {
		if err := servers[i].Kill(); err != nil {
			t.Fatal(err)
		}
		live[i] = false
	}
	for range 5 {
		_, out, err := rl.Acquire(context.Background(), "k", 10*time.Second)
		if out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrNoQuorum) {
			t.Fatalf("acquire with 2 of 5 masters: %v %v, want failed/no quorum", out, err)
		}
	}
	if n := keysLeft(t, clients, live, "k"); n != 0 {
		t.Fatalf("%d live masters still hold the key after failed acquisitions", n)
	}
}

func TestRedlockReleasesAfterPartialAcquisition(t *testing.T) {
	clients := composetest.Clients(t, composetest.Servers(t, 3))
	ctx := context.Background()
	// Another owner holds the key on two of three masters.
	for _, i := range []int{0, 1} {
		clients[i].Set(ctx, "k", "someone-else", time.Minute)
	}
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 200 * time.Millisecond})
	_, out, err := rl.Acquire(ctx, "k", 10*time.Second)
	if out != lockimpl.Contended {
		t.Fatalf("acquire: %v %v, want contended", out, err)
	}
	if n := clients[2].Exists(ctx, "k").Val(); n != 0 {
		t.Fatal("the master we won is still locked after the failed acquisition")
	}
	for _, i := range []int{0, 1} {
		if v := clients[i].Get(ctx, "k").Val(); v != "someone-else" {
			t.Fatalf("master %d: the other owner's key was touched (%q)", i, v)
		}
	}
}

// A master slower than the TTL must not let the client believe it holds a
// lease whose validity already ran out.
func TestRedlockSlowMasterCannotFakeValidity(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := composetest.Clients(t, servers)
	if err := servers[2].Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servers[2].Resume() })
	ttl := 150 * time.Millisecond
	// Waiting for every master with a node timeout above the TTL: quorum is
	// reached by the two fast masters, but the validity is gone by the end.
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 400 * time.Millisecond})
	start := time.Now()
	lease, out, err := rl.Acquire(context.Background(), "k", ttl)
	if out == lockimpl.OK {
		t.Fatalf("acquired with validity %v after %v, past the %v ttl", lease.Validity, time.Since(start), ttl)
	}
	if !errors.Is(err, lockimpl.ErrValidityExpired) {
		t.Fatalf("err %v, want validity expired", err)
	}
	// With fail-fast the quorum of fast masters answers in time: a valid lease.
	fast := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 400 * time.Millisecond, FailFast: true})
	lease, out, err = fast.Acquire(context.Background(), "k2", ttl)
	if out != lockimpl.OK {
		t.Fatalf("fail-fast acquire: %v %v", out, err)
	}
	if !time.Now().Before(lease.ValidUntil()) {
		t.Fatalf("fail-fast lease already invalid: valid until %v", lease.ValidUntil())
	}
}

func TestRedlockMutualExclusionOnFiveMasters(t *testing.T) {
	// Covered with 16 workers in TestMutualExclusion/redlock/5; this checks the
	// default node timeout path (ttl/100) still acquires on an idle machine.
	clients := composetest.Clients(t, composetest.Servers(t, 5))
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{})
	lease, out, err := rl.Acquire(context.Background(), "k", 10*time.Second)
	if out != lockimpl.OK {
		t.Fatalf("acquire with default options: %v %v", out, err)
	}
	if _, out, _ := rl.Acquire(context.Background(), "k", 10*time.Second); out != lockimpl.Contended {
		t.Fatalf("second acquire: %v, want contended", out)
	}
	if out, _ := rl.Release(context.Background(), lease); out != lockimpl.OK {
		t.Fatalf("release: %v", out)
	}
}

// The fan-out is parallel: five masters each 20 ms away cost about 20 ms, not 100.
func TestRedlockFansOutInParallel(t *testing.T) {
	servers := composetest.Servers(t, 5)
	clients := throughProxy(t, servers, []int{0, 1, 2, 3, 4}, func(addr string) string {
		return composetest.DelayProxy(t, addr, 20*time.Millisecond)
	})
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 2 * time.Second})
	ctx := context.Background()
	// Warm the connections so dialing is not measured.
	for _, c := range clients {
		c.Ping(ctx)
	}
	best := time.Hour
	for range 5 {
		start := time.Now()
		lease, out, err := rl.Acquire(ctx, "k", 10*time.Second)
		elapsed := time.Since(start)
		if out != lockimpl.OK {
			t.Fatalf("acquire: %v %v", out, err)
		}
		best = min(best, elapsed)
		rl.Release(ctx, lease)
	}
	// One after another would be ≥ 100 ms; a generous bound keeps a noisy
	// machine from failing the test while still catching serial calls.
	if best >= 80*time.Millisecond {
		t.Fatalf("best acquire took %v with five masters 20 ms away: the fan-out is not parallel", best)
	}
}

func TestRedlockRenewNeedsQuorum(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := composetest.Clients(t, servers)
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	lease, out, _ := rl.Acquire(ctx, "k", 10*time.Second)
	if out != lockimpl.OK {
		t.Fatal("acquire failed")
	}
	if out, err := rl.Renew(ctx, &lease, 10*time.Second); out != lockimpl.OK {
		t.Fatalf("renew: %v %v", out, err)
	}
	// The key vanishes from two masters (a restart without persistence).
	for _, i := range []int{0, 1} {
		clients[i].Del(ctx, "k")
	}
	if out, _ := rl.Renew(ctx, &lease, 10*time.Second); !out.IsLost() {
		t.Fatalf("renew with the key on 1 of 3 masters: %v, want lost", out)
	}
	// The holder of a lost lease does not release it; the renewal that just
	// extended it on master 2 must not leave it there for a TTL.
	rl.Wait()
	if n := clients[2].Exists(ctx, "k").Val(); n != 0 {
		t.Fatal("the lost lease still holds master 2")
	}
	if out, _ := rl.Release(ctx, lease); !out.IsLost() {
		t.Fatalf("release with the key on no master: %v, want lost", out)
	}
}

// With --fail-fast, a SET still on its way to a slow master must not land
// after the release and leave the key locked for a TTL. The proxy holds only
// the SET, so the release's DEL, on another connection, overtakes it: without
// the straggler being settled the key would stay on master 2.
func TestRedlockFailFastReleaseWaitsForStragglers(t *testing.T) {
	// The held-back SET's delay is what a fail-fast acquisition must not
	// wait for: half a second, far above what two local masters take even on
	// a loaded machine (at 100 ms a slow scheduler alone could reach it), and
	// well inside the node timeout, so the straggler is answered, not lost.
	const delay = 500 * time.Millisecond
	servers := composetest.Servers(t, 3)
	clients := throughProxy(t, servers, []int{2}, func(addr string) string {
		return composetest.DelayRequestsProxy(t, addr, []byte("$3\r\nset\r\n"), delay)
	})
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 10 * delay, FailFast: true})
	ctx := context.Background()
	for i := range 3 {
		key := fmt.Sprintf("k%d", i)
		start := time.Now()
		lease, out, err := rl.Acquire(ctx, key, 10*time.Second)
		if out != lockimpl.OK {
			t.Fatalf("acquire %d: %v %v", i, out, err)
		}
		if took := time.Since(start); took >= delay {
			t.Fatalf("fail-fast acquire waited %v for the held-back master", took)
		}
		if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
			t.Fatalf("release %d: %v %v", i, out, err)
		}
	}
	rl.Wait()
	direct := composetest.Client(t, servers[2])
	for i := range 3 {
		if n := direct.Exists(ctx, fmt.Sprintf("k%d", i)).Val(); n != 0 {
			t.Errorf("k%d: the held-back SET landed after the release and stayed", i)
		}
	}
}

// pausedMaster makes master i of three stop answering (SIGSTOP) until the
// returned resume is called, which the test's cleanup also does.
func pausedMaster(t *testing.T, s *compose.Server) (resume func()) {
	t.Helper()
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := s.Resume(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// A SET sent to a paused master is carried out when it resumes, after the
// release meant to remove it gave up: the release must settle that master
// once it answers, for a lease that was granted and for one that was not.
func TestRedlockSettlesAPausedMaster(t *testing.T) {
	for _, tc := range []struct {
		name    string
		granted bool
	}{{"granted lease, released", true}, {"refused acquire, given back", false}} {
		t.Run(tc.name, func(t *testing.T) {
			servers := composetest.Servers(t, 3)
			clients := composetest.Clients(t, servers)
			rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 100 * time.Millisecond})
			ctx := context.Background()
			if !tc.granted {
				// Another owner on master 0: with master 2 silent the acquire
				// cannot reach a quorum.
				clients[0].Set(ctx, "k", "someone-else", time.Minute)
			}
			// A pooled connection to master 2 already exists, so the SET is
			// written to its socket rather than stuck behind a new handshake.
			if warm, out, err := rl.Acquire(ctx, "warm", time.Minute); out != lockimpl.OK {
				t.Fatalf("warm-up acquire: %v %v", out, err)
			} else if out, err := rl.Release(ctx, warm); out != lockimpl.OK {
				t.Fatalf("warm-up release: %v %v", out, err)
			}
			resume := pausedMaster(t, servers[2])
			lease, out, err := rl.Acquire(ctx, "k", 30*time.Second)
			switch {
			case tc.granted && out != lockimpl.OK:
				t.Fatalf("acquire on 2 of 3: %v %v", out, err)
			case !tc.granted && out == lockimpl.OK:
				t.Fatal("acquire succeeded against another owner and a silent master")
			}
			if tc.granted {
				// Undecided is allowed: under load a master that is not
				// paused can miss the node timeout (CI). What this test
				// judges is that the paused master is settled.
				if out, err := rl.Release(ctx, lease); out != lockimpl.OK && out != lockimpl.Failed {
					t.Fatalf("release: %v %v", out, err)
				} else if out == lockimpl.Failed {
					t.Logf("release undecided on this loaded machine (%v); judging the settling alone", err)
				}
			}
			resume()
			rl.Wait()
			if v, err := clients[2].Get(ctx, "k").Result(); err != redis.Nil {
				t.Fatalf("master 2 holds %q (%v) after it resumed: the late SET outlived the release", v, err)
			}
			if !tc.granted && clients[0].Get(ctx, "k").Val() != "someone-else" {
				t.Fatal("the other owner's key was touched")
			}
		})
	}
}

// A SET held up in the network past the node timeout arrives after the
// release's DEL, which went on another connection: the release must still
// delete it once it has had time to land.
func TestRedlockSettlesASETHeldInTheNetwork(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := throughProxy(t, servers, []int{2}, func(addr string) string {
		return composetest.DelayRequestsProxy(t, addr, []byte("$3\r\nset\r\n"), 300*time.Millisecond)
	})
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	sent := time.Now()
	lease, out, err := rl.Acquire(ctx, "k", 10*time.Second)
	if out != lockimpl.OK {
		t.Fatalf("acquire on 2 of 3: %v %v", out, err)
	}
	if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
		t.Fatalf("release: %v %v", out, err)
	}
	rl.Wait()
	// Look only once the held-up SET has surely reached master 2.
	time.Sleep(time.Until(sent.Add(600 * time.Millisecond)))
	if n := composetest.Client(t, servers[2]).Exists(ctx, "k").Val(); n != 0 {
		t.Fatal("the held-up SET landed after the release and stayed")
	}
}

// A master whose answers come back later than the release timeout still
// carries out the DELs: settling it must not go on retrying until the TTL
// is over (a generous bound, not a timing assertion: that took the whole TTL).
func TestRedlockSettlingASlowMasterEnds(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := throughProxy(t, servers, []int{2}, func(addr string) string {
		return composetest.DelayProxy(t, addr, 2000*time.Millisecond)
	})
	// 1.2 s: under the slow master's 2 s, and room enough for the
	// fast ones to answer on a loaded machine (at 300 ms and again at 600 ms,
	// under CI's parallel scenario runs, both fast masters once missed it and
	// the release failed for a reason this test is not about).
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 1200 * time.Millisecond})
	ctx := context.Background()
	const ttl = 90 * time.Second // settling takes several of the slow master's round trips: ttl/3 stays far above them
	lease, out, err := rl.Acquire(ctx, "k", ttl)
	if out != lockimpl.OK {
		t.Fatalf("acquire on 2 of 3: %v %v", out, err)
	}
	// The release's own outcome is not what this test judges: on a loaded
	// machine a fast master can miss even a 1.2 s node timeout (CI did, at
	// 600 ms and again at 1.2 s), and the release is then undecided. What
	// must hold either way is that the slow master is settled, in time.
	if out, err := rl.Release(ctx, lease); out != lockimpl.OK {
		if out != lockimpl.Failed {
			t.Fatalf("release: %v %v", out, err)
		}
		t.Logf("release undecided on this loaded machine (%v); judging the settling alone", err)
	}
	start := time.Now()
	rl.Wait()
	took := time.Since(start)
	t.Logf("settling took %v", took)
	if took > ttl/3 {
		t.Fatalf("settling the slow master took %v, near the whole %v TTL", took, ttl)
	}
	if n := composetest.Client(t, servers[2]).Exists(ctx, "k").Val(); n != 0 {
		t.Fatal("the slow master still holds the key")
	}
}

// A renewal that starts after the lease's validity has run out must not
// succeed, even though the masters still hold the key: the holder cannot know
// it owned the key in between. It gives the key back.
func TestRedlockRenewAfterValidityIsLost(t *testing.T) {
	servers := composetest.Servers(t, 3)
	clients := composetest.Clients(t, servers)
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: 100 * time.Millisecond, DriftFactor: 0.3})
	ctx := context.Background()
	lease, out, err := rl.Acquire(ctx, "k", time.Second)
	if out != lockimpl.OK {
		t.Fatalf("acquire: %v %v", out, err)
	}
	time.Sleep(time.Until(lease.ValidUntil()) + 50*time.Millisecond)
	if out, err := rl.Renew(ctx, &lease, time.Second); !out.IsLost() {
		t.Fatalf("renew %v after validity ended: %v %v, want lost", time.Since(lease.ValidUntil()), out, err)
	}
	rl.Wait()
	if n := keysLeft(t, clients, []bool{true, true, true}, "k"); n != 0 {
		t.Fatalf("%d masters still hold the abandoned lease", n)
	}
}

// A release must not hold its worker for as long as a paused master takes to
// time out (the release timeout, at least 500 ms): it returns once a quorum
// decided, or after the node timeout, and settles the paused masters in the
// background so the key is still deleted once they resume.
func TestRedlockReleaseDoesNotWaitForAPausedMaster(t *testing.T) {
	const nodeTimeout, releaseTimeout = 250 * time.Millisecond, 500 * time.Millisecond
	for _, tc := range []struct {
		name   string
		paused []int
		want   lockimpl.Outcome
	}{
		{"quorum answers", []int{2}, lockimpl.OK},
		{"undecided at the node timeout", []int{1, 2}, lockimpl.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Up to three tries: on a loaded machine a master that is not
			// paused can miss the 250 ms node timeout (CI saw it), which
			// says nothing about the release. A release that waited for the
			// paused master fails every try.
			var failures []string
			for try := 1; try <= 3; try++ {
				why := releaseAroundPausedMasters(t, tc.paused, tc.want, nodeTimeout, releaseTimeout)
				if why == "" {
					return
				}
				failures = append(failures, fmt.Sprintf("try %d: %s", try, why))
			}
			t.Fatal(strings.Join(failures, "; "))
		})
	}
}

// releaseAroundPausedMasters acquires on three masters, pauses those given,
// releases, and says what went wrong ("" if nothing): an outcome other than
// want, or a release that took the release timeout. Whatever the release
// said, the paused masters must lose the key once they resume.
func releaseAroundPausedMasters(t *testing.T, paused []int, want lockimpl.Outcome, nodeTimeout, releaseTimeout time.Duration) string {
	t.Helper()
	servers := composetest.Servers(t, 3)
	clients := composetest.Clients(t, servers)
	rl := newRedlock(t, clients, lockimpl.RedlockOptions{NodeTimeout: nodeTimeout})
	ctx := context.Background()
	lease, out, err := rl.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK {
		return fmt.Sprintf("acquire: %v %v", out, err)
	}
	var resumes []func()
	for _, i := range paused {
		resumes = append(resumes, pausedMaster(t, servers[i]))
	}
	start := time.Now()
	out, err = rl.Release(ctx, lease)
	took := time.Since(start)
	for _, resume := range resumes {
		resume()
	}
	rl.Wait()
	for i, c := range clients {
		if n := c.Exists(ctx, "k").Val(); n != 0 {
			t.Errorf("master %d still holds the key after it resumed", i)
		}
	}
	switch {
	case out != want:
		return fmt.Sprintf("release: %v %v, want %v", out, err, want)
	case took >= releaseTimeout:
		// A paused master would have made it wait the release timeout.
		return fmt.Sprintf("release took %v with masters %v paused; want about the node timeout", took, paused)
	}
	return ""
}
