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
