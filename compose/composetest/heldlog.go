package composetest

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// heldLines bounds what a HeldLog keeps: a server down for a whole test
// makes go-redis log a dial failure per attempt, and the first lines say
// what the rest repeat.
const heldLines = 200

// HeldLog is a go-redis logger (redis.SetLogger) that keeps its lines for
// PrintTo instead of printing them as they come.
type HeldLog struct {
	mu      sync.Mutex
	lines   []string
	dropped int
}

// Printf keeps one line.
func (h *HeldLog) Printf(_ context.Context, format string, v ...interface{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lines) == heldLines {
		h.dropped++
		return
	}
	h.lines = append(h.lines, fmt.Sprintf(format, v...))
}

// PrintTo writes the lines kept, headed as go-redis's, and how many more
// there were.
func (h *HeldLog) PrintTo(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lines) == 0 {
		return
	}
	fmt.Fprintf(w, "go-redis logged during the tests:\n")
	for _, l := range h.lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if h.dropped > 0 {
		fmt.Fprintf(w, "  … and %d more lines\n", h.dropped)
	}
}
