package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestTallyRefused(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		n, ok, taken, lost, fails int
		refused                   bool
	}{
		{name: "another owner on all five", n: 5, taken: 5, refused: true},
		{name: "another owner on three of five", n: 5, ok: 2, taken: 3, refused: true},
		{name: "split two, two, one", n: 5, ok: 1, taken: 4, refused: true},
		{name: "two down and one taken: the failures decided it", n: 5, ok: 2, taken: 1, fails: 2},
		{name: "three down", n: 5, ok: 2, fails: 3},
		{name: "key gone on a majority", n: 3, ok: 1, lost: 2, refused: true},
		{name: "key gone on one, one down", n: 3, ok: 1, lost: 1, fails: 1},
		{name: "one master, taken", n: 1, taken: 1, refused: true},
		{name: "one master, down", n: 1, fails: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := tally{n: tc.n, quorum: Quorum(tc.n), ok: tc.ok, taken: tc.taken, lost: tc.lost, fails: tc.fails}
			if got := tl.refused(); got != tc.refused {
				t.Errorf("refused = %v, want %v", got, tc.refused)
			}
		})
	}
}

// replyError stands for an error reply from the server.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

func TestMaybeDelivered(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "no error", err: nil, want: false},
		{name: "error reply", err: fmt.Errorf("master 1: %w", replyError("READONLY You can't write against a read only replica.")), want: false},
		{name: "dial refused", err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, want: false},
		{name: "dial timed out", err: &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, want: false},
		{name: "refused, wrapped", err: fmt.Errorf("x: %w", syscall.ECONNREFUSED), want: false},
		{name: "pool exhausted", err: redis.ErrPoolTimeout, want: false},
		{name: "client closed", err: redis.ErrClosed, want: false},
		{name: "read timed out", err: timeout, want: true},
		{name: "deadline while waiting for the reply", err: context.DeadlineExceeded, want: true},
		{name: "connection cut mid-reply", err: io.EOF, want: true},
		{name: "reset", err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, want: true},
		{name: "unknown", err: errors.New("something else"), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := maybeDelivered(tc.err); got != tc.want {
				t.Errorf("maybeDelivered(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
