package workloads

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RenewHelp lists the accepted forms of --renew-every, for help text and errors.
const RenewHelp = "0, off, a duration below --ttl or ttl/N"

// ParseRenewEvery parses --renew-every against the lease TTL and returns the
// renewal interval, 0 meaning no renewal. ttl/N is offered because the sound
// interval depends on the TTL, and users tuning the TTL should not have to
// recompute it; an interval not shorter than the TTL is refused because the
// lease would lapse before the first renewal.
func ParseRenewEvery(spec string, ttl time.Duration) (time.Duration, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("--renew-every %q: %s; want %s", spec, fmt.Sprintf(format, a...), RenewHelp)
	}
	s := strings.TrimSpace(spec)
	if s == "" || s == "0" || strings.EqualFold(s, "off") {
		return 0, nil
	}
	var every time.Duration
	if head, nS, ok := strings.Cut(s, "/"); ok && strings.EqualFold(strings.TrimSpace(head), "ttl") {
		n, err := strconv.Atoi(strings.TrimSpace(nS))
		if err != nil || n < 2 {
			return 0, bad("N must be an integer >= 2")
		}
		if ttl <= 0 {
			return 0, bad("needs a positive --ttl, got %v", ttl)
		}
		every = ttl / time.Duration(n)
		if every == 0 {
			return 0, bad("--ttl %v / %d rounds to zero", ttl, n)
		}
		return every, nil
	}
	every, err := time.ParseDuration(s)
	if err != nil {
		return 0, bad("not a duration")
	}
	if every < 0 {
		return 0, bad("negative")
	}
	if every == 0 {
		return 0, nil
	}
	if every >= ttl {
		return 0, bad("%v is not shorter than --ttl %v", every, ttl)
	}
	return every, nil
}
