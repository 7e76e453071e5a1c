package lockimpl

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// settleItem is one key to delete again on a master, if it still holds token.
type settleItem struct {
	key, token string
	// ready, when not nil, closes once the command the delete must follow
	// (a fail-fast straggler's SET) has answered.
	ready <-chan struct{}
	// notBefore is the earliest the delete may go out.
	notBefore time.Time
	// horizon is when retrying stops: a key left behind lives at most its TTL.
	horizon time.Time
}

// settler deletes keys again on one master, in the background, where a SET
// or a release may have landed late: a master that did not answer in time
// (paused, slow, or with the command held up in the network).
//
// Such a master gets one batch of compare-and-deletes at a time, pipelined
// on one connection: a paused master with hundreds of keys to settle must
// not be sent hundreds of probes, each taking a connection from the pool the
// lock itself needs (which slowed recovery after a pause by a second or
// more). A batch that times out is retried, each try waiting twice as long
// for its answer: a DEL answered late has still run, so a slow master must
// not keep the loop going until the horizon. A paused server carries out
// what was queued in order, so the DEL that finally answers came after the
// SET. Retries stop when the master refuses connections (it is down, and a
// key it had keeps the expiry it was given) or at each item's horizon.
type settler struct {
	r    *Redlock
	node int

	mu      sync.Mutex
	items   []settleItem
	running bool
}

// add queues an item and starts the settler if it is idle.
func (s *settler) add(it settleItem) {
	s.mu.Lock()
	s.items = append(s.items, it)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		s.r.cleanup.Add(1)
		go s.loop()
	}
}

// due takes the items that may go out now and drops those past their
// horizon; wait is how long until the next one may, and done is true when
// nothing is left (the settler then stops).
func (s *settler) due(now time.Time) (batch []settleItem, wait time.Duration, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.items[:0]
	wait = time.Second
	for _, it := range s.items {
		switch {
		case !now.Before(it.horizon):
		case it.ready != nil && !closed(it.ready):
			keep = append(keep, it)
			wait = min(wait, 20*time.Millisecond)
		case now.Before(it.notBefore):
			keep = append(keep, it)
			wait = min(wait, it.notBefore.Sub(now))
		default:
			batch = append(batch, it)
		}
	}
	s.items = keep
	if len(batch) == 0 && len(keep) == 0 {
		s.running = false
		return nil, 0, true
	}
	return batch, wait, false
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (s *settler) loop() {
	defer s.r.cleanup.Done()
	ctx := context.Background()
	answerWait, pause := s.r.releaseTimeout(), 20*time.Millisecond
	for {
		batch, wait, done := s.due(time.Now())
		if done {
			return
		}
		if len(batch) == 0 {
			time.Sleep(wait)
			continue
		}
		retry := s.send(ctx, batch, answerWait)
		if len(retry) == 0 {
			answerWait, pause = s.r.releaseTimeout(), 20*time.Millisecond
			continue
		}
		s.mu.Lock()
		s.items = append(s.items, retry...)
		s.mu.Unlock()
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
		answerWait = min(2*answerWait, 10*time.Second)
	}
}

// send runs the batch's compare-and-deletes in one pipeline and returns the
// items to retry: those whose delete may not have run and may still land.
func (s *settler) send(ctx context.Context, batch []settleItem, wait time.Duration) (retry []settleItem) {
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	cmds := make([]*redis.Cmd, len(batch))
	_, err := s.r.nodes[s.node].Pipelined(rctx, func(p redis.Pipeliner) error {
		for i, it := range batch {
			// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT,
			// and a restarted master has no scripts.
			cmds[i] = s.r.scripts.release.Eval(rctx, p, []string{it.key}, it.token)
		}
		return nil
	})
	if err != nil && !maybeDelivered(err) {
		return nil
	}
	for i, it := range batch {
		if cerr := cmds[i].Err(); cerr != nil && cerr != redis.Nil && maybeDelivered(cerr) {
			retry = append(retry, it)
		}
	}
	return retry
}
