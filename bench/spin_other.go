//go:build !amd64 && !arm64

package bench

import "time"

// spinPreemptible says whether spinUntil can be preempted: in Go it can,
// so on these architectures a burst delays a renewer by a scheduler slice,
// and starves nothing.
const spinPreemptible = true

// ticks is the clock in nanoseconds.
func ticks() uint64 { return uint64(time.Now().UnixNano()) }

// spinUntil loops in Go until ticks reaches deadline; the scheduler
// preempts it like any Go loop.
func spinUntil(deadline uint64) {
	for ticks() < deadline {
	}
}
