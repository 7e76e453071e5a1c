package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// WithLock returns the scenario with its lock-taking variants running lock
// (and, for a peer library, peerOptions), so the same planted failure is
// counted for the lock a user deploys; the reference mitigations (fenced,
// WAIT) stay as they are. lockbench's own Redlock settings in a recipe
// become the library's where it has them: redsync's per-try timeout is
// timeout-factor × ttl, so node-timeout becomes that factor, and fail-fast
// its fail-fast. Every variant is parsed as a run, so a lock that cannot
// run on the recipe's topology is refused before anything starts.
func (s Scenario) WithLock(lock string, peerOptions []string) (Scenario, error) {
	takes := false
	for _, v := range s.Variants {
		takes = takes || v.TakesLock
	}
	if !takes {
		return s, &plan.InputError{Flag: "lock", Msg: fmt.Sprintf("scenario %s shows a hazard of its own locks and takes no --lock", s.Name)}
	}
	out := s
	out.Base = plan.Values{}
	out.Variants = nil
	for _, v := range s.Variants {
		flags := s.Base.Clone()
		for k, val := range v.Flags {
			flags[k] = append([]string(nil), val...)
		}
		if v.TakesLock {
			old := lockOf(flags)
			if err := useLock(flags, lock, peerOptions); err != nil {
				return s, err
			}
			v.Name = renamed(v.Name, old, lock)
		}
		if _, err := plan.Expand(flags); err != nil {
			return s, fmt.Errorf("scenario %s, %s: %w", s.Name, v.Name, err)
		}
		v.Flags = flags
		out.Variants = append(out.Variants, v)
	}
	return out, nil
}

// lockOf is the lock a run's flags pick, as plan picks it.
func lockOf(v plan.Values) string {
	if l := v.Get("lock"); l != "" {
		return l
	}
	spec, err := compose.ParseSpec(v.Get("topology"))
	if err != nil {
		return lockimpl.LockSingle
	}
	return spec.DefaultLock()
}

// renamed puts lock in a variant's name: in place of the lock it named, or
// in front.
func renamed(name, old, lock string) string {
	if rest, ok := strings.CutPrefix(name, old); ok && (rest == "" || rest[0] == ' ') {
		return lock + rest
	}
	return lock + ": " + name
}

// useLock sets lock on a variant's flags, moving lockbench's Redlock
// settings to redsync's peer options.
func useLock(v plan.Values, lock string, peerOptions []string) error {
	v.Set("lock", lock)
	if lock == lockimpl.LockRedsync {
		if err := toRedsync(v); err != nil {
			return err
		}
	}
	if userLock(lock) {
		// A user's own lock talks to the masters by its own timings: the
		// recipe's settings of lockbench's Redlock client are not its.
		for _, f := range redlockClientFlags {
			delete(v, f)
		}
	}
	if len(peerOptions) > 0 {
		v.Set("peer-option", append(v["peer-option"], peerOptions...)...)
	}
	return nil
}

// redlockClientFlags are the recipe settings of lockbench's own Redlock
// client, which a peer library takes as its options and a user's lock not
// at all.
var redlockClientFlags = []string{"node-timeout", "fail-fast", "drift-factor"}

// userLock reports whether lock is a user's own: a driver (exec:), a
// definition (def:) or a Go program's (go:).
func userLock(lock string) bool {
	return lockimpl.IsDriver(lock) || lockimpl.IsDef(lock) || lockimpl.IsGo(lock)
}

// toRedsync moves the recipe's Redlock client settings to redsync's options.
func toRedsync(v plan.Values) error {
	resolved, err := plan.Resolve(v)
	if err != nil {
		return err
	}
	var opts []string
	if nt := resolved.Get("node-timeout"); nt != "0" {
		d, derr := time.ParseDuration(nt)
		ttl, terr := time.ParseDuration(resolved.Get("ttl"))
		if derr != nil || terr != nil || ttl <= 0 {
			return &plan.InputError{Flag: "node-timeout", Msg: fmt.Sprintf("%q with ttl %q: want durations", nt, resolved.Get("ttl"))}
		}
		opts = append(opts, "timeout-factor="+strconv.FormatFloat(float64(d)/float64(ttl), 'g', -1, 64))
	}
	if resolved.Get("fail-fast") == "true" {
		opts = append(opts, "fail-fast")
	}
	if df := resolved.Get("drift-factor"); df != flagDefault("drift-factor") {
		opts = append(opts, "drift-factor="+df)
	}
	for _, f := range redlockClientFlags {
		delete(v, f)
	}
	if len(opts) > 0 {
		v.Set("peer-option", append(v["peer-option"], opts...)...)
	}
	return nil
}

// flagDefault is a run flag's default value.
func flagDefault(name string) string {
	for _, f := range plan.RunFlags() {
		if f.Name == name {
			return f.Default
		}
	}
	return ""
}
