package lockimpl

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// SentCounter counts what a lock sends its servers, measured where it is
// sent: as a go-redis hook on the lock's clients (AddHook), and by a lock
// that writes commands by hand (Redlock's raw fan-out) itself. A run reads
// it around its window, so the server cost says how many round trips an
// acquisition took beside the commands the servers ran, which count the
// calls a script makes too.
type SentCounter struct {
	roundTrips, commands atomic.Int64
	// byName maps a lower-case command name to its *atomic.Int64 count.
	byName sync.Map
}

// SentCounts are a SentCounter's readings.
type SentCounts struct {
	// RoundTrips is the request/reply exchanges: one per command, one per
	// pipeline however many commands it carried.
	RoundTrips int64
	// Commands is the commands sent in them.
	Commands int64
	// ByCommand is Commands by lower-case command name.
	ByCommand map[string]int64
}

// NewSentCounter returns a counter at zero.
func NewSentCounter() *SentCounter { return &SentCounter{} }

// command counts one command sent, by name.
func (s *SentCounter) command(name string) { s.commandsNamed(name, 1) }

// byNameCounter is the count of commands named name, in lower case.
func (s *SentCounter) byNameCounter(name string) *atomic.Int64 {
	// ToLower returns a lower-case name as it is, without allocating.
	name = strings.ToLower(name)
	c, ok := s.byName.Load(name)
	if !ok {
		c, _ = s.byName.LoadOrStore(name, new(atomic.Int64))
	}
	return c.(*atomic.Int64)
}

// sentAlone counts one command sent on its own: one round trip. A nil
// counter counts nothing, so a lock built without one needs no checks.
func (s *SentCounter) sentAlone(name string) {
	if s == nil {
		return
	}
	s.roundTrips.Add(1)
	s.command(name)
}

// sentEach counts one command of the given name sent to each of n servers
// on its own: n round trips, counted at once, since a fan-out sends the same
// command to every master.
func (s *SentCounter) sentEach(name string, n int) {
	if s == nil || n == 0 {
		return
	}
	s.roundTrips.Add(int64(n))
	s.commandsNamed(name, int64(n))
}

// commandsNamed counts n commands of the given name, sent in round trips
// counted apart (a batch counts its commands by name at once).
func (s *SentCounter) commandsNamed(name string, n int64) {
	if n == 0 {
		return
	}
	s.commands.Add(n)
	s.byNameCounter(name).Add(n)
}

// roundTrip counts one request/reply exchange, whose commands are counted
// one by one (a batch a pipe wrote).
func (s *SentCounter) roundTrip() {
	if s != nil {
		s.roundTrips.Add(1)
	}
}

// DialHook passes dials through: a connection's set-up is not the lock's.
func (s *SentCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts each command a client sends on its own.
func (s *SentCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.sentAlone(cmd.Name())
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts a pipeline as one round trip of its commands.
func (s *SentCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.roundTrips.Add(1)
		for _, c := range cmds {
			s.command(c.Name())
		}
		return next(ctx, cmds)
	}
}

// Read returns the counts so far; nil reads as zero.
func (s *SentCounter) Read() SentCounts {
	if s == nil {
		return SentCounts{}
	}
	out := SentCounts{RoundTrips: s.roundTrips.Load(), Commands: s.commands.Load(), ByCommand: map[string]int64{}}
	s.byName.Range(func(k, v any) bool {
		out.ByCommand[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// Since is what was sent between base and s.
func (s SentCounts) Since(base SentCounts) SentCounts {
	out := SentCounts{RoundTrips: s.RoundTrips - base.RoundTrips, Commands: s.Commands - base.Commands, ByCommand: map[string]int64{}}
	for name, n := range s.ByCommand {
		if d := n - base.ByCommand[name]; d > 0 {
			out.ByCommand[name] = d
		}
	}
	return out
}
