package compose

import (
	"context"
	"testing"
)

// TestRequestsNoTopologyCanMeetAreInputErrors: what is wrong with the request
// itself is bad input (exit code 2), found before any server is reached.
func TestRequestsNoTopologyCanMeetAreInputErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		spec Spec
		opts UpOptions
	}{
		{"fewer URLs than masters", Spec{Kind: KindRedlock, Masters: 3}, UpOptions{URLs: []string{"redis://127.0.0.1:1"}}},
		{"URLs for replicated", Spec{Kind: KindReplicated}, UpOptions{URLs: []string{"redis://127.0.0.1:1"}}},
		{"a malformed URL", Spec{Kind: KindSingle}, UpOptions{URLs: []string{"redis://127.0.0.1:99999"}}},
		{"a cluster on docker", Spec{Kind: KindCluster, Masters: 3, Replicas: 1}, UpOptions{Provider: ProviderDocker}},
		{"fewer etcd URLs than members", Spec{Kind: KindEtcd, Masters: 3}, UpOptions{URLs: []string{"http://127.0.0.1:1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			top, err := Up(context.Background(), c.spec, c.opts)
			if err == nil {
				top.Close()
				t.Fatal("Up succeeded")
			}
			if !IsInputError(err) {
				t.Errorf("Up: %v; want an input error", err)
			}
		})
	}
	if IsInputError(ErrNoRedisServer) {
		t.Error("a missing redis-server is a runtime failure, not bad input")
	}
}
