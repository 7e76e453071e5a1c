// Package history is the operation history of a run: every acquire attempt,
// renewal and release the workers made, and every enter, renewal notice,
// protected write and exit the protected resource saw, streamed with
// bounded memory to a JSON-lines file (gzip'd when its name ends in .gz),
// read back for `lockbench check`, and merged across the generators of one
// run.
package history

import (
	"fmt"
	"time"
)

// Schema names the file format; it changes when a field changes meaning.
const Schema = "lockbench-history/v1"

// Op is what one event did.
type Op uint8

// The operations of a history. The lock's calls (acquire, renew, release)
// have real call and return times, as has the lock's own report that a
// lease ended (lost); the protected resource's (enter, renewed, write,
// exit, abandon) are stamped under the resource's own order, with a per-key
// sequence number that orders them exactly.
const (
	OpAcquire Op = iota + 1
	OpRenew
	OpRelease
	OpEnter
	OpRenewed
	OpWrite
	OpExit
	OpAbandon
	// OpLost is the lock's report that a lease ended unasked at Valid (its
	// session ended: lockimpl.SessionLocker), heard by the holder at
	// Return, before its write: from Valid on the lease counts as expired.
	OpLost
)

var opNames = [...]string{OpAcquire: "acquire", OpRenew: "renew", OpRelease: "release", OpEnter: "enter",
	OpRenewed: "renewed", OpWrite: "write", OpExit: "exit", OpAbandon: "abandon", OpLost: "lost"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", o)
}

// Resource reports whether the op is one of the protected resource's.
func (o Op) Resource() bool { return o >= OpEnter && o <= OpAbandon }

// parseOp is String's inverse.
func parseOp(s string) (Op, error) { return parseOpBytes([]byte(s)) }

// Outcome is how an event ended.
type Outcome uint8

// Outcomes. The lock's calls end ok, contended, lost or failed (as the
// lock said); an enter ends ok or in an overlap of one of two causes; a write
// is accepted, rejected by fencing, or a stale write accepted.
const (
	OutOK Outcome = iota + 1
	OutContended
	OutLost
	OutFailed
	OutDoubleGrant
	OutOverrun
	OutFencingRejected
	OutStaleAccepted
)

var outcomeNames = [...]string{OutOK: "ok", OutContended: "contended", OutLost: "lost", OutFailed: "failed",
	OutDoubleGrant: "double_grant", OutOverrun: "overrun", OutFencingRejected: "fencing_rejected", OutStaleAccepted: "stale_accepted"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", o)
}

func parseOutcome(s string) (Outcome, error) { return parseOutcomeBytes([]byte(s)) }

// Event is one line of a history. Times are nanoseconds from the run's
// origin (Header.Origin), on the monotonic clock.
type Event struct {
	// Generator is the generator that made it (0 for a lone run).
	Generator int
	// Worker is the worker, within its generator.
	Worker int
	// Key is the key's index (the key is Header.KeyPrefix and the index).
	Key int
	Op  Op
	Out Outcome
	// Window says whether the event counts in the run's result: events of
	// the warm-up and of requests the run does not count are kept, since the
	// resource saw them, but not counted.
	Window bool
	// Call and Return bound the call; a resource event's Return is its stamp.
	Call, Return int64
	// Token is the lease's owner token.
	Token string
	// Fence is the lease's fencing token, 0 for none.
	Fence int64
	// Valid is the lease's validity end as the client computed it (acquire,
	// renew, enter, renewed, write); 0 when it has none.
	Valid int64
	// Granted is, on an enter, when the acquisition returned: a grant
	// before an earlier holder's Valid (less the drift allowance) is a
	// double grant.
	Granted int64
	// Seq orders the resource's events of one key.
	Seq uint64
	// Err is a failed call's error kind.
	Err string
}

// Header is a history's first line.
type Header struct {
	Schema string `json:"schema"`
	// RunID is the run's id, shared by its generators.
	RunID string `json:"run_id"`
	// Generator and Generators say which generator of how many wrote it.
	Generator  int `json:"generator"`
	Generators int `json:"generators"`
	// Origin is the wall-clock time of time 0 (RFC 3339, ns).
	Origin time.Time `json:"origin"`
	// KeyPrefix is put before every key index.
	KeyPrefix string `json:"key_prefix"`
	// Lock is the --lock value, Fencing whether its leases carry tokens.
	Lock    string `json:"lock"`
	Fencing bool   `json:"fencing"`
	// TTLNS is the lease TTL asked for.
	TTLNS int64 `json:"ttl_ns"`
	// DriftNS is the clock-drift allowance: a grant less than this before
	// the earlier lease's end is legal under drift (see DriftAllowance).
	DriftNS int64 `json:"drift_ns"`
	// Resource says where the protected resource lived ("in-process" or a
	// redacted URL).
	Resource string `json:"resource"`
	// Workers is how many workers wrote to the history (0 in a history
	// written before it was recorded): a streaming reader knows it has
	// heard from every worker once it has read an event of each.
	Workers int `json:"workers,omitempty"`
}

// Fault is a fault of the run, for annotations.
type Fault struct {
	// Spec is the --fault value, Node what it hit.
	Spec string `json:"fault"`
	Node string `json:"node,omitempty"`
	// StartNS and EndNS are from the origin (EndNS 0: instantaneous).
	StartNS int64 `json:"start_ns"`
	EndNS   int64 `json:"end_ns,omitempty"`
}

// Trailer is a history's last line: a history without one was cut short.
type Trailer struct {
	// Events is how many events the file holds.
	Events int64 `json:"events"`
	// WindowStartNS and WindowEndNS bound the measured window.
	WindowStartNS int64 `json:"window_start_ns"`
	WindowEndNS   int64 `json:"window_end_ns"`
	// StalledNS is how long workers waited for the writer in all: the
	// history's cost on the run, should the disk fall behind.
	StalledNS int64 `json:"stalled_ns"`
	// Partial is true when the run was interrupted.
	Partial bool `json:"partial"`
}

// DriftAllowance is the clock-drift allowance for a lease of ttl: 1% of the
// TTL plus 2 ms, Redlock's own. Server and client clocks may disagree by
// that much on when a lease ends, so a grant less than this before the
// earlier lease's end is not the lock's fault: the earlier holder, still
// inside, relied on its lease's last instants and is counted as an overrun.
func DriftAllowance(ttl time.Duration) time.Duration {
	return ttl/100 + 2*time.Millisecond
}
