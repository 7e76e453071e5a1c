package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// LockEtcd is the name of the etcd lock.
const LockEtcd = "etcd"

// EtcdModule is the client module the etcd lock is built on.
const EtcdModule = "go.etcd.io/etcd/client/v3"

// Etcd is a lease lock on etcd: each acquisition grants a lease of the TTL
// and creates the key under it in one transaction, only if the key does not
// exist (create revision 0). The key's create revision is the fencing token:
// etcd's revision counter only grows, across leaders and restarts, so a later
// holder of a key always has a larger one.
//
// Release revokes the lease, which deletes the key only if it is still
// attached to that lease, so it can never delete another holder's key; the
// same single RPC gives the lease's bookkeeping back to the server.
type Etcd struct {
	c       *clientv3.Client
	nodes   int
	timeout time.Duration
}

// DefaultEtcdTimeout bounds each request of the etcd lock unless told
// otherwise. Without a bound, a request a member forwarded to a leader that
// just died waits for the server's own request timeout (7 s with etcd's
// default election timeout) and the worker with it.
const DefaultEtcdTimeout = time.Second

// etcdHandle is the lease behind one acquisition.
type etcdHandle struct {
	id clientv3.LeaseID
}

// NewEtcd returns the etcd lock over client, which talks to nodes members;
// each request is bounded by timeout (0: DefaultEtcdTimeout).
func NewEtcd(c *clientv3.Client, nodes int, timeout time.Duration) *Etcd {
	if timeout <= 0 {
		timeout = DefaultEtcdTimeout
	}
	return &Etcd{c: c, nodes: nodes, timeout: timeout}
}

// call bounds one request by the lock's timeout.
func (e *Etcd) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout)
}

// Info describes the lock: fenced by the key's create revision.
func (e *Etcd) Info() Info {
	return Info{Name: LockEtcd, Fencing: true, Nodes: e.nodes, Library: EtcdModule, Version: ModuleVersion(EtcdModule),
		Settings: map[string]string{"request-timeout": e.timeout.String()}}
}

// EtcdTiming is a local etcd member's heartbeat interval and election
// timeout, which also decide the shortest lease it grants (MinTTL).
type EtcdTiming struct {
	Heartbeat, Election time.Duration
}

// MinTTL is the shortest lease a member at t grants: etcd raises a shorter
// one to 1.5 election timeouts counted in heartbeat ticks, rounded up to
// whole seconds.
func (t EtcdTiming) MinTTL() time.Duration {
	ticks := t.Election / t.Heartbeat
	floor := (3 * ticks / 2) * t.Heartbeat
	return (floor + time.Second - 1).Truncate(time.Second)
}

// EtcdLocalTiming is the timing of the local members of etcd:N (compose
// starts them with it). Clusters keep etcd's defaults, 100 ms heartbeats
// and a 1 s election timeout, which the failover scenarios measure; a lone
// member has no peer to suspect or elect with, so it runs at 50 ms and
// 500 ms, which halves its lease floor to 1 s and keeps renewal-check's
// etcd runs as short as NATS's and ZooKeeper's.
func EtcdLocalTiming(members int) EtcdTiming {
	if members == 1 {
		return EtcdTiming{Heartbeat: 50 * time.Millisecond, Election: 500 * time.Millisecond}
	}
	return EtcdTiming{Heartbeat: 100 * time.Millisecond, Election: time.Second}
}

// EtcdLocalMinTTL is the shortest lease a local etcd:N of the given
// members grants, from its EtcdLocalTiming: 2 s on a cluster, 1 s on a
// lone member. The etcd lock's descriptor carries both (LocalMinTTL,
// LoneMinTTL).
func EtcdLocalMinTTL(members int) time.Duration { return EtcdLocalTiming(members).MinTTL() }

// EtcdTTLSeconds is ttl in etcd's whole seconds; a TTL etcd would round is
// an error, so a run never records one TTL while the server used another.
func EtcdTTLSeconds(ttl time.Duration) (int64, error) {
	if ttl < time.Second || ttl%time.Second != 0 {
		return 0, fmt.Errorf("ttl %v: etcd leases count in whole seconds; want 1s, 2s, …", ttl)
	}
	return int64(ttl / time.Second), nil
}

// CheckTTL grants (and revokes) one lease of ttl and refuses a ttl the
// server raises to its minimum (⌈1.5 × election timeout⌉, 2 s with etcd's
// defaults) instead of granting as asked.
func (e *Etcd) CheckTTL(ctx context.Context, ttl time.Duration) error {
	secs, err := EtcdTTLSeconds(ttl)
	if err != nil {
		return err
	}
	g, err := e.c.Grant(ctx, secs)
	if err != nil {
		return fmt.Errorf("grant a %ds lease: %w", secs, err)
	}
	// A probe lease that cannot be revoked expires by itself within secs:
	// nothing is held by it, so its revoke's failure is not the run's.
	_, _ = e.c.Revoke(ctx, g.ID)
	if g.TTL != secs {
		return fmt.Errorf("ttl %v: the etcd server grants at least %ds (its minimum lease TTL follows its election timeout); want --ttl %ds or more", ttl, g.TTL, g.TTL)
	}
	return nil
}

// Acquire makes one attempt at key: grant a lease, then create the key under
// it if it does not exist. A contended attempt revokes the unused lease.
func (e *Etcd) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	secs, err := EtcdTTLSeconds(ttl)
	if err != nil {
		return Lease{}, Failed, err
	}
	start := time.Now()
	gctx, cancel := e.call(ctx)
	g, err := e.c.Grant(gctx, secs)
	cancel()
	if err != nil {
		return Lease{}, Failed, fmt.Errorf("acquire %s: grant lease: %w", key, err)
	}
	token := NewToken()
	tctx, cancel := e.call(ctx)
	defer cancel()
	resp, err := e.c.Txn(tctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, token, clientv3.WithLease(g.ID))).
		Commit()
	if err != nil || !resp.Succeeded {
		// The transaction may have been applied though its answer was lost:
		// revoking the lease then deletes the key with it, so no orphan
		// blocks the key for a TTL.
		rctx, cancel := e.call(context.WithoutCancel(ctx))
		_, rerr := e.c.Revoke(rctx, g.ID)
		cancel()
		if err != nil {
			return Lease{}, Failed, fmt.Errorf("acquire %s: %w%s", key, err, errSuffix("revoke", ignoreNotFound(rerr)))
		}
		return Lease{}, Contended, nil
	}
	return Lease{Key: key, Token: token, Fence: resp.Header.Revision, Start: start, Validity: ttl,
		handle: etcdHandle{id: g.ID}}, OK, nil
}

func ignoreNotFound(err error) error {
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return nil
	}
	return err
}

func etcdLease(lease Lease) (etcdHandle, error) {
	h, ok := lease.handle.(etcdHandle)
	if !ok {
		return etcdHandle{}, fmt.Errorf("etcd lease of %s: %w", lease.Key, ErrForeignLease)
	}
	return h, nil
}

// Renew keeps the lease alive once (KeepAliveOnce): etcd renews it to the
// TTL it was granted with, so ttl must be that TTL. A lease the server no
// longer has is Lost.
func (e *Etcd) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	h, err := etcdLease(*lease)
	if err != nil {
		return Failed, err
	}
	start := time.Now()
	kctx, cancel := e.call(ctx)
	defer cancel()
	resp, err := e.c.KeepAliveOnce(kctx, h.id)
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return Lost, nil
	case err != nil:
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	lease.Start, lease.Validity = start, min(ttl, time.Duration(resp.TTL)*time.Second)
	return OK, nil
}

// Release revokes the lease, deleting the key only if it is still attached
// to it. A lease already gone is Lost, or Taken when another holder has the
// key by now.
func (e *Etcd) Release(ctx context.Context, lease Lease) (Outcome, error) {
	h, err := etcdLease(lease)
	if err != nil {
		return Failed, err
	}
	rctx, cancel := e.call(ctx)
	defer cancel()
	_, err = e.c.Revoke(rctx, h.id)
	switch {
	case err == nil:
		return OK, nil
	case !errors.Is(err, rpctypes.ErrLeaseNotFound):
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	}
	// The lease is gone, so the release is lost whatever the look-up says;
	// it only tells a key now held by another owner (taken) from none.
	g, err := e.c.Get(rctx, lease.Key, clientv3.WithKeysOnly())
	if err != nil {
		return Lost, fmt.Errorf("release %s: lease gone; whether another owner holds the key is unknown: %w", lease.Key, err)
	}
	if len(g.Kvs) > 0 {
		return Taken, nil
	}
	return Lost, nil
}

// DeletePrefix deletes every key under prefix, and nothing else; it returns
// how many it deleted.
func (e *Etcd) DeletePrefix(ctx context.Context, prefix string) (int64, error) {
	resp, err := e.c.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("delete %s*: %w", prefix, err)
	}
	return resp.Deleted, nil
}

// etcdErrorKind names an etcd or gRPC error for the errors-by-kind
// counters ("no_leader", "unavailable"), or "" when err is neither.
func etcdErrorKind(err error) string {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		d := strings.TrimPrefix(ee.Error(), "etcdserver: ")
		d, _, _ = strings.Cut(d, ",") // "request timed out, possibly due to …"
		return strings.ReplaceAll(strings.ToLower(d), " ", "_")
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.OK && s.Code() != codes.Unknown {
		return strings.ToLower(s.Code().String())
	}
	return ""
}
