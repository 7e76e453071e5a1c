// Package lockimpl holds the Locker contract and its Redis implementations:
// the single-instance lease lock, the fenced lock, Redlock over N masters and
// the deliberately unsafe naive lock kept to measure its hazard, and adapters
// that drive the locks people deploy (redsync, redislock) through the same
// contract, and the etcd lease lock (etcd.go) as the consensus baseline.
package lockimpl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"time"
)

// Outcome is the typed result of one lock operation. Contended is not an error:
// a benchmark must be able to tell "someone else holds it" from "the network failed".
type Outcome uint8

const (
	// OK means the operation did what was asked: acquired, renewed or released.
	OK Outcome = iota
	// Contended means another owner holds the key (acquire only).
	Contended
	// Lost means our token is gone because the key no longer exists (expired).
	Lost
	// Taken means the key now holds another owner's token.
	Taken
	// Failed means the operation could not be decided: network, timeout, no quorum.
	Failed
)

// String names the outcome as it appears in results.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Contended:
		return "contended"
	case Lost:
		return "lost"
	case Taken:
		return "taken"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// IsLost reports whether the caller no longer owns the lease.
func (o Outcome) IsLost() bool { return o == Lost || o == Taken }

// Lease is what a successful acquisition hands its holder.
type Lease struct {
	// Key is the locked key.
	Key string
	// Token is the owner's random token (128 bits, hex).
	Token string
	// Fence is the fencing token, or 0 for locks that have none.
	Fence int64
	// Start is when the attempt (or renewal) that set the current expiry began;
	// validity counts from here because the server's clock started no earlier.
	Start time.Time
	// Validity is how long after Start the holder may assume it still owns the key.
	Validity time.Duration
	// handle is a peer library's own object for this lease (redsync's Mutex,
	// redislock's Lock): those libraries renew and release through it.
	handle any
}

// ValidUntil is the instant after which the holder must assume the lease is gone.
func (l Lease) ValidUntil() time.Time { return l.Start.Add(l.Validity) }

// Info describes a lock implementation for reports.
type Info struct {
	// Name is the lock's name as given to --lock.
	Name string `json:"name"`
	// Fencing is true when leases carry fencing tokens.
	Fencing bool `json:"fencing"`
	// Unsafe is true for locks kept only to measure a known hazard.
	Unsafe bool `json:"unsafe"`
	// Nodes is the number of Redis masters the lock talks to.
	Nodes int `json:"nodes"`
	// Library is the Go module a peer lock drives, "" for lockbench's own locks.
	Library string `json:"library,omitempty"`
	// Version is that module's version as linked into this binary.
	Version string `json:"version,omitempty"`
	// Settings are the library settings the lock was built with, by the
	// names --peer-option takes.
	Settings map[string]string `json:"settings,omitempty"`
	// Defaults are the library's own defaults for the same settings.
	Defaults map[string]string `json:"library_defaults,omitempty"`
}

// Locker acquires, renews and releases leases on keys. Implementations are safe
// for concurrent use by many goroutines.
type Locker interface {
	// Acquire makes one attempt to take key for ttl.
	Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error)
	// Renew extends the lease to ttl from now, only while the caller still owns it;
	// on OK the lease's Start and Validity are updated in place.
	Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error)
	// Release gives the key up, only while the caller still owns it.
	Release(ctx context.Context, lease Lease) (Outcome, error)
	// Info describes the implementation.
	Info() Info
}

// SessionLocker is a Locker whose leases live in a session of its client
// (ZooKeeper's): the service can end the session, and every lease in it,
// without any call of the holders', who learn it only if they ask.
type SessionLocker interface {
	Locker
	// LeaseEnded reports when lease ended with its session, as the lock
	// learnt it, and false while the lock knows of no end.
	LeaseEnded(lease Lease) (time.Time, bool)
}

// ErrNoQuorum is returned when too few masters answered for a quorum to be possible.
var ErrNoQuorum = errors.New("no quorum")

// ErrSplitVote is an ErrNoQuorum whose quorum was out of reach with at
// least one master already held by another holder: contenders split the
// votes (with a master that failed or answered late), so the failure is
// contention's as much as the masters'.
var ErrSplitVote = fmt.Errorf("%w: split vote", ErrNoQuorum)

// ErrValidityExpired is returned when a quorum was reached but took longer than the TTL
// allows, so the lease would already be invalid.
var ErrValidityExpired = errors.New("validity expired before quorum")

// ErrForeignLease is returned when a peer lock is handed a lease it did not
// issue (its token is not the one the library's lock object holds), for a
// library that can act only through that object.
var ErrForeignLease = errors.New("lease not issued by this lock")

// NewToken returns a fresh 128-bit owner token from crypto/rand, hex encoded.
func NewToken() string {
	var b [16]byte
	// crypto/rand.Read never returns an error on supported platforms (Go 1.24+).
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tokenSource makes owner tokens like NewToken's (128 bits, hex) from
// ChaCha8 generators, each seeded from crypto/rand: as unpredictable, for a
// fraction of a crypto/rand read's cost, which was a twentieth of a
// pipelined acquisition's client CPU. Its zero value is ready; it is safe
// for concurrent use (a generator serves one caller at a time).
type tokenSource struct{ gens sync.Pool }

func (t *tokenSource) token() string {
	g, _ := t.gens.Get().(*mrand.ChaCha8)
	if g == nil {
		var seed [32]byte
		_, _ = rand.Read(seed[:])
		g = mrand.NewChaCha8(seed)
	}
	var b [16]byte
	_, _ = g.Read(b[:])
	t.gens.Put(g)
	// Encoded on the stack, so the string is the token's one allocation
	// (hex.EncodeToString makes a buffer, then copies it into the string).
	var text [32]byte
	hex.Encode(text[:], b[:])
	return string(text[:])
}

// ErrorKind names an error for the errors-by-kind counters, so that results
// group failures by cause without keeping every message.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	cause := causeOf(err)
	switch {
	case errors.Is(err, ErrNoRenewal):
		return "no_renewal"
	case errors.Is(err, ErrSplitVote):
		return "split_vote"
	case errors.Is(err, ErrNoQuorum):
		return "no_quorum"
	case errors.Is(err, ErrValidityExpired):
		return "validity_expired"
	case errors.Is(err, ErrUnreplicated):
		return "unreplicated"
	case errors.Is(err, ErrForeignLease):
		return "foreign_lease"
	case errors.Is(err, ErrDriverCrashed):
		return "driver_crashed"
	case errors.As(err, new(*DriverError)):
		return "driver"
	case cause != nil:
		// A network error kept from being retried (compose.SentError).
		return ErrorKind(cause)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case isConnRefused(err):
		return "conn_refused"
	}
	if kind := backendErrorKind(err); kind != "" {
		return kind
	}
	return classifyRedisError(err)
}

// backendErrorKind is the first name a registered backend's classifier
// (lockBackends) gives err, or "" when none knows it.
func backendErrorKind(err error) string {
	for _, b := range lockBackends() {
		if b.errorKind == nil {
			continue
		}
		if kind := b.errorKind(err); kind != "" {
			return kind
		}
	}
	return ""
}
