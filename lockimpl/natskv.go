package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LockNatsKV is the name of the NATS JetStream KV lock.
const LockNatsKV = "nats-kv"

// NatsModule is the client module the NATS KV lock is built on.
const NatsModule = "github.com/nats-io/nats.go"

// DefaultNatsBucket is the KV bucket the lock's keys live in.
const DefaultNatsBucket = "lockbench"

// DefaultNatsTimeout bounds each request of the NATS KV lock unless told
// otherwise: a paused stream leader must not hold a worker for ever.
const DefaultNatsTimeout = time.Second

// DefaultNatsMarkerTTL is how long the bucket keeps the marker a released
// or expired key leaves (the bucket's LimitMarkerTTL): long enough for a
// watcher to see the key go, short enough that a run's keys leave nothing.
const DefaultNatsMarkerTTL = 5 * time.Second

// NatsKV is a lease lock on a NATS JetStream KV bucket, built on the
// per-message TTLs of NATS 2.11: an acquisition creates the key (only if
// it does not exist) with the lease as its TTL, a renewal rewrites it only
// at the revision the holder last wrote, with a fresh TTL, and a release
// purges it only at that revision. The revision of the acquisition, the
// stream's sequence number, is the fencing token: it only grows, across
// stream leaders and restarts, so a later holder always has a larger one.
type NatsKV struct {
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	subject string // "$KV.<bucket>.", which a key's subject starts with
	opts    NatsKVOptions
}

// NatsKVOptions configures the NATS KV lock.
type NatsKVOptions struct {
	// Bucket is the KV bucket; "" means DefaultNatsBucket.
	Bucket string
	// Replicas is the bucket stream's replica count: 1, or 3 on a
	// cluster of three; 0 means 1.
	Replicas int
	// MarkerTTL is how long a released or expired key's marker stays; 0
	// means DefaultNatsMarkerTTL. NATS counts it in whole seconds.
	MarkerTTL time.Duration
	// Timeout bounds each request; 0 means DefaultNatsTimeout.
	Timeout time.Duration
	// Nodes is the number of servers, for reports.
	Nodes int
}

// natsHandle is the revision the holder last wrote: renewals move it.
type natsHandle struct {
	rev uint64
}

// NewNatsKV creates the lock's bucket over js, or updates it to allow
// per-key TTLs, and returns the lock. A server older than 2.11 is refused.
func NewNatsKV(ctx context.Context, js jetstream.JetStream, opts NatsKVOptions) (*NatsKV, error) {
	if opts.Bucket == "" {
		opts.Bucket = DefaultNatsBucket
	}
	if opts.Replicas <= 0 {
		opts.Replicas = 1
	}
	if opts.MarkerTTL <= 0 {
		opts.MarkerTTL = DefaultNatsMarkerTTL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultNatsTimeout
	}
	if _, err := NatsTTLSeconds(opts.MarkerTTL); err != nil {
		return nil, fmt.Errorf("lock nats-kv: marker %w", err)
	}
	kv, err := CreateNatsBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket: opts.Bucket, Description: "lockbench's lock keys",
		// Only the latest revision of a key matters to a lock.
		History: 1, Replicas: opts.Replicas, Storage: jetstream.FileStorage,
		LimitMarkerTTL: opts.MarkerTTL,
	})
	if errors.Is(err, jetstream.ErrLimitMarkerTTLNotSupported) {
		return nil, fmt.Errorf("lock nats-kv: the server has no per-key TTLs (NATS 2.11 or later has them): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("lock nats-kv: bucket %s: %w", opts.Bucket, err)
	}
	return &NatsKV{js: js, kv: kv, subject: "$KV." + opts.Bucket + ".", opts: opts}, nil
}

// bucketTry bounds one request to create or update the bucket. A
// replicated bucket's request goes to the meta group's leader; one sent
// while the group is still settling (a cluster just started, on a busy
// host) may never be answered, so it is sent again rather than waited on
// until ctx ends (CI saw one wait out 30 s on nats:3).
const bucketTry = 5 * time.Second

// CreateNatsBucket creates or updates a JetStream key-value bucket
// (idempotent, so safe to repeat), trying again while ctx lasts after a
// try that timed out or that JetStream refused as not ready yet, and for
// up to 15 s while it cannot place the bucket's replicas. It is the one
// place that knows how a cluster just started answers: the lock and the
// topology tests create their buckets through it.
func CreateNatsBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var placementSince time.Time
	for {
		tctx, cancel := context.WithTimeout(ctx, bucketTry)
		kv, err := js.CreateOrUpdateKeyValue(tctx, cfg)
		cancel()
		if err == nil || ctx.Err() != nil {
			return kv, err
		}
		switch {
		case bucketRetryable(err):
		case placementRefused(err):
			// A peer still joining (the meta leader counted it current,
			// its stream layer not yet) refuses placement for a moment:
			// CI saw it on nats:3 through route proxies. A peer really
			// gone refuses for good, so the wait is bounded.
			if placementSince.IsZero() {
				placementSince = time.Now()
			}
			if time.Since(placementSince) > placementWait {
				return kv, err
			}
		default:
			return kv, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// placementWait bounds how long CreateNatsBucket sends again a bucket that
// JetStream could not place on enough peers.
const placementWait = 15 * time.Second

// placementRefused reports JetStream's "no suitable peers for placement"
// (err_code 10005): too few peers current for the bucket's replicas.
func placementRefused(err error) bool {
	return strings.Contains(err.Error(), "no suitable peers for placement")
}

// bucketRetryable reports whether a failed try may succeed if sent again:
// no answer in time, or JetStream saying it is not ready. A server
// without JetStream is not: it fails at once.
func bucketRetryable(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		strings.Contains(err.Error(), "temporarily unavailable")
}

// NatsJetStream connects to the servers at urls (nats://host:port, tried
// in turn) with lockbench's client settings: reconnect for ever, soon
// (a fault's server comes back, and a run must see when), and no
// reconnect buffer, so that a request made while disconnected fails at
// once instead of being sent late. close ends the connection.
func NatsJetStream(urls []string) (js jetstream.JetStream, close func(), err error) {
	// IgnoreDiscoveredServers: the URLs name every server (through its
	// proxy, when faults act there), and a server the client learnt from
	// the cluster would be reached past the proxy.
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.ReconnectBufSize(-1), nats.Name("lockbench"), nats.IgnoreDiscoveredServers(), nats.ErrorHandler(ignoreAsyncError))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", strings.Join(urls, ","), err)
	}
	js, err = jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream on %s: %w", strings.Join(urls, ","), err)
	}
	return js, nc.Close, nil
}

// ignoreAsyncError drops the connection's asynchronous errors (a broken
// pipe while a server restarts), which the client would otherwise print
// on stderr over a run's progress: every request they fail returns its
// error to the caller, and the run counts it by kind.
func ignoreAsyncError(*nats.Conn, *nats.Subscription, error) {}

// Info describes the lock: fenced by the acquisition's revision.
func (n *NatsKV) Info() Info {
	return Info{Name: LockNatsKV, Fencing: true, Nodes: n.opts.Nodes, Library: NatsModule, Version: ModuleVersion(NatsModule),
		Settings: map[string]string{
			"bucket":          n.opts.Bucket,
			"replicas":        strconv.Itoa(n.opts.Replicas),
			"marker-ttl":      n.opts.MarkerTTL.String(),
			"request-timeout": n.opts.Timeout.String(),
		}}
}

// NatsTTLSeconds is ttl in the whole seconds NATS counts message TTLs in
// (from 1 s); a ttl NATS would truncate is an error, so a run never records
// one lease while the server kept another.
func NatsTTLSeconds(ttl time.Duration) (int64, error) {
	if ttl < time.Second || ttl%time.Second != 0 {
		return 0, fmt.Errorf("ttl %v: NATS counts key TTLs in whole seconds from 1s; want 1s, 2s, …", ttl)
	}
	return int64(ttl / time.Second), nil
}

// call bounds one request by the lock's timeout.
func (n *NatsKV) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, n.opts.Timeout)
}

// Acquire makes one attempt: create key with ttl as its TTL, only if it
// does not exist (or holds a released or expired key's marker).
func (n *NatsKV) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	if _, err := NatsTTLSeconds(ttl); err != nil {
		return Lease{}, Failed, err
	}
	start := time.Now()
	token := NewToken()
	cctx, cancel := n.call(ctx)
	defer cancel()
	rev, err := n.kv.Create(cctx, natsKey(key), []byte(token), jetstream.KeyTTL(ttl))
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		return Lease{}, Contended, nil
	case err != nil:
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	}
	return Lease{Key: key, Token: token, Fence: int64(rev), Start: start, Validity: ttl,
		handle: natsHandle{rev: rev}}, OK, nil
}

func natsLease(lease Lease) (natsHandle, error) {
	h, ok := lease.handle.(natsHandle)
	if !ok {
		return natsHandle{}, fmt.Errorf("nats-kv lease of %s: %w", lease.Key, ErrForeignLease)
	}
	return h, nil
}

// Renew rewrites the key with a fresh TTL, only at the revision the holder
// last wrote (the KV client's Update cannot set a TTL, so the lock
// publishes as it would, with the TTL header). A key gone is Lost; one
// another holder wrote is Taken.
func (n *NatsKV) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	h, err := natsLease(*lease)
	if err != nil {
		return Failed, err
	}
	if _, err := NatsTTLSeconds(ttl); err != nil {
		return Failed, err
	}
	start := time.Now()
	cctx, cancel := n.call(ctx)
	defer cancel()
	msg := &nats.Msg{Subject: n.subject + natsKey(lease.Key), Data: []byte(lease.Token)}
	ack, err := n.js.PublishMsg(cctx, msg, jetstream.WithExpectLastSequencePerSubject(h.rev), jetstream.WithMsgTTL(ttl))
	switch {
	case isWrongRevision(err):
		return n.gone(cctx, *lease)
	case err != nil:
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	lease.Start, lease.Validity, lease.handle = start, ttl, natsHandle{rev: ack.Sequence}
	return OK, nil
}

// Release purges the key, only at the revision the holder last wrote; the
// purge's marker goes after the bucket's marker TTL, so nothing of the key
// is left. A key gone is Lost; one another holder wrote is Taken.
func (n *NatsKV) Release(ctx context.Context, lease Lease) (Outcome, error) {
	h, err := natsLease(lease)
	if err != nil {
		return Failed, err
	}
	cctx, cancel := n.call(ctx)
	defer cancel()
	err = n.kv.Purge(cctx, natsKey(lease.Key), jetstream.LastRevision(h.rev), jetstream.PurgeTTL(n.opts.MarkerTTL))
	switch {
	case err == nil:
		return OK, nil
	case isWrongRevision(err):
		return n.gone(cctx, lease)
	}
	return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
}

// Remaining reads key's remaining lifetime on the server: its last
// message's TTL (the Nats-TTL header its acquisition or latest renewal
// set) from the message's timestamp. The timestamp is the server's clock
// and the answer is from this host's, so it is exact only where both are
// one clock (local servers). A key whose last message is a delete or
// purge marker, or whose TTL has passed, is not present; one without a
// TTL never expires.
func (n *NatsKV) Remaining(ctx context.Context, key string) (left time.Duration, present bool, err error) {
	cctx, cancel := n.call(ctx)
	defer cancel()
	stream, err := n.js.Stream(cctx, "KV_"+n.opts.Bucket)
	if err != nil {
		return 0, false, fmt.Errorf("remaining TTL of %s: bucket %s: %w", key, n.opts.Bucket, err)
	}
	m, err := stream.GetLastMsgForSubject(cctx, n.subject+natsKey(key))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("remaining TTL of %s: %w", key, err)
	case m.Header.Get(natsKVOperation) != "" || m.Header.Get(jetstream.MarkerReasonHeader) != "":
		return 0, false, nil
	}
	raw := m.Header.Get(jetstream.MsgTTLHeader)
	if raw == "" {
		return NoExpiry, true, nil
	}
	ttl, err := parseNatsTTL(raw)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("remaining TTL of %s: %w", key, err)
	case ttl == NoExpiry:
		return NoExpiry, true, nil
	}
	left = time.Until(m.Time.Add(ttl))
	return left, left > 0, nil
}

// natsKVOperation is the header the KV client writes on a delete or purge
// marker (the jetstream package keeps its name unexported).
const natsKVOperation = "KV-Operation"

// parseNatsTTL reads a Nats-TTL header: a Go duration ("2s", as the client
// writes it) or whole seconds ("2"); "never" is no expiry.
func parseNatsTTL(raw string) (time.Duration, error) {
	if raw == "never" {
		return NoExpiry, nil
	}
	if d, err := time.ParseDuration(raw); err == nil {
		return d, nil
	}
	s, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || s < 0 {
		return 0, fmt.Errorf("Nats-TTL header %q: not a duration or whole seconds", raw)
	}
	return time.Duration(s) * time.Second, nil
}

// isWrongRevision reports whether a conditional write failed because the
// key's last revision was not the one expected.
func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// gone tells, for a holder whose revision is no longer the key's, whether
// another holder wrote the key since (Taken) or it is gone (Lost).
func (n *NatsKV) gone(ctx context.Context, lease Lease) (Outcome, error) {
	e, err := n.kv.Get(ctx, natsKey(lease.Key))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return Lost, nil
	case err != nil:
		return Lost, fmt.Errorf("%s: revision gone; whether another owner holds the key is unknown: %w", lease.Key, err)
	case string(e.Value()) != lease.Token:
		return Taken, nil
	}
	// Our token at a later revision: another renewal of this very lease
	// went first, and this one cannot say what the lease's expiry is now.
	return Failed, fmt.Errorf("%s: renewed concurrently (revision %d, not %d)", lease.Key, e.Revision(), lease.Fence)
}

// DeletePrefix purges every key starting with prefix, and nothing else; it
// returns how many it purged.
func (n *NatsKV) DeletePrefix(ctx context.Context, prefix string) (int64, error) {
	lister, err := n.kv.ListKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete %s*: list keys: %w", prefix, err)
	}
	var keys []string
	for k := range lister.Keys() {
		if key, ok := natsKeyDecode(k); ok && strings.HasPrefix(key, prefix) {
			keys = append(keys, k)
		}
	}
	var count int64
	var errs []error
	for _, k := range keys {
		if err := n.kv.Purge(ctx, k, jetstream.PurgeTTL(n.opts.MarkerTTL)); err != nil {
			errs = append(errs, err)
			continue
		}
		count++
	}
	if err := errors.Join(errs...); err != nil {
		return count, fmt.Errorf("delete %s*: %w", prefix, err)
	}
	return count, nil
}

// natsKey escapes a lock key into a KV key, which takes only letters,
// digits and - _ / = (and dots between subject tokens): every other byte,
// and = itself, becomes =XX, its hex.
func natsKey(key string) string {
	var b strings.Builder
	for i := range len(key) {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '/' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "=%02X", c)
	}
	return b.String()
}

// natsKeyDecode is natsKey's inverse; ok is false for a KV key natsKey
// never makes.
func natsKeyDecode(k string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if k[i] != '=' {
			b.WriteByte(k[i])
			continue
		}
		if i+2 >= len(k) {
			return "", false
		}
		v, err := strconv.ParseUint(k[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

// NatsErrorKind names a NATS error for the errors-by-kind counters
// ("nats_timeout", "nats_no_responders", "jetstream_<code>", …), or ""
// when err is none.
func NatsErrorKind(err error) string {
	kinds := []struct {
		err  error
		kind string
	}{
		{nats.ErrTimeout, "nats_timeout"}, {nats.ErrNoResponders, "nats_no_responders"},
		{nats.ErrConnectionClosed, "nats_connection_closed"}, {nats.ErrDisconnected, "nats_disconnected"},
		{jetstream.ErrNoStreamResponse, "nats_no_stream_response"},
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return "jetstream_" + strconv.Itoa(int(apiErr.ErrorCode))
	}
	return ""
}
