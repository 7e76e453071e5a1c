package plan

import "github.com/lockbench/lockbench/lockimpl"

// armers are the arm functions by backend (compose.KindInfo.Backend), one
// line per backend: its arm function, in a file of its own (redis.go,
// etcd.go, postgres.go), reaches the started servers and builds the lock
// over them. TestEveryBackendIsArmed holds it to compose's backends.
func armers() map[string]armFunc {
	return map[string]armFunc{
		lockimpl.BackendRedis:    armRedis,
		lockimpl.BackendEtcd:     armEtcd,
		lockimpl.BackendPostgres: armPostgres,
	}
}
