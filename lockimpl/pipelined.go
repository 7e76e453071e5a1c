package lockimpl

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/lockimpl/clock"
	"github.com/redis/go-redis/v9"
)

// Pipelined is the single-instance lock (or the fenced one) with its
// commands sent through a Pipe: the same commands, scripts and outcomes as
// Single, batched with other workers' commands on a few connections.
type Pipelined struct {
	pipe    *Pipe
	scripts scripts
	fenced  bool
	tokens  tokenSource
	ttls    msTexts
}

// NewPipelined returns the single lock, or with fenced the fenced one, over
// a pipe of its own to the server c talks to. Close closes the pipe.
func NewPipelined(c *redis.Client, fenced bool, opts PipeOptions) *Pipelined {
	return &Pipelined{pipe: NewPipe(c, opts), scripts: newScripts(), fenced: fenced}
}

// Info describes the lock: the same lock as Single's, by the same name.
func (l *Pipelined) Info() Info {
	if l.fenced {
		return Info{Name: LockFenced, Fencing: true, Nodes: 1}
	}
	return Info{Name: LockSingle, Nodes: 1}
}

// Close closes the lock's pipe.
func (l *Pipelined) Close() error { return l.pipe.Close() }

// Acquire makes one attempt at key. The lease starts when its batch was
// written (one clock read a batch, not one a caller): before the server
// set the key, so its validity is never overstated.
func (l *Pipelined) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	token := l.tokens.token()
	if l.fenced {
		cmd := pipeScript(l.scripts.fencedAcquire, fencedAcquireSrc, []string{key, FenceKey(key)}, token, l.ttls.text(ttl))
		rep, sent, err := l.pipe.doSent(ctx, cmd)
		switch {
		case err != nil:
			return Lease{}, Failed, fmt.Errorf("fenced acquire %s: %w", key, err)
		case rep.n == 0:
			return Lease{}, Contended, nil
		}
		return Lease{Key: key, Token: token, Start: clock.Time(sent), Validity: ttl, Fence: rep.n}, OK, nil
	}
	rep, sent, err := l.pipe.doSent(ctx, pipeSetNX(key, token, l.ttls.text(ttl)))
	switch {
	case err != nil:
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", key, err)
	case rep.isNil:
		return Lease{}, Contended, nil
	}
	return Lease{Key: key, Token: token, Start: clock.Time(sent), Validity: ttl}, OK, nil
}

// Renew extends the lease while the caller owns it; the new lease starts
// when the renewal's batch was written.
func (l *Pipelined) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	rep, sent, err := l.pipe.doSent(ctx, pipeScript(l.scripts.renew, renewSrc, []string{lease.Key}, lease.Token, l.ttls.text(ttl)))
	if err != nil {
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	out := scriptOutcome(rep.n)
	if out == OK {
		lease.Start, lease.Validity = clock.Time(sent), ttl
	}
	return out, nil
}

// Release deletes the key while the caller owns it.
func (l *Pipelined) Release(ctx context.Context, lease Lease) (Outcome, error) {
	rep, err := l.pipe.do(ctx, pipeScript(l.scripts.release, releaseSrc, []string{lease.Key}, lease.Token))
	if err != nil {
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	}
	return scriptOutcome(rep.n), nil
}

// msTexts turns durations into whole milliseconds as text, as PX and the
// scripts take them, keeping the last one made: a run uses one TTL, so its
// commands need no new string for it. Safe for concurrent use.
type msTexts struct{ last atomic.Pointer[msText] }

// msText is one duration's text in milliseconds.
type msText struct {
	d    time.Duration
	text string
}

func (m *msTexts) text(d time.Duration) string {
	if t := m.last.Load(); t != nil && t.d == d {
		return t.text
	}
	t := &msText{d: d, text: strconv.FormatInt(d.Milliseconds(), 10)}
	m.last.Store(t)
	return t.text
}
