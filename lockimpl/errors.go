package lockimpl

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// causeOf is the Cause of an error in err's chain that has one (a network
// error wrapped so that go-redis's cluster client does not retry it), or nil.
func causeOf(err error) error {
	var c interface{ Cause() error }
	if errors.As(err, &c) {
		return c.Cause()
	}
	return nil
}

func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// classifyRedisError turns a server error reply into its leading word
// (READONLY, LOADING, NOSCRIPT...) and connection failures into short kinds.
func classifyRedisError(err error) string {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		if i := strings.IndexByte(msg, ' '); i > 0 {
			msg = msg[:i]
		}
		return strings.ToLower(msg)
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.Is(err, syscall.ECONNRESET):
		return "conn_reset"
	case errors.Is(err, redis.ErrClosed):
		return "client_closed"
	}
	return "other"
}

// maybeDelivered reports whether a command that failed with err may still
// have reached the server and be carried out: it was sent, but no answer came
// back (a timeout, a connection cut mid-reply). An error reply, a refused or
// failed dial, or an exhausted connection pool mean it never ran.
func maybeDelivered(err error) bool {
	var rerr redis.Error
	var op *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &rerr):
		return false
	case errors.As(err, &op) && op.Op == "dial":
		return false
	case isConnRefused(err), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed):
		return false
	}
	return true
}
