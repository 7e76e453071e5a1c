package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestBucketRetryable: a try that got no answer, or JetStream's "not
// ready", is sent again; a server without JetStream, or a refusal of the
// bucket's configuration, fails at once.
func TestBucketRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("create: %w", context.DeadlineExceeded), true},
		{nats.ErrTimeout, true},
		{errors.New("nats: API error: code=503 err_code=10008 description=JetStream system temporarily unavailable"), true},
		{jetstream.ErrJetStreamNotEnabled, false},
		{jetstream.ErrLimitMarkerTTLNotSupported, false},
		{errors.New("nats: API error: code=400 err_code=10052 description=replicas > 1 not supported in non-clustered mode"), false},
	} {
		if got := bucketRetryable(c.err); got != c.want {
			t.Errorf("bucketRetryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestPlacementRefused: JetStream's placement refusal (a peer still
// joining) is told apart from the other refusals, which fail at once.
func TestPlacementRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New("nats: API error: code=400 err_code=10005 description=no suitable peers for placement, peer offline"), true},
		{errors.New("nats: API error: code=400 err_code=10052 description=replicas > 1 not supported in non-clustered mode"), false},
		{jetstream.ErrJetStreamNotEnabled, false},
	} {
		if got := placementRefused(c.err); got != c.want {
			t.Errorf("placementRefused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
