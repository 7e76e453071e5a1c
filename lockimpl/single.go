package lockimpl

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/release.lua
var releaseSrc string

//go:embed scripts/renew.lua
var renewSrc string

//go:embed scripts/fenced_acquire.lua
var fencedAcquireSrc string

// ReleaseScript is the compare-and-delete script's source, for tools that
// release by hand as the lock does (redis-benchmark's EVALSHA half, set
// beside the generator in issue 39's benchmarks).
func ReleaseScript() string { return releaseSrc }

// scripts holds the compiled scripts one locker uses; go-redis runs them by
// EVALSHA and falls back to EVAL on NOSCRIPT (after a restart, say).
type scripts struct {
	release, renew, fencedAcquire *redis.Script
}

func newScripts() scripts {
	return scripts{
		release:       redis.NewScript(releaseSrc),
		renew:         redis.NewScript(renewSrc),
		fencedAcquire: redis.NewScript(fencedAcquireSrc),
	}
}

// runOwned runs a compare-and-act script (release, renew) on key and maps
// its 1 / 0 / -1 reply to OK / Taken / Lost; a failure to run it is Failed.
func runOwned(ctx context.Context, script *redis.Script, c redis.Cmdable, key string, args ...any) (Outcome, error) {
	n, err := script.Run(ctx, c, []string{key}, args...).Int64()
	if err != nil {
		return Failed, err
	}
	return scriptOutcome(n), nil
}

// scriptOutcome maps the scripts' 1 / 0 / -1 replies to outcomes.
func scriptOutcome(n int64) Outcome {
	switch n {
	case 1:
		return OK
	case 0:
		return Taken
	}
	return Lost
}

// Single is the single-instance lease lock: SET NX PX to acquire, Lua
// compare-and-delete to release, compare-and-pexpire to renew.
type Single struct {
	client  redis.Cmdable
	scripts scripts
	fenced  bool
	wait    WaitOptions
	// raw sends the commands by hand over connections of the lock's own
	// (see rawOne); nil sends everything through client.
	raw *rawOne
}

// WaitOptions make an acquisition wait for replicas: after a successful SET
// the lock runs WAIT on the same connection, and fewer acks than Replicas
// within Timeout count as not acquired (the key is released again), so a
// failover cannot promote a replica that never saw the lock.
type WaitOptions struct {
	// Replicas is how many replicas must acknowledge; 0 turns WAIT off.
	Replicas int
	// Timeout bounds the WAIT.
	Timeout time.Duration
}

// ErrUnreplicated is returned when WAIT saw fewer replica acks than asked.
var ErrUnreplicated = errors.New("acquired but not replicated")

// NewSingle returns the single-instance lock over client.
func NewSingle(client redis.Cmdable) *Single {
	return &Single{client: client, scripts: newScripts()}
}

// NewFenced returns the single-instance lock whose acquire also increments a
// per-key counter in the same script and hands the value out as fencing token.
func NewFenced(client redis.Cmdable) *Single {
	return &Single{client: client, scripts: newScripts(), fenced: true}
}

// Info describes the lock.
func (s *Single) Info() Info {
	if s.fenced {
		return Info{Name: LockFenced, Fencing: true, Nodes: 1}
	}
	return Info{Name: LockSingle, Nodes: 1}
}

// Close closes the connections the lock keeps of its own (the raw path's);
// the client it was given stays open.
func (s *Single) Close() error {
	s.raw.close()
	return nil
}

// FenceKey is the key holding the fencing counter of a lock key. On a Redis
// Cluster the lock key must carry a hash tag (prefix{17}, see bench's
// Options.HashTag) so that its counter, which keeps the tag, lives in the
// same slot and the fencing script may touch both.
func FenceKey(key string) string { return key + fenceSuffix }

// fenceSuffix turns a lock key into its fencing counter's key.
const fenceSuffix = ":fence"

// Acquire makes one attempt at key. The rarer ways (fenced, replicated)
// and the error's wrapping are calls of their own, so that the frame every
// waiting worker holds is the plain SET NX's alone.
func (s *Single) Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, Outcome, error) {
	lease := Lease{Key: key, Token: NewToken(), Start: time.Now(), Validity: ttl}
	if s.wait.Replicas > 0 || s.fenced {
		if out, err := s.acquireScripted(ctx, &lease, ttl); out != OK {
			return Lease{}, out, err
		}
		return lease, OK, nil
	}
	ok, err := s.setNX(ctx, key, lease.Token, ttl)
	if err != nil {
		return Lease{}, Failed, wrapAcquireErr(key, err)
	}
	if !ok {
		return Lease{}, Contended, nil
	}
	return lease, OK, nil
}

// acquireScripted makes one attempt the rarer ways, waiting for replicas
// or by the fencing script (which sets lease's fencing token).
//
//go:noinline
func (s *Single) acquireScripted(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	if s.wait.Replicas > 0 {
		granted, out, err := s.acquireReplicated(ctx, *lease, ttl)
		*lease = granted
		return out, err
	}
	fence, err := s.scripts.fencedAcquire.Run(ctx, s.client, []string{lease.Key, FenceKey(lease.Key)}, lease.Token, ttl.Milliseconds()).Int64()
	if err != nil {
		return Failed, fmt.Errorf("fenced acquire %s: %w", lease.Key, err)
	}
	if fence == 0 {
		return Contended, nil
	}
	lease.Fence = fence
	return OK, nil
}

// wrapAcquireErr is a failed acquisition's error, naming the key.
//
//go:noinline
func wrapAcquireErr(key string, err error) error {
	return fmt.Errorf("acquire %s: %w", key, err)
}

// setNX is SET key token NX PX ttl: by hand where the raw path has an idle
// connection, through the client otherwise.
func (s *Single) setNX(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	cmd := setNXCommand(key, token, ttl)
	if rep, err, sent := s.raw.do(ctx, &cmd); sent {
		return err == nil && !rep.isNil, err
	}
	return s.clientSetNX(ctx, key, token, ttl)
}

// clientSetNX is SET NX PX through the go-redis client, in a frame of its
// own: go-redis's command object stays off the raw path's stack.
//
//go:noinline
func (s *Single) clientSetNX(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	defer s.raw.leftClient()
	return s.client.SetNX(ctx, key, token, ttl).Result()
}

// owned runs a compare-and-act script (release, renew) as runOwned does: by
// hand where the raw path has an idle connection, through the client
// otherwise.
func (s *Single) owned(ctx context.Context, script *redis.Script, src, key, token string, ttl time.Duration) (Outcome, error) {
	// Built in place, not by scriptCommand: one command on this frame, not
	// a second as its result.
	cmd := rawCommand{op: rawScript, src: src, n: 5, args: [6]string{"EVALSHA", script.Hash(), "1", key, token}}
	if ttl > 0 {
		cmd.args[5], cmd.n = strconv.FormatInt(ttl.Milliseconds(), 10), 6
	}
	if rep, err, sent := s.raw.do(ctx, &cmd); sent {
		if err != nil {
			return Failed, err
		}
		return scriptOutcome(rep.n), nil
	}
	return s.clientOwned(ctx, script, key, token, ttl)
}

// clientOwned is owned's script through the go-redis client, in a frame of
// its own as clientSetNX is.
//
//go:noinline
func (s *Single) clientOwned(ctx context.Context, script *redis.Script, key, token string, ttl time.Duration) (Outcome, error) {
	defer s.raw.leftClient()
	if ttl > 0 {
		return runOwned(ctx, script, s.client, key, token, ttl.Milliseconds())
	}
	return runOwned(ctx, script, s.client, key, token)
}

// errSuffix is "; what: err", or "" for no error.
func errSuffix(what string, err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("; %s: %v", what, err)
}

// acquireReplicated sends SET NX PX (fenced: the fencing script) and WAIT in
// one pipeline, so WAIT runs on the connection that wrote the key and counts
// acks for that write.
//
// On a Redis Cluster the pipeline goes to the master of the key's slot
// itself (a cluster pipeline would send the keyless WAIT to any node); a
// MOVED reply then fails the attempt and has the client reread the slot map.
func (s *Single) acquireReplicated(ctx context.Context, lease Lease, ttl time.Duration) (Lease, Outcome, error) {
	var set *redis.BoolCmd
	var fence, wait *redis.Cmd
	c := s.client
	cc, isCluster := c.(*redis.ClusterClient)
	if isCluster {
		master, err := cc.MasterForKey(ctx, lease.Key)
		if err != nil {
			return Lease{}, Failed, fmt.Errorf("acquire %s: master of its slot: %w", lease.Key, err)
		}
		c = master
	}
	// Pipelined's error is the first command's own, read from set and wait below.
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		if s.fenced {
			// EVAL, not EVALSHA: a pipeline cannot retry a NOSCRIPT.
			fence = s.scripts.fencedAcquire.Eval(ctx, p, []string{lease.Key, FenceKey(lease.Key)}, lease.Token, ttl.Milliseconds())
		} else {
			set = p.SetNX(ctx, lease.Key, lease.Token, ttl)
		}
		wait = p.Do(ctx, "WAIT", s.wait.Replicas, s.wait.Timeout.Milliseconds())
		return nil
	})
	granted, err := s.replicatedGrant(set, fence, &lease)
	if err != nil {
		if isCluster && isMoved(err) {
			cc.ReloadState(ctx)
		}
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w", lease.Key, err)
	}
	if !granted {
		return Lease{}, Contended, nil
	}
	acks, werr := wait.Int64()
	if werr != nil || acks < int64(s.wait.Replicas) {
		// A lock only the primary knows of is one a failover forgets: give it
		// back, and say if that failed too, since the key then blocks for a TTL.
		_, rerr := s.Release(context.WithoutCancel(ctx), lease)
		return Lease{}, Failed, fmt.Errorf("acquire %s: %w (%d of %d replica acks)%s%s", lease.Key, ErrUnreplicated, acks, s.wait.Replicas,
			errSuffix("WAIT", werr), errSuffix("give back", rerr))
	}
	return lease, OK, nil
}

// replicatedGrant reads the pipelined acquisition's answer: SET NX's, or the
// fencing script's token (0: held by another), which it sets on lease.
func (s *Single) replicatedGrant(set *redis.BoolCmd, fence *redis.Cmd, lease *Lease) (bool, error) {
	if !s.fenced {
		return set.Val(), set.Err()
	}
	token, err := fence.Int64()
	if err != nil || token == 0 {
		return false, err
	}
	lease.Fence = token
	return true, nil
}

// isMoved reports a cluster redirect reply (MOVED or ASK).
func isMoved(err error) bool {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	return moved || ask
}

// Renew extends the lease while the caller owns it.
func (s *Single) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (Outcome, error) {
	start := time.Now()
	out, err := s.owned(ctx, s.scripts.renew, renewSrc, lease.Key, lease.Token, ttl)
	if err != nil {
		return Failed, fmt.Errorf("renew %s: %w", lease.Key, err)
	}
	if out == OK {
		lease.Start, lease.Validity = start, ttl
	}
	return out, nil
}

// Release deletes the key while the caller owns it.
func (s *Single) Release(ctx context.Context, lease Lease) (Outcome, error) {
	out, err := s.owned(ctx, s.scripts.release, releaseSrc, lease.Key, lease.Token, 0)
	if err != nil {
		return Failed, fmt.Errorf("release %s: %w", lease.Key, err)
	}
	return out, nil
}
