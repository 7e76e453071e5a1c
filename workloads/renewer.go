package workloads

import (
	"fmt"
	"strings"
)

// Renewer says who renews a held lease.
type Renewer uint8

const (
	// RenewInline: the holder renews between the sleeps of its own work,
	// in turn with it (the default): nothing renews while the holder is busy.
	RenewInline Renewer = iota
	// RenewGoroutine: a renewer goroutine per held lease, beside the work,
	// as watchdogs and keep-alive loops do; a renewal that finds the lease
	// lost cancels the work, the holder checks right before its write
	// whether it was told, and stops the renewer (waiting for a renewal in
	// flight) before it releases.
	RenewGoroutine
)

// RenewerHelp lists the accepted values of --renewer.
const RenewerHelp = "inline or goroutine"

// String names the renewer as --renewer takes it.
func (r Renewer) String() string {
	if r == RenewGoroutine {
		return "goroutine"
	}
	return "inline"
}

// ParseRenewer parses --renewer ("" is inline).
func ParseRenewer(spec string) (Renewer, error) {
	switch strings.ToLower(strings.TrimSpace(spec)) {
	case "", "inline":
		return RenewInline, nil
	case "goroutine":
		return RenewGoroutine, nil
	}
	return 0, fmt.Errorf("--renewer %q: unknown; want %s", spec, RenewerHelp)
}
