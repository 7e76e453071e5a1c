package lockimpl_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/redis/go-redis/v9"
)

// quorumDefName is the --lock name of the shipped quorum definition.
func quorumDefName(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("defs", "redlock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return lockimpl.DefPrefix + abs
}

// newQuorumDef builds the quorum definition over n fresh masters.
func newQuorumDef(t *testing.T, n int) (lockimpl.Locker, []*compose.Server, []*redis.Client) {
	t.Helper()
	servers := composetest.Servers(t, n)
	clients := composetest.Clients(t, servers)
	return quorumDefOver(t, clients), servers, clients
}

// quorumDefOver builds one holder of the quorum definition over clients.
func quorumDefOver(t *testing.T, clients []*redis.Client) lockimpl.Locker {
	t.Helper()
	l, err := lockimpl.New(quorumDefName(t), lockimpl.Nodes(clients...),
		lockimpl.Options{Redlock: lockimpl.RedlockOptions{NodeTimeout: 250 * time.Millisecond}})
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	if c, ok := l.(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return l
}

// holders counts the live masters whose key holds token.
func holders(clients []*redis.Client, live []bool, key, token string) int {
	n := 0
	for i, c := range clients {
		if live[i] && c.Get(context.Background(), key).Val() == token {
			n++
		}
	}
	return n
}

// TestDefQuorumOnRedlock3: the quorum definition on three masters grants,
// writes its token on every master, renews on every master, and its release
// deletes the key on every master; with one master down it still grants
// and releases; with two down it fails for want of a quorum (an error, not
// contention) and leaves no key behind.
func TestDefQuorumOnRedlock3(t *testing.T) {
	name := quorumDefName(t)
	if d, ok := lockimpl.Describe(name); !ok || !d.Quorum || d.Pipelinable || !d.Renewable {
		t.Fatalf("Describe(%s) = %+v, %v; want a renewable quorum lock, not pipelinable", name, d, ok)
	}
	l, servers, clients := newQuorumDef(t, 3)
	ctx := context.Background()
	live := []bool{true, true, true}
	lease, out, err := l.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire: %v %v", out, err)
	}
	if lease.Validity <= 0 || lease.Validity >= time.Minute {
		t.Errorf("validity %v; want below the TTL by elapsed and drift, and positive", lease.Validity)
	}
	if n := holders(clients, live, "k", lease.Token); n != 3 {
		t.Errorf("%d of 3 masters hold the token; want all", n)
	}
	if out, err := l.Renew(ctx, &lease, 2*time.Minute); out != lockimpl.OK || err != nil {
		t.Fatalf("renew: %v %v", out, err)
	}
	for i, c := range clients {
		if pttl := c.PTTL(ctx, "k").Val(); pttl <= time.Minute {
			t.Errorf("master %d: pttl after renew %v; want above 1m", i, pttl)
		}
	}
	if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v %v", out, err)
	}
	if n := keysLeft(t, clients, live, "k"); n != 0 {
		t.Fatalf("%d masters still hold the key after release; want none", n)
	}
	if out, err := l.Release(ctx, lease); !out.IsLost() || err != nil {
		t.Errorf("second release: %v %v; want lost", out, err)
	}

	if err := servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	live[0] = false
	for i := range 3 {
		lease, out, err := l.Acquire(ctx, "k", time.Minute)
		if out != lockimpl.OK || err != nil {
			t.Fatalf("acquire %d with 2 of 3 masters up: %v %v", i, out, err)
		}
		if n := holders(clients, live, "k", lease.Token); n != 2 {
			t.Errorf("%d live masters hold the token; want 2", n)
		}
		if out, err := l.Release(ctx, lease); out != lockimpl.OK || err != nil {
			t.Fatalf("release with 2 of 3 masters up: %v %v", out, err)
		}
		if n := keysLeft(t, clients, live, "k"); n != 0 {
			t.Fatalf("%d live masters still hold the key after release", n)
		}
	}

	if err := servers[1].Kill(); err != nil {
		t.Fatal(err)
	}
	live[1] = false
	for range 3 {
		_, out, err := l.Acquire(ctx, "k", time.Minute)
		if out != lockimpl.Failed || !errors.Is(err, lockimpl.ErrNoQuorum) {
			t.Fatalf("acquire with 1 of 3 masters up: %v %v; want failed, no quorum", out, err)
		}
	}
	if n := keysLeft(t, clients, live, "k"); n != 0 {
		t.Fatalf("the live master still holds the key after failed acquisitions")
	}
}

// TestDefQuorumContention: two holders of the quorum definition over the
// same three masters exclude each other; a key planted by another owner on
// one master still leaves a majority to take, on two it is contention, and
// the master the refused acquire did take is given back.
func TestDefQuorumContention(t *testing.T) {
	a, _, clients := newQuorumDef(t, 3)
	b := quorumDefOver(t, clients)
	ctx := context.Background()
	live := []bool{true, true, true}
	lease, out, err := a.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("a acquires: %v %v", out, err)
	}
	if _, out, err := b.Acquire(ctx, "k", time.Minute); out != lockimpl.Contended || err != nil {
		t.Fatalf("b acquires while a holds: %v %v; want contended", out, err)
	}
	if n := holders(clients, live, "k", lease.Token); n != 3 {
		t.Errorf("b's refused acquire disturbed a's key: %d of 3 masters hold a's token", n)
	}
	if out, err := b.Release(ctx, lockimpl.Lease{Key: "k", Token: "not-b", Validity: time.Minute}); out != lockimpl.Taken || err != nil {
		t.Errorf("b releases a's key with another token: %v %v; want taken", out, err)
	}
	if out, err := a.Release(ctx, lease); out != lockimpl.OK || err != nil {
		t.Fatalf("a releases: %v %v", out, err)
	}
	lb, out, err := b.Acquire(ctx, "k", time.Minute)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("b acquires after a released: %v %v", out, err)
	}
	if out, err := b.Release(ctx, lb); out != lockimpl.OK || err != nil {
		t.Fatalf("b releases: %v %v", out, err)
	}

	// Planted: another owner on one master leaves two, a majority.
	clients[0].Set(ctx, "p", "other", time.Minute)
	lp, out, err := a.Acquire(ctx, "p", time.Minute)
	if out != lockimpl.OK || err != nil {
		t.Fatalf("acquire with 1 of 3 masters held by another: %v %v; want OK", out, err)
	}
	if n := holders(clients, live, "p", lp.Token); n != 2 {
		t.Errorf("%d masters hold the token; want the 2 free ones", n)
	}
	if out, err := a.Release(ctx, lp); out != lockimpl.OK || err != nil {
		t.Fatalf("release: %v %v", out, err)
	}
	if v := clients[0].Get(ctx, "p").Val(); v != "other" {
		t.Errorf("release touched another owner's key: %q", v)
	}
	// Planted on two: contention, and the third master is given back.
	clients[1].Set(ctx, "p", "other", time.Minute)
	if _, out, err := a.Acquire(ctx, "p", time.Minute); out != lockimpl.Contended || err != nil {
		t.Fatalf("acquire with 2 of 3 masters held by another: %v %v; want contended", out, err)
	}
	if n := clients[2].Exists(ctx, "p").Val(); n != 0 {
		t.Errorf("the master a refused acquire took still holds the key; want it given back")
	}
}
