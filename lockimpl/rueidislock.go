package lockimpl

import (
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

// LockRueidislock is github.com/redis/rueidis/rueidislock.
const LockRueidislock = "rueidislock"

// RueidislockModule is the module the rueidislock adapter drives.
const RueidislockModule = "github.com/redis/rueidis"

// rueidislockSpec drives rueidislock with its own defaults but the
// validity (--ttl) and a key prefix under the run's: a majority of 2 of 3
// keys, extended every half validity, 20 ms before trying the next key,
// client-side caching to hear of a released key.
func rueidislockSpec() ctxLibrarySpec {
	return ctxLibrarySpec{name: LockRueidislock, module: RueidislockModule, prefix: "rueidislock", notLocked: rueidislock.ErrNotLocked,
		build: func(server *redis.Options, prefix string, ttl time.Duration) (ctxLibrary, error) {
			return rueidislock.NewLocker(rueidislock.LockerOption{KeyPrefix: prefix, KeyValidity: ttl,
				ClientOption: rueidis.ClientOption{InitAddress: []string{server.Addr}, Username: server.Username,
					Password: server.Password, SelectDB: server.DB, TLSConfig: server.TLSConfig}})
		}}
}

var _ ctxLibrary = rueidislock.Locker(nil)
