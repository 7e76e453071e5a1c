package lockimpl

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PeerOptions are the settings of a peer library's lock (redsync,
// redislock), as --peer-option gives them. ParsePeerOptions fills in every
// setting, so what a result records is what the library was called with.
type PeerOptions struct {
	// Tries is how many attempts the library makes inside one Acquire, with
	// its own delay between them. lockbench's default is 1, so that its retry
	// policy and attempt counters stay in charge; more hides the library's
	// retries inside one recorded attempt, as an application calling it sees.
	Tries int
	// RetryDelay is the library's wait between its tries; 0 keeps redsync's
	// default (random in [50ms, 250ms)). Only used with Tries > 1.
	RetryDelay time.Duration
	// DriftFactor is redsync's clock-drift allowance as a share of the
	// expiry: validity = expiry − elapsed − expiry × factor.
	DriftFactor float64
	// TimeoutFactor is redsync's per-try timeout as a share of the expiry.
	TimeoutFactor float64
	// FailFast makes redsync return once a quorum is reached or lost.
	FailFast bool
	// SetNXOnExtend makes redsync's extend set the key again where it is gone.
	SetNXOnExtend bool
	// ShufflePools makes redsync visit its masters in a random order per mutex.
	ShufflePools bool
	// Metadata is appended to redislock's token in the stored value.
	Metadata string
}

// The peer locks, as --lock names them.
const (
	LockRedsync   = "redsync"
	LockRedislock = "redislock"
)

// redsync's own defaults in v4 (redsync.go, NewMutex), shown beside the
// settings a run used. Its default tries (32) is the one lockbench replaces.
const (
	redsyncDefaultTries         = 32
	redsyncDefaultDriftFactor   = 0.01
	redsyncDefaultTimeoutFactor = 0.05
	redsyncDefaultRetryDelay    = "random in [50ms, 250ms)"
)

// Bounds on user-given settings, so a typo cannot stall a run for hours.
const (
	maxPeerTries    = 1000
	maxRetryDelay   = time.Minute
	maxMetadataSize = 4096
)

// peerOption is one setting --peer-option accepts for a lock.
type peerOption struct {
	key string
	// value is what the option takes, for help; "" for a switch.
	value string
	set   func(o *PeerOptions, v string) error
}

func redsyncOptions() []peerOption {
	return []peerOption{
		{"tries", "N", func(o *PeerOptions, v string) (err error) { o.Tries, err = parseTries(v); return }},
		{"retry-delay", "DURATION", func(o *PeerOptions, v string) (err error) { o.RetryDelay, err = parseRetryDelay(v); return }},
		{"drift-factor", "F", func(o *PeerOptions, v string) (err error) {
			o.DriftFactor, err = parseFactor(v, 0, true, "0 ≤ F < 1 (validity = expiry − elapsed − expiry × F)")
			return
		}},
		{"timeout-factor", "F", func(o *PeerOptions, v string) (err error) {
			o.TimeoutFactor, err = parseFactor(v, 0, false, "0 < F ≤ 1 (each try waits at most expiry × F for its masters)")
			return
		}},
		{"fail-fast", "", func(o *PeerOptions, v string) (err error) { o.FailFast, err = parseSwitch(v); return }},
		{"set-nx-on-extend", "", func(o *PeerOptions, v string) (err error) { o.SetNXOnExtend, err = parseSwitch(v); return }},
		{"shuffle-pools", "", func(o *PeerOptions, v string) (err error) { o.ShufflePools, err = parseSwitch(v); return }},
	}
}

func redislockOptions() []peerOption {
	return []peerOption{
		{"tries", "N", func(o *PeerOptions, v string) (err error) { o.Tries, err = parseTries(v); return }},
		{"retry-delay", "DURATION", func(o *PeerOptions, v string) (err error) { o.RetryDelay, err = parseRetryDelay(v); return }},
		{"metadata", "TEXT", func(o *PeerOptions, v string) error {
			if len(v) > maxMetadataSize {
				return fmt.Errorf("%d bytes: want at most %d", len(v), maxMetadataSize)
			}
			o.Metadata = v
			return nil
		}},
	}
}

// optionsOf lists the options lock accepts; nil for locks that take none.
func optionsOf(lock string) []peerOption {
	switch lock {
	case LockRedsync:
		return redsyncOptions()
	case LockRedislock:
		return redislockOptions()
	}
	return nil
}

// misplaced explains options users reach for that a lock does not have.
func misplaced(lock, key string) string {
	switch {
	case key == "expiry-factor" && lock == LockRedsync:
		return "redsync has no expiry factor: its expiry is --ttl, and each try's timeout is timeout-factor × expiry (default 0.05)"
	case key == "token":
		return "the owner token is lockbench's own 128-bit random token on every lock, so results compare like with like"
	case key == "expiry" || key == "ttl":
		return "the expiry is --ttl"
	}
	for _, other := range []string{LockRedsync, LockRedislock} {
		if other == lock {
			continue
		}
		for _, o := range optionsOf(other) {
			if o.key == key {
				return fmt.Sprintf("it is %s's, not %s's", other, lock)
			}
		}
	}
	return ""
}

// PeerOptionsHelp lists what --peer-option accepts for lock.
func PeerOptionsHelp(lock string) string {
	var parts []string
	for _, o := range optionsOf(lock) {
		if o.value == "" {
			parts = append(parts, o.key)
		} else {
			parts = append(parts, o.key+"="+o.value)
		}
	}
	return strings.Join(parts, ", ")
}

// DefaultPeerOptions are the settings lock runs with when none are given:
// the library's own defaults, except one try per Acquire.
func DefaultPeerOptions(lock string) PeerOptions {
	switch lock {
	case LockRedsync:
		return PeerOptions{Tries: 1, DriftFactor: redsyncDefaultDriftFactor, TimeoutFactor: redsyncDefaultTimeoutFactor}
	case LockRedislock:
		return PeerOptions{Tries: 1}
	}
	return PeerOptions{}
}

// ParsePeerOptions reads --peer-option values (KEY=VALUE, or KEY for a
// switch) for lock, over its defaults. It refuses an option the lock does
// not have, one given twice, and one that would be ignored (a retry delay
// with one try), naming the option and what is accepted.
func ParsePeerOptions(lock string, specs []string) (PeerOptions, error) {
	o := DefaultPeerOptions(lock)
	known := optionsOf(lock)
	if known == nil {
		if len(specs) > 0 {
			return o, fmt.Errorf("%q: lock %q takes no peer options; they tune the peer-library locks %s and %s", specs[0], lock, LockRedsync, LockRedislock)
		}
		return o, nil
	}
	var seen []string
	for _, spec := range specs {
		key, value, hasValue := strings.Cut(spec, "=")
		key = strings.TrimSpace(key)
		i := slices.IndexFunc(known, func(p peerOption) bool { return p.key == key })
		switch {
		case i < 0:
			why := misplaced(lock, key)
			if why == "" {
				why = "unknown"
			}
			return o, fmt.Errorf("%q: %s; %s takes %s", spec, why, lock, PeerOptionsHelp(lock))
		case slices.Contains(seen, key):
			return o, fmt.Errorf("%q: %s given twice; give each option once", spec, key)
		case known[i].value != "" && !hasValue:
			return o, fmt.Errorf("%q: want %s=%s", spec, key, known[i].value)
		}
		seen = append(seen, key)
		if err := known[i].set(&o, value); err != nil {
			return o, fmt.Errorf("%q: %v", spec, err)
		}
	}
	return o, o.check(lock)
}

// check refuses settings that are accepted one by one but not together.
func (o PeerOptions) check(lock string) error {
	switch {
	case o.RetryDelay > 0 && o.Tries < 2:
		return fmt.Errorf("retry-delay=%v is only waited between tries, and there is one; give tries=N with N > 1 too", o.RetryDelay)
	case lock == LockRedislock && o.Tries > 1 && o.RetryDelay == 0:
		return fmt.Errorf("tries=%d: redislock has no default delay between tries; give retry-delay=DURATION too", o.Tries)
	}
	return nil
}

func parseTries(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxPeerTries {
		return 0, fmt.Errorf("want a whole number of tries from 1 to %d", maxPeerTries)
	}
	return n, nil
}

func parseRetryDelay(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 || d > maxRetryDelay {
		return 0, fmt.Errorf("want a duration above 0 and at most %v, e.g. 10ms", maxRetryDelay)
	}
	return d, nil
}

// parseFactor reads a share of the expiry in [lo, 1), or (lo, 1] when
// zero is not allowed.
func parseFactor(v string, lo float64, zeroOK bool, want string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	bad := err != nil || math.IsNaN(f) || f < lo || f > 1 || (zeroOK && f == 1) || (!zeroOK && f == 0)
	if bad {
		return 0, fmt.Errorf("want %s", want)
	}
	return f, nil
}

// parseSwitch reads a switch given bare (KEY, value "") or as KEY=true|false.
func parseSwitch(v string) (bool, error) {
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("a switch: give it bare, or =true / =false")
	}
	return b, nil
}

// Settings renders the options lock uses, by the names --peer-option takes.
func (o PeerOptions) Settings(lock string) map[string]string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	s := map[string]string{"tries": strconv.Itoa(o.Tries)}
	switch {
	case o.RetryDelay > 0:
		s["retry-delay"] = o.RetryDelay.String()
	case lock == LockRedsync && o.Tries > 1:
		s["retry-delay"] = redsyncDefaultRetryDelay
	}
	switch lock {
	case LockRedsync:
		s["drift-factor"], s["timeout-factor"] = f(o.DriftFactor), f(o.TimeoutFactor)
		s["fail-fast"], s["set-nx-on-extend"], s["shuffle-pools"] = strconv.FormatBool(o.FailFast), strconv.FormatBool(o.SetNXOnExtend), strconv.FormatBool(o.ShufflePools)
	case LockRedislock:
		s["metadata"] = o.Metadata
	}
	return s
}

// libraryDefaults are the library's own defaults for the settings Settings
// lists, so a result shows where a run departs from them.
func libraryDefaults(lock string) map[string]string {
	switch lock {
	case LockRedsync:
		return map[string]string{"tries": strconv.Itoa(redsyncDefaultTries), "retry-delay": redsyncDefaultRetryDelay,
			"drift-factor": "0.01", "timeout-factor": "0.05", "fail-fast": "false", "set-nx-on-extend": "false", "shuffle-pools": "false"}
	case LockRedislock:
		return map[string]string{"tries": "1 (NoRetry)", "metadata": ""}
	}
	return nil
}

// Specs renders the options back as --peer-option values that parse to o.
func (o PeerOptions) Specs(lock string) []string {
	var out []string
	d := DefaultPeerOptions(lock)
	if o.Tries != d.Tries {
		out = append(out, "tries="+strconv.Itoa(o.Tries))
	}
	if o.RetryDelay != 0 {
		out = append(out, "retry-delay="+o.RetryDelay.String())
	}
	if o.DriftFactor != d.DriftFactor {
		out = append(out, "drift-factor="+strconv.FormatFloat(o.DriftFactor, 'g', -1, 64))
	}
	if o.TimeoutFactor != d.TimeoutFactor {
		out = append(out, "timeout-factor="+strconv.FormatFloat(o.TimeoutFactor, 'g', -1, 64))
	}
	for _, sw := range []struct {
		on  bool
		key string
	}{{o.FailFast, "fail-fast"}, {o.SetNXOnExtend, "set-nx-on-extend"}, {o.ShufflePools, "shuffle-pools"}} {
		if sw.on {
			out = append(out, sw.key)
		}
	}
	if o.Metadata != "" {
		out = append(out, "metadata="+o.Metadata)
	}
	return out
}
