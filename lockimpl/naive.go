package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Naive is the textbook mistake kept only to measure its hazard: it releases
// with GET then DEL in two round trips, so a lease that expires between them
// deletes the next owner's lock. Never use it to protect anything.
type Naive struct {
	single *Single
	client redis.Cmdable
	gap    time.Duration
}

// NewNaive returns the unsafe GET-then-DEL lock over client.
func NewNaive(client redis.Cmdable) *Naive {
	return &Naive{single: NewSingle(client), client: client}
}

// Info describes the lock, marked unsafe.
func (n *Naive) Info() Info { return Info{Name: LockNaive, Unsafe: true, Nodes: 1} }

// Acquire is the same SET NX PX as the single lock.
func (n *Naive) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	return n.single.Acquire(ctx, key, ttl)
}

// Renew uses the atomic script: the hazard measured is the release's.
func (n *Naive) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	return n.single.Renew(ctx, lease, ttl)
}

// Release checks ownership with GET, then deletes with DEL: two round trips.
func (n *Naive) Release(ctx context.Context, lease Lease) (Outcome, error) {
	v, err := n.client.Get(ctx, lease.Key).Result()
	if errors.Is(err, redis.Nil) {
		return Lost, nil
	}
	if err != nil {
		return Failed, fmt.Errorf("naive release get %s: %w", lease.Key, err)
	}
	if v != lease.Token {
		return Taken, nil
	}
	if n.gap > 0 {
		time.Sleep(n.gap)
	}
	if err := n.client.Del(ctx, lease.Key).Err(); err != nil {
		return Failed, fmt.Errorf("naive release del %s: %w", lease.Key, err)
	}
	return OK, nil
}
