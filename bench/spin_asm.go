//go:build amd64 || arm64

package bench

// spinPreemptible says whether spinUntil can be preempted: in assembly it
// cannot (an assembly function has no safe point for the Go scheduler's
// signal, and this one makes no call).
const spinPreemptible = false

// ticks reads the CPU's constant-rate counter (amd64: the TSC; arm64: the
// virtual counter): a clock that needs no call, so a loop in assembly can
// read it.
func ticks() uint64

// spinUntil loops in assembly, on the CPU it runs on, until ticks reaches
// deadline: the Go scheduler cannot preempt it, so the P it holds runs
// nothing else meanwhile.
func spinUntil(deadline uint64)
