package results

import (
	"fmt"
	"slices"
	"strings"
)

// ErrorKinds are the names lockbench gives failures in Result.Errors: its
// own kinds, then the first word of the Redis error replies a lock is likely
// to meet. A reply not listed still appears under its first word.
var errorKinds = []string{
	"no_quorum", "split_vote", "validity_expired", "unreplicated", "timeout", "canceled",
	"conn_refused", "conn_reset", "eof", "client_closed", "other", "resource",
	"loading", "readonly", "noscript", "busy", "oom", "noauth", "wrongpass", "noperm",
	"masterdown", "clusterdown", "moved", "ask", "tryagain", "crossslot", "err",
}

// ErrorKinds returns the error kinds lockbench reports by name.
func ErrorKinds() []string { return slices.Clone(errorKinds) }

// knownErrorKind reports whether kind is one lockbench reports, or one the
// run itself saw.
func knownErrorKind(r *Result, kind string) bool {
	_, seen := r.Errors[kind]
	return seen || slices.Contains(errorKinds, kind)
}

// unknownErrorKind explains an errors.KIND metric naming a kind that is
// neither known nor seen: errors.bogus==0 must not pass by reading a zero.
func unknownErrorKind(r *Result, kind string) error {
	seen := sortedKeys(r.Errors)
	where := "none"
	if len(seen) > 0 {
		where = strings.Join(seen, ", ")
	}
	return fmt.Errorf("error kind %s was never seen in this run (seen: %s) and is not one lockbench reports (%s)",
		kind, where, strings.Join(errorKinds, ", "))
}
