package lockimpl_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
)

// peerCases are the peer adapters on the topologies they run on.
var peerCases = []struct {
	lock    string
	masters int
}{{"redsync", 1}, {"redsync", 3}, {"redislock", 1}}

func peerName(lock string, masters int) string { return lock + "/" + string(rune('0'+masters)) }

// newPeer builds a peer lock with the given --peer-option values over fresh
// servers. redsync's per-try timeout is timeout-factor × ttl; the tests'
// short TTLs get a factor a loaded -race machine can meet.
func newPeer(t *testing.T, lock string, masters int, specs ...string) (lockimpl.Locker, []*redis.Client) {
	t.Helper()
	if lock == "redsync" {
		specs = append(specs, "timeout-factor=0.5")
	}
	opts, err := lockimpl.ParsePeerOptions(lock, specs)
	if err != nil {
		t.Fatal(err)
	}
	clients := composetest.Clients(t, composetest.Servers(t, masters))
	l, err := lockimpl.New(lock, lockimpl.Nodes(clients...), lockimpl.Options{Peer: opts})
	if err != nil {
		t.Fatalf("new %s: %v", lock, err)
	}
	return l, clients
}

// TestPeerMutualExclusion: 16 goroutines on one key, never two inside.
func TestPeerMutualExclusion(t *testing.T) {
	for _, tc := range peerCases {
		t.Run(peerName(tc.lock, tc.masters), func(t *testing.T) {
			l, _ := newPeer(t, tc.lock, tc.masters)
			ctx := context.Background()
			policy := lockimpl.RetryPolicy{Kind: lockimpl.RetryExp, Delay: time.Millisecond, Cap: 20 * time.Millisecond, Timeout: 30 * time.Second}
			var inside, maxInside, acquired atomic.Int64
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(2, uint64(w)))
					for range 25 {
						acq := lockimpl.AcquireWithRetry(ctx, l, "mutex", 10*time.Second, policy, rng, nil)
						if acq.Outcome != lockimpl.OK {
							t.Errorf("acquire: %v %v", acq.Outcome, acq.Err)
							return
						}
						for n := inside.Add(1); ; {
							m := maxInside.Load()
							if n <= m || maxInside.CompareAndSwap(m, n) {
								break
							}
						}
						time.Sleep(50 * time.Microsecond)
						inside.Add(-1)
						acquired.Add(1)
						if out, err := l.Release(ctx, acq.Lease); out != lockimpl.OK {
							t.Errorf("release: %v %v", out, err)
						}
					}
				}()
			}
			wg.Wait()
			if maxInside.Load() != 1 {
				t.Fatalf("%d holders inside at once", maxInside.Load())
			}
			if acquired.Load() != 16*25 {
				t.Fatalf("acquired %d, want %d", acquired.Load(), 16*25)
			}
		})
	}
}

// TestPeerOwnership: a contender is refused, a non-owner's release and renew
// are refused and leave the owner's key alone, the owner's renew extends the
// key on the server and the lease, and the owner's release deletes it.
func TestPeerOwnership(t *testing.T) {
	for _, tc := range peerCases {
		t.Run(peerName(tc.lock, tc.masters), func(t *testing.T) {
			l, clients := newPeer(t, tc.lock, tc.masters)
			ctx := context.Background()
			lease, out, err := l.Acquire(ctx, "k", 2*time.Second)
			if out != lockimpl.OK {
				t.Fatalf("acquire: %v %v", out, err)
			}
			if len(lease.Token) != 32 {
				t.Errorf("token %q is not lockbench's 128-bit hex token", lease.Token)
			}
			for i, c := range clients {
				if v := c.Get(ctx, "k").Val(); v != lease.Token {
					t.Fatalf("master %d holds %q, want the lease's token %q", i, v, lease.Token)
				}
			}
			if _, out, err := l.Acquire(ctx, "k", time.Minute); out != lockimpl.Contended {
				t.Fatalf("second acquire: %v %v, want contended", out, err)
			}

			// A stranger: the same key under another token.
			stranger := lease
			stranger.Token = lockimpl.NewToken()
			out, err = l.Release(ctx, stranger)
			switch tc.lock {
			case "redsync":
				if out != lockimpl.Taken {
					t.Errorf("release by non-owner: %v %v, want taken", out, err)
				}
			case "redislock":
				// redislock releases only through the Lock its Obtain returned.
				if out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrForeignLease) {
					t.Errorf("release of a lease redislock did not issue: %v %v, want refused as foreign", out, err)
				}
			}
			if out, err := l.Renew(ctx, &stranger, time.Minute); out == lockimpl.OK {
				t.Errorf("renew by non-owner: %v %v, want refused", out, err)
			}

			before, beforeTTL := lease.ValidUntil(), clients[0].PTTL(ctx, "k").Val()
			if out, err := l.Renew(ctx, &lease, time.Minute); out != lockimpl.OK || !lease.ValidUntil().After(before) {
				t.Fatalf("renew by owner: %v %v, valid until %v (was %v)", out, err, lease.ValidUntil(), before)
			}
			if lease.Validity > time.Minute {
				t.Errorf("validity %v exceeds the renewed ttl", lease.Validity)
			}
			for i, c := range clients {
				if ttl := c.PTTL(ctx, "k").Val(); ttl <= beforeTTL || ttl > time.Minute {
					t.Errorf("master %d: PTTL %v after renewing to 1m (was %v)", i, ttl, beforeTTL)
				}
			}
			if out, err := l.Release(ctx, lease); out != lockimpl.OK {
				t.Fatalf("release by owner: %v %v", out, err)
			}
			for i, c := range clients {
				if n := c.Exists(ctx, "k").Val(); n != 0 {
					t.Errorf("master %d: key still there after release", i)
				}
			}
		})
	}
}

// TestPeerReleaseAfterExpiry: an expired lease's release is lost; once
// another holder has the key, the old holder's release and renew are
// refused and the new holder's key is untouched.
func TestPeerReleaseAfterExpiry(t *testing.T) {
	for _, tc := range peerCases {
		t.Run(peerName(tc.lock, tc.masters), func(t *testing.T) {
			l, clients := newPeer(t, tc.lock, tc.masters)
			ctx := context.Background()
			a, out, err := l.Acquire(ctx, "k", 300*time.Millisecond)
			if out != lockimpl.OK {
				t.Fatalf("acquire: %v %v", out, err)
			}
			time.Sleep(400 * time.Millisecond)
			if out, err := l.Release(ctx, a); out != lockimpl.Lost {
				t.Fatalf("release after expiry: %v %v, want lost", out, err)
			}
			a2, out, _ := l.Acquire(ctx, "k", 300*time.Millisecond)
			if out != lockimpl.OK {
				t.Fatalf("re-acquire: %v", out)
			}
			time.Sleep(400 * time.Millisecond)
			b, out, _ := l.Acquire(ctx, "k", time.Minute)
			if out != lockimpl.OK {
				t.Fatalf("B acquire: %v", out)
			}
			if out, err := l.Release(ctx, a2); !out.IsLost() {
				t.Fatalf("release of a key now held by another: %v %v, want refused as lost or taken", out, err)
			}
			if out, err := l.Renew(ctx, &a2, time.Minute); !out.IsLost() {
				t.Fatalf("renew of a key now held by another: %v %v, want refused as lost", out, err)
			}
			for i, c := range clients {
				if v := c.Get(ctx, "k").Val(); v != b.Token {
					t.Fatalf("master %d: the other holder's lock was touched: %q", i, v)
				}
			}
		})
	}
}

// setCalls reads how many SETs each server has run (INFO commandstats
// counts those inside scripts too).
func setCalls(t *testing.T, clients []*redis.Client) []int64 {
	t.Helper()
	out := make([]int64, len(clients))
	for i, c := range clients {
		s, err := compose.ReadServerStats(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s.Calls["set"]
	}
	return out
}

// TestPeerOneAttempt: by default one Acquire of a held key is one SET per
// master, as lockbench counts one attempt; with tries=N the library makes N
// inside what lockbench sees as one attempt.
func TestPeerOneAttempt(t *testing.T) {
	for _, tc := range peerCases {
		for _, tries := range []int{1, 3} {
			t.Run(peerName(tc.lock, tc.masters)+"/tries="+string(rune('0'+tries)), func(t *testing.T) {
				var specs []string
				if tries > 1 {
					specs = []string{"tries=3", "retry-delay=1ms"}
				}
				l, clients := newPeer(t, tc.lock, tc.masters, specs...)
				ctx := context.Background()
				if _, out, err := l.Acquire(ctx, "held", time.Minute); out != lockimpl.OK {
					t.Fatalf("holder: %v %v", out, err)
				}
				before := setCalls(t, clients)
				attempts := 0
				acq := lockimpl.AcquireWithRetry(ctx, l, "held", time.Minute, lockimpl.RetryPolicy{Kind: lockimpl.RetryNone}, nil,
					func(lockimpl.Attempt) { attempts++ })
				after := setCalls(t, clients)
				if acq.Outcome != lockimpl.Contended || attempts != 1 {
					t.Fatalf("contended acquire: %v (%v) in %d attempts, want contended in 1", acq.Outcome, acq.Err, attempts)
				}
				for i := range clients {
					if d := after[i] - before[i]; d != int64(tries) {
						t.Errorf("master %d ran %d SETs for one acquire with tries=%d", i, d, tries)
					}
				}
			})
		}
	}
}

// TestPeerInfo: the result names the library and the settings it ran with.
func TestPeerInfo(t *testing.T) {
	l, _ := newPeer(t, "redsync", 1, "tries=4")
	info := l.Info()
	if info.Library != lockimpl.RedsyncModule || info.Version == "" || info.Settings["tries"] != "4" || info.Defaults["tries"] != "32" {
		t.Fatalf("info %+v", info)
	}
	if info.Settings["timeout-factor"] != "0.5" || info.Defaults["timeout-factor"] != "0.05" {
		t.Fatalf("settings %v, defaults %v", info.Settings, info.Defaults)
	}
	r, _ := newPeer(t, "redislock", 1)
	if info := r.Info(); info.Library != lockimpl.RedislockModule || info.Fencing || info.Nodes != 1 {
		t.Fatalf("redislock info %+v", info)
	}
}

// TestPeerRefusesTopologies: redislock needs one server.
func TestPeerRefusesTopologies(t *testing.T) {
	clients := []*redis.Client{redis.NewClient(&redis.Options{}), redis.NewClient(&redis.Options{})}
	if _, err := lockimpl.New("redislock", lockimpl.Nodes(clients...), lockimpl.Options{}); err == nil {
		t.Error("redislock on two masters accepted")
	}
	if _, err := lockimpl.New("redsync", nil, lockimpl.Options{}); err == nil {
		t.Error("redsync without masters accepted")
	}
}
