package lockimpl

import (
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"
	"github.com/valkey-io/valkey-go/valkeylock"
)

// LockValkeylock is github.com/valkey-io/valkey-go/valkeylock.
const LockValkeylock = "valkeylock"

// ValkeylockModule is the module the valkeylock adapter drives.
const ValkeylockModule = "github.com/valkey-io/valkey-go"

// valkeylockSpec drives valkeylock with its own defaults but the
// validity (--ttl) and a key prefix under the run's: a majority of 2 of 3
// keys, extended every half validity, 20 ms before trying the next key,
// client-side caching to hear of a released key.
func valkeylockSpec() ctxLibrarySpec {
	return ctxLibrarySpec{name: LockValkeylock, module: ValkeylockModule, prefix: "valkeylock", notLocked: valkeylock.ErrNotLocked,
		build: func(server *redis.Options, prefix string, ttl time.Duration) (ctxLibrary, error) {
			return valkeylock.NewLocker(valkeylock.LockerOption{KeyPrefix: prefix, KeyValidity: ttl,
				ClientOption: valkey.ClientOption{InitAddress: []string{server.Addr}, Username: server.Username,
					Password: server.Password, SelectDB: server.DB, TLSConfig: server.TLSConfig}})
		}}
}

var _ ctxLibrary = valkeylock.Locker(nil)
